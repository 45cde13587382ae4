// The config's `slack` section: a bad entry is one line naming the file, the path and the problem (never a secret's
// value); users map to toolgate users with their roles.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../src/config/load.js';
import { resolveSlack } from '../../src/config/slack.js';
import { tempDir } from '../support/harness.js';

const { dir, cleanup } = tempDir();
afterAll(cleanup);
afterEach(() => {
  delete process.env.TOOLGATE_TEST_SLACK_TOKEN;
});

const base = {
  models: { main: { provider: 'scripted' } },
  toolSources: { demo: { type: 'builtin' } },
  agents: [{ id: 'editor', name: 'Editor', model: 'main', tools: ['demo:*'] }],
  auth: { tokens: [{ token: 'bob-token-123456789', user: 'bob', roles: ['reviewer', 'ops'] }] },
};
const slack = (changes: Record<string, unknown> = {}) => ({
  botToken: 'xoxb-123-456-abc',
  signingSecret: 'secret',
  channels: { default: 'C0GENERAL01' },
  ...changes,
});

function load(section: unknown) {
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ ...base, slack: section }));
  return { file, loaded: () => loadConfigFile(file) };
}

function errorOf(section: unknown): string {
  const { file, loaded } = load(section);
  try {
    const { config } = loaded();
    resolveSlack(config, file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(file, 'config.json');
  }
  throw new Error('the config loaded without an error');
}

describe('the slack section', () => {
  it('refuses what is wrong, one line each, naming the field', () => {
    expect(errorOf(slack({ botToken: 'env:TOOLGATE_TEST_SLACK_TOKEN' }))).toBe(
      'config.json: slack.botToken: the environment variable TOOLGATE_TEST_SLACK_TOKEN is not set',
    );
    process.env.TOOLGATE_TEST_SLACK_TOKEN = 'not-a-slack-token-s3cr3t';
    const wrong = errorOf(slack({ botToken: 'env:TOOLGATE_TEST_SLACK_TOKEN' }));
    expect(wrong).toBe('config.json: slack.botToken: expected a Slack bot token ("xoxb-…")');
    expect(errorOf(slack({ channels: { default: 'general' } }))).toContain('slack.channels.default');
    expect(errorOf(slack({ users: [{ user: 'bob' }] }))).toContain('expected "slackUserId", "email" or both');
  });

  it('maps users by id and email, their roles from the entry or from auth.tokens', () => {
    const { file, loaded } = load(
      slack({
        users: [
          { slackUserId: 'U0BOB', user: 'bob' },
          { email: 'Carol@Example.com', user: 'carol', roles: ['reviewer'] },
        ],
        mapByEmail: true,
      }),
    );
    const settings = resolveSlack(loaded().config, file)!;
    expect(settings.usersById.get('U0BOB')).toEqual({ user: 'bob', roles: ['ops', 'reviewer'] });
    expect(settings.usersByEmail.get('carol@example.com')).toEqual({ user: 'carol', roles: ['reviewer'] });
    expect(settings.apiUrl).toBe('https://slack.com/api/');
    expect(settings.mapByEmail).toBe(true);
  });
});
