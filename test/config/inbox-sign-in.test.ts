// auth.inbox: each mistake is one line naming the field (docs/inbox.md "Signing in").
import { afterEach, describe, expect, it } from 'vitest';
import { inboxSignInSettings } from '../../src/config/inbox-sign-in-settings.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';

const SECRET = 'x'.repeat(32);

function configWith(auth: Record<string, unknown>) {
  return {
    models: { main: { provider: 'scripted' } },
    toolSources: { demo: { type: 'builtin' } },
    agents: [{ id: 'editor', name: 'Editor', model: 'main', tools: ['demo:*'] }],
    auth,
  };
}

const inbox = (extra: Record<string, unknown> = {}) => ({
  clientId: 'toolgate-inbox',
  session: { secret: SECRET },
  ...extra,
});

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('no error');
}

const settingsOf = (auth: Record<string, unknown>) =>
  inboxSignInSettings(parseConfig(configWith(auth), 'c.json'), 'c.json');

afterEach(() => {
  delete process.env.TOOLGATE_TEST_SESSION_SECRET;
});

describe('auth.inbox', () => {
  it('defaults: the only issuer of auth.oidc, the usual scopes, 12 hours', () => {
    expect(settingsOf({ oidc: { issuer: 'https://id.example.com' }, inbox: inbox() })).toEqual({
      issuer: 'https://id.example.com',
      clientId: 'toolgate-inbox',
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      resource: null,
      authorizationParams: {},
      sessionSecret: SECRET,
      sessionMaxAgeSeconds: 12 * 3600,
    });
  });

  it('refuses what cannot work, one line each', () => {
    const oidc = { issuer: 'https://id.example.com' };
    expect(errorOf(() => settingsOf({ tokens: [{ token: 'abc', user: 'a' }], inbox: inbox() }))).toBe(
      'c.json: auth.inbox: needs auth.oidc, the identity provider whose tokens this server accepts',
    );
    expect(errorOf(() => settingsOf({ oidc, inbox: inbox({ session: { secret: 'short' } }) }))).toBe(
      'c.json: auth.inbox.session.secret: expected at least 32 characters of a random string, or "env:NAME"',
    );
    expect(errorOf(() => settingsOf({ oidc, inbox: inbox({ scopes: ['profile'] }) }))).toBe(
      'c.json: auth.inbox.scopes: must include "openid"',
    );
    expect(errorOf(() => settingsOf({ oidc, inbox: inbox({ issuer: 'https://other.example.com' }) }))).toBe(
      'c.json: auth.inbox.issuer: "https://other.example.com" is not an issuer of auth.oidc (https://id.example.com); the inbox\'s tokens must be ones this server accepts',
    );
    const two = [
      { issuer: 'https://a.example.com', userPrefix: 'a:' },
      { issuer: 'https://b.example.com', userPrefix: 'b:' },
    ];
    expect(errorOf(() => settingsOf({ oidc: two, inbox: inbox() }))).toBe(
      "c.json: auth.inbox.issuer: name one of auth.oidc's issuers (https://a.example.com, https://b.example.com)",
    );
    expect(settingsOf({ oidc: two, inbox: inbox({ issuer: 'https://b.example.com' }) })?.issuer).toBe(
      'https://b.example.com',
    );
  });

  it('reads the secret from the environment at start, and checks its length there', () => {
    const auth = {
      oidc: { issuer: 'https://id.example.com' },
      inbox: inbox({ session: { secret: 'env:TOOLGATE_TEST_SESSION_SECRET' } }),
    };
    expect(errorOf(() => settingsOf(auth))).toBe(
      'c.json: auth.inbox.session.secret: the environment variable TOOLGATE_TEST_SESSION_SECRET is not set',
    );
    process.env.TOOLGATE_TEST_SESSION_SECRET = 'too-short';
    expect(errorOf(() => settingsOf(auth))).toBe(
      'c.json: auth.inbox.session.secret: the environment variable TOOLGATE_TEST_SESSION_SECRET holds 9 characters; at least 32 random ones are needed',
    );
    process.env.TOOLGATE_TEST_SESSION_SECRET = SECRET;
    expect(settingsOf(auth)?.sessionSecret).toBe(SECRET);
  });
});
