// Bearer tokens from the config (literal and env:NAME), the 401 without them, the local mode and its loopback rule,
// over real HTTP and a real graphql-ws socket, and the CLI that refuses a reachable address without tokens.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { ConfigError } from '../../src/config/load.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { bearerToken, createTokenAuthenticator } from '../../src/http/auth.js';
import { createServer } from '../../src/server.js';
import { startHarness, tempDir, type Harness } from '../support/harness.js';
import { connectWs, subscribeWs } from '../support/live.js';
import { nodeArgsFor } from '../support/entries.js';

const ALICE = 'alice-7f3c9a1e5b2d4c6f8a0b';
const ROOT = 'root-0a9b8c7d6e5f4a3b2c1d';
const BOB_ENV = 'TOOLGATE_TEST_BOB_TOKEN';
const BOB = 'bob-from-the-environment-31415926';
// Beyond RFC 6750's b64token, still visible ASCII: an Authorization header carries it.
const CAROL = 'carol:!#$%&\'*^`|;<>?@[]{}\\"(),=';

const withAuth = (tokens: NonNullable<ToolgateConfig['auth']>['tokens']): ToolgateConfig => ({
  ...demoConfig,
  auth: { tokens },
});

describe('bearer tokens over HTTP', () => {
  let h: Harness;
  beforeAll(async () => {
    process.env[BOB_ENV] = BOB;
    h = await startHarness({
      config: withAuth([
        { token: ALICE, user: 'alice', admin: false, roles: ['reviewer', 'on-call_2'] },
        { token: `env:${BOB_ENV}`, user: 'bob', admin: false },
        { token: ROOT, user: 'root', admin: true, roles: ['reviewer'] },
        { token: CAROL, user: 'carol', admin: false },
      ]),
    });
  });
  afterAll(async () => {
    await h.close();
    delete process.env[BOB_ENV];
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('knows each user by their token: literal, env:NAME, admin or not, their roles; the scheme is case-insensitive', async () => {
    for (const [authorization, viewer] of [
      [`Bearer ${ALICE}`, { id: 'alice', isAdmin: false, roles: ['reviewer', 'on-call_2'] }],
      [`bearer ${ALICE}`, { id: 'alice', isAdmin: false, roles: ['reviewer', 'on-call_2'] }],
      [`Bearer ${BOB}`, { id: 'bob', isAdmin: false, roles: [] }],
      [`Bearer ${ROOT}`, { id: 'root', isAdmin: true, roles: ['reviewer'] }],
      [`Bearer ${CAROL}`, { id: 'carol', isAdmin: false, roles: [] }],
    ] as const) {
      const response = await post({ query: '{ viewer { id isAdmin roles } }' }, { authorization });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { viewer } });
    }
  });

  it.each([
    ['no Authorization header', undefined],
    ['an unknown token', 'Bearer not-a-token'],
    ['a token one character short', `Bearer ${ALICE.slice(0, -1)}`],
    ['a token with one more character', `Bearer ${ALICE}x`],
    ['the env:NAME reference instead of its value', `Bearer env:${BOB_ENV}`],
    ['another scheme', `Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}`],
    ['the token without a scheme', ALICE],
    ['an empty Bearer', 'Bearer '],
  ])('refuses %s: HTTP 401, UNAUTHENTICATED, and nothing runs', async (_label, authorization) => {
    const before = await post({ query: '{ threads { edges { node { id } } } }' }, { authorization: `Bearer ${ALICE}` });
    const response = await post(
      { query: 'mutation { startTurn(input: {agentId: "demo", message: "delete entities 1"}) { turn { id } } }' },
      authorization === undefined ? {} : { authorization },
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    const body = await response.json();
    expect(body.data ?? null).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(body.errors[0].message).toMatch(/Authorization: Bearer/);
    const after = await post({ query: '{ threads { edges { node { id } } } }' }, { authorization: `Bearer ${ALICE}` });
    expect(await after.json()).toEqual(await before.json());
  });

  it.each([
    ['an unknown field (POST)', { query: '{ webhookDeliveries { edges { node { secret } } } }' }],
    ['a field of the wrong argument type (POST)', { query: '{ thread(id: 1.5) { id } }' }],
    ['a syntax error (POST)', { query: '{ viewer { id ' }],
  ])('without a token, %s is 401 too: nothing of the schema is told', async (_label, body) => {
    const response = await post(body, {});
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(JSON.parse(text).errors.map((e: any) => e.extensions.code)).toEqual(['UNAUTHENTICATED']);
    expect(text).not.toMatch(/WebhookDelivery|Cannot query|Float|Syntax Error/);
  });

  it('refuses queries over GET and subscriptions over SSE without a token as well', async () => {
    const get = await fetch(`${h.url}?query=${encodeURIComponent('{ viewer { id } }')}`);
    expect(get.status).toBe(401);
    expect((await get.json()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // An invalid one as well: no validation error naming a type.
    const invalid = await fetch(`${h.url}?query=${encodeURIComponent('{ viewer { nope } }')}`);
    expect(invalid.status).toBe(401);
    expect(JSON.stringify(await invalid.json())).not.toContain('Viewer');
    const sse = await fetch(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { elicitationRequested { id } }' }),
    });
    expect(sse.status).toBe(401);
    await sse.body?.cancel();
    const invalidSse = await fetch(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { turnUpdated(turnId: "x") { nope } }' }),
    });
    expect(invalidSse.status).toBe(401);
    expect(await invalidSse.text()).not.toContain('Turn');
  });

  it('answers /healthz without a token', async () => {
    expect((await fetch(h.url.replace('/graphql', '/healthz'))).status).toBe(200);
  });

  it('over WebSocket: the same tokens in connectionParams.authorization; without a valid one the socket closes with 4401', async () => {
    const good = connectWs(h.url, `Bearer ${ALICE}`);
    try {
      expect((await good.iterate({ query: '{ viewer { id } }' }).next()).value).toEqual({
        data: { viewer: { id: 'alice' } },
      });
    } finally {
      await good.dispose();
    }
    for (const authorization of [undefined, 'Bearer nope', ALICE, `Bearer ${ALICE.slice(1)}`]) {
      const client = connectWs(h.url, authorization);
      const received = subscribeWs(client, 'subscription { elicitationRequested { id } }');
      const closed = (await received.done) as { code?: number; reason?: string };
      expect(closed.code).toBe(4401);
      expect(closed.reason).toBe('Unauthorized');
      expect(received.events).toEqual([]);
      await client.dispose();
    }
  });
});

describe('the token authenticator', () => {
  it('reads Bearer credentials and nothing else', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('BEARER   abc')).toBe('abc');
    expect(bearerToken('Bearer abc def')).toBeNull();
    expect(bearerToken('Token abc')).toBeNull();
    expect(bearerToken(null)).toBeNull();
    expect(bearerToken(42)).toBeNull();
  });

  it('stops the start with one line naming the config path when an env:NAME token is not set', async () => {
    delete process.env.TOOLGATE_TEST_UNSET_TOKEN;
    const config = withAuth([
      { token: ALICE, user: 'alice', admin: false },
      { token: 'env:TOOLGATE_TEST_UNSET_TOKEN', user: 'eve', admin: false },
    ]);
    await expect(createServer({ config, configFile: '/etc/toolgate.json', database: ':memory:' })).rejects.toThrow(
      new ConfigError(
        '/etc/toolgate.json: auth.tokens[1].token: the environment variable TOOLGATE_TEST_UNSET_TOKEN is not set',
      ),
    );
  });

  it.each([
    ['with a space', 'two words'],
    ['with a line break', 'line\nbreak'],
    ['beyond ASCII', 'café-token'],
  ])(
    'stops the start with one line naming the config path when an env:NAME token could never log in (%s)',
    async (_label, value) => {
      process.env.TOOLGATE_TEST_BAD_TOKEN = value;
      try {
        const config = withAuth([{ token: 'env:TOOLGATE_TEST_BAD_TOKEN', user: 'eve', admin: false }]);
        await expect(createServer({ config, configFile: '/etc/toolgate.json', database: ':memory:' })).rejects.toThrow(
          new ConfigError(
            '/etc/toolgate.json: auth.tokens[0].token: the environment variable TOOLGATE_TEST_BAD_TOKEN cannot be sent as a bearer token: expected one or more visible ASCII characters ("!" to "~"; no spaces)',
          ),
        );
      } finally {
        delete process.env.TOOLGATE_TEST_BAD_TOKEN;
      }
    },
  );

  it('refuses a token that could never log in in a config given in code too', () => {
    expect(() =>
      createTokenAuthenticator({ tokens: [{ token: 'a b', user: 'alice', admin: false }] }, 'c.json'),
    ).toThrow(
      new ConfigError(
        'c.json: auth.tokens[0].token: the token cannot be sent as a bearer token: expected one or more visible ASCII characters ("!" to "~"; no spaces)',
      ),
    );
  });

  it('refuses two users with the same token', () => {
    expect(() =>
      createTokenAuthenticator(
        {
          tokens: [
            { token: ALICE, user: 'alice', admin: false },
            { token: ALICE, user: 'mallory', admin: true },
          ],
        },
        'c.json',
      ),
    ).toThrow('c.json: auth.tokens[1].token: the same token as auth.tokens[0]');
  });
});

describe('without an auth section', () => {
  it('everyone is the single admin user local, whatever they send', async () => {
    const h = await startHarness();
    try {
      for (const headers of [{}, { authorization: 'Bearer whatever' }] as Record<string, string>[]) {
        expect(await h.gql('{ viewer { id isAdmin roles } }', {}, headers)).toEqual({
          data: { viewer: { id: 'local', isAdmin: true, roles: [] } },
        });
      }
    } finally {
      await h.close();
    }
  });

  it('the server refuses to listen on an address other than loopback', async () => {
    const server = await createServer({ database: ':memory:', sweepIntervalSeconds: 0 });
    try {
      await expect(server.listen(0, '0.0.0.0')).rejects.toThrow(/HOST: "0.0.0.0" is not loopback/);
      await expect(server.listen(0, '::')).rejects.toThrow(/is not loopback/);
      expect(server.httpServer.listening).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('the CLI exits non-zero with one line when HOST is not loopback', () => {
    const dir = tempDir();
    try {
      const result = spawnSync(process.execPath, nodeArgsFor('src/cli.ts'), {
        env: { ...process.env, HOST: '0.0.0.0', PORT: '0', TOOLGATE_DB: join(dir.dir, 'x.db'), TOOLGATE_CONFIG: '' },
        encoding: 'utf8',
        timeout: 90_000,
      });
      expect(result.status).not.toBe(0);
      expect(result.status).not.toBeNull();
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        'toolgate: HOST: "0.0.0.0" is not loopback; without an "auth" section in the config toolgate runs as the single admin user "local" and listens on loopback only',
      );
      expect(result.stdout).not.toMatch(/serving/);
    } finally {
      dir.cleanup();
    }
  }, 100_000); // tsx compiles the CLI at start: slow on a loaded machine

  it("the CLI names the file and path when a token's environment variable is missing", () => {
    const dir = tempDir();
    try {
      const file = join(dir.dir, 'toolgate.json');
      writeFileSync(
        file,
        JSON.stringify({ ...demoConfig, auth: { tokens: [{ token: 'env:TOOLGATE_TEST_MISSING', user: 'alice' }] } }),
      );
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: '0',
        TOOLGATE_DB: join(dir.dir, 'x.db'),
        TOOLGATE_CONFIG: file,
      };
      delete env.TOOLGATE_TEST_MISSING;
      const result = spawnSync(process.execPath, nodeArgsFor('src/cli.ts'), {
        env,
        encoding: 'utf8',
        timeout: 90_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr.trim()).toBe(
        `toolgate: ${file}: auth.tokens[0].token: the environment variable TOOLGATE_TEST_MISSING is not set`,
      );
    } finally {
      dir.cleanup();
    }
  }, 100_000); // tsx compiles the CLI at start: slow on a loaded machine
});
