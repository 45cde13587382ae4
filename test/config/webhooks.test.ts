// The config's `webhooks` section: every bad entry is one line naming the file, the path and the problem, and the
// server does not start.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../src/config/load.js';
import { resolveWebhooks } from '../../src/config/webhooks.js';
import { createServer } from '../../src/server.js';
import { tempDir } from '../support/harness.js';
import { newWebhookSecret } from '../webhooks/receiver.js';

const { dir, cleanup } = tempDir();
afterAll(cleanup);
afterEach(() => {
  delete process.env.TOOLGATE_TEST_HOOK_SECRET;
});

const SECRET = newWebhookSecret();
const base = {
  models: { main: { provider: 'scripted' } },
  toolSources: { demo: { type: 'builtin' } },
  agents: [{ id: 'editor', name: 'Editor', model: 'main', tools: ['demo:*'] }],
};
const hook = (changes: Record<string, unknown> = {}) => ({
  url: 'https://hooks.example.com/toolgate',
  events: ['turn.completed'],
  secret: SECRET,
  ...changes,
});

function errorOf(webhooks: unknown[]): string {
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ ...base, webhooks }));
  try {
    loadConfigFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(file, 'config.json');
  }
  throw new Error('the config loaded without an error');
}

describe('config: webhooks', () => {
  it('accepts endpoints with literal or env: secrets, and applies the defaults', () => {
    const file = join(dir, 'ok.json');
    writeFileSync(
      file,
      JSON.stringify({
        ...base,
        webhooks: [
          hook(),
          hook({ url: 'http://127.0.0.1:8080/x', secret: 'env:TOOLGATE_TEST_HOOK_SECRET', maxAttempts: 3 }),
        ],
      }),
    );
    const { config } = loadConfigFile(file);
    process.env.TOOLGATE_TEST_HOOK_SECRET = SECRET;
    expect(resolveWebhooks(config.webhooks, file)).toEqual([
      {
        url: 'https://hooks.example.com/toolgate',
        events: ['turn.completed'],
        secret: SECRET,
        maxAttempts: 12,
        timeoutMs: 10_000,
        initialBackoffMs: 5000,
        maxBackoffMs: 3_600_000,
      },
      expect.objectContaining({ url: 'http://127.0.0.1:8080/x', secret: SECRET, maxAttempts: 3 }),
    ]);
  });

  it('accepts every event, elicitation.escalated among them', () => {
    const file = join(dir, 'every-event.json');
    const events = [
      'elicitation.requested',
      'elicitation.resolved',
      'elicitation.expired',
      'elicitation.escalated',
      'turn.completed',
      'turn.failed',
    ];
    writeFileSync(file, JSON.stringify({ ...base, webhooks: [hook({ events })] }));
    expect(loadConfigFile(file).config.webhooks?.[0]?.events).toEqual(events);
  });

  it.each([
    [[hook({ events: [] })], 'config.json: webhooks[0].events: Too small: expected array to have >=1 items'],
    [[hook({ events: ['turn.started'] })], 'config.json: webhooks[0].events[0]: Invalid option: expected one of'],
    [[hook({ url: 'ftp://example.com/x' })], 'config.json: webhooks[0].url: Invalid URL'],
    [[hook({ secret: 'hunter2' })], 'config.json: webhooks[0].secret: expected a Standard Webhooks secret'],
    [[hook({ secret: 'whsec_c2hvcnQ=' })], 'config.json: webhooks[0].secret: expected a Standard Webhooks secret'],
    [[hook({ maxAttempts: 0 })], 'config.json: webhooks[0].maxAttempts: Too small'],
    [
      [hook({ retries: 3 })],
      'config.json: webhooks[0]: unknown key "retries" (allowed here: url, events, secret, maxAttempts, timeoutMs, initialBackoffSeconds, maxBackoffSeconds)',
    ],
    [
      [hook(), hook({ events: ['turn.failed'] })],
      'config.json: webhooks[1].url: another entry has the same URL "https://hooks.example.com/toolgate"; list its events in one entry',
    ],
  ])('refuses %j in one line', (webhooks, message) => {
    const error = errorOf(webhooks);
    expect(error).toContain(message);
    expect(error.split('\n')).toHaveLength(1);
  });

  it('an env: secret that is missing or malformed stops the server before anything opens', async () => {
    const config = { ...base, webhooks: [hook({ secret: 'env:TOOLGATE_TEST_HOOK_SECRET' })] } as never;
    await expect(createServer({ config, configFile: 'config.json' })).rejects.toThrow(
      new ConfigError('config.json: webhooks[0].secret: the environment variable TOOLGATE_TEST_HOOK_SECRET is not set'),
    );
    process.env.TOOLGATE_TEST_HOOK_SECRET = 'not-a-secret';
    await expect(createServer({ config, configFile: 'config.json' })).rejects.toThrow(
      'config.json: webhooks[0].secret: the environment variable TOOLGATE_TEST_HOOK_SECRET does not hold a Standard Webhooks secret',
    );
  });

  it('a malformed literal secret given in code: refused without the secret in the message', async () => {
    const config = { ...base, webhooks: [hook({ secret: 'whsec_TOPSECRETbutTooShort' })] } as never;
    const error = await createServer({ config, configFile: 'config.json' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /^config\.json: webhooks\[0\]\.secret: the secret is not a Standard Webhooks/,
    );
    expect((error as Error).message).not.toContain('TOPSECRET');
  });
});
