// server.mcpRequestState: defaults, keys read from the environment, and each mistake as one line naming the field
// (docs/mcp-revisions.md "Keys").
import { afterEach, describe, expect, it } from 'vitest';
import { mcpRequestStateSettings } from '../../src/config/mcp-request-state-settings.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';

const SECRET = 'k'.repeat(32);

function settingsOf(mcpRequestState?: Record<string, unknown>) {
  const config = {
    models: {},
    toolSources: { demo: { type: 'builtin' } },
    agents: [{ id: 'gw', name: 'Gateway', tools: ['demo:*'] }],
    ...(mcpRequestState && { server: { mcpRequestState } }),
  };
  return mcpRequestStateSettings(parseConfig(config, 'c.json'), 'c.json');
}

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('no error');
}

afterEach(() => {
  delete process.env.TOOLGATE_TEST_STATE_KEY;
});

describe('server.mcpRequestState', () => {
  it('defaults: no keys (a key of the process), states held an hour, 30 s of waiting per request', () => {
    expect(settingsOf()).toEqual({ keys: [], ttlSeconds: 3600, waitSeconds: 30 });
  });

  it('reads env:NAME secrets, in the order given (the first signs)', () => {
    process.env.TOOLGATE_TEST_STATE_KEY = 'e'.repeat(40);
    const keys = [
      { id: 'new', secret: 'env:TOOLGATE_TEST_STATE_KEY' },
      { id: 'old', secret: SECRET },
    ];
    expect(settingsOf({ keys, ttlSeconds: 600, waitSeconds: 5 })).toEqual({
      keys: [
        { id: 'new', secret: 'e'.repeat(40) },
        { id: 'old', secret: SECRET },
      ],
      ttlSeconds: 600,
      waitSeconds: 5,
    });
  });

  it('refuses what cannot work, one line each', () => {
    expect(errorOf(() => settingsOf({ keys: [{ id: 'a', secret: 'env:TOOLGATE_TEST_STATE_KEY' }] }))).toBe(
      'c.json: server.mcpRequestState.keys[0].secret: the environment variable TOOLGATE_TEST_STATE_KEY is not set',
    );
    expect(errorOf(() => settingsOf({ keys: [{ id: 'a', secret: 'short' }] }))).toBe(
      'c.json: server.mcpRequestState.keys[0].secret: 5 characters; at least 32 random ones are needed',
    );
    expect(
      errorOf(() =>
        settingsOf({
          keys: [
            { id: 'a', secret: SECRET },
            { id: 'a', secret: SECRET },
          ],
        }),
      ),
    ).toMatch(/server\.mcpRequestState\.keys.*key ids must be unique/);
    expect(errorOf(() => settingsOf({ keys: [{ id: 'a b', secret: SECRET }] }))).toMatch(
      /server\.mcpRequestState\.keys\[0\]\.id.*letters, digits/,
    );
    expect(errorOf(() => settingsOf({ keys: [] }))).toMatch(/server\.mcpRequestState\.keys/);
  });
});
