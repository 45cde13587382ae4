// JWT access tokens of a real OpenID provider on loopback (test/support/oidc-provider.ts), over real HTTP and a real
// graphql-ws socket: who a token is and which roles it gives, static tokens beside them, each way a token is refused
// (one line of reason, 401), and a provider that is down (cached keys keep working; a token that needs new keys is
// 503), key rotation, several issuers.
import { createPublicKey } from 'node:crypto';
import { importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { createIdentity } from '../../src/http/auth.js';
import { createServer } from '../../src/server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { connectWs, subscribeWs } from '../support/live.js';
import { LEVEL, memoryLog, type MemoryLog } from '../support/log.js';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider.js';

const SERVICE_TOKEN = 'service-account-4b1d9e2c7a0f';

const configWith = (auth: unknown, server?: unknown) =>
  parseConfig({ ...demoConfig, auth, ...(server ? { server } : {}) }, 'toolgate.json');

const post = (url: string, body: unknown, authorization?: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(body),
  });

const VIEWER = { query: '{ viewer { id isAdmin roles } }' };

/** A token the provider would not issue: signed with `key` (its own key unless another), claims as given. */
async function craft(
  provider: OidcProvider,
  claims: JWTPayload,
  options: { key?: JWK; header?: Record<string, unknown> } = {},
): Promise<string> {
  const jwk = options.key ?? provider.privateJwk;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'alice', groups: ['reviewer'], iss: provider.issuer, iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: jwk.kid!, typ: 'at+jwt', ...options.header })
    .sign(await importJWK(jwk, 'RS256'));
}

/** A JWT with an unsigned header as given: for `alg: none` and HMAC tokens jose would not make. */
function rawJwt(header: object, payload: object, sign: (input: string) => string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part(header)}.${part(payload)}`;
  return `${input}.${sign(input)}`;
}

describe('auth.oidc: access tokens of an OpenID provider', () => {
  let provider: OidcProvider;
  let h: Harness;
  let log: MemoryLog;
  let audience: string;
  const tokenFor = (user: string, resource = audience) => provider.accessToken(user, { resource });

  beforeAll(async () => {
    provider = await startOidcProvider({
      users: {
        alice: { name: 'Alice Example', email: 'alice@example.test', groups: ['reviewer'] },
        bob: { email: 'bob@example.test', groups: ['reviewer', 'on-call'] },
        root: { name: 'Root', groups: ['admins'] },
      },
    });
    log = memoryLog();
    h = await startHarness({
      config: configWith({
        tokens: [{ token: SERVICE_TOKEN, user: 'ci-bot', roles: ['deployer'] }],
        oidc: { issuer: provider.issuer, adminRoles: ['admins'] },
      }),
      logger: log.logger,
    });
    audience = new URL(h.url).origin;
  });
  afterAll(async () => {
    await h.close();
    await provider.close();
  });

  it('a token minted at the provider for alice with groups ["reviewer"] is alice with the role reviewer', async () => {
    const response = await post(h.url, VIEWER, `Bearer ${await tokenFor('alice')}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { viewer: { id: 'alice', isAdmin: false, roles: ['reviewer'] } } });
  });

  it('roles are the groups of the token: several, none, an admin role', async () => {
    for (const [user, viewer] of [
      ['bob', { id: 'bob', isAdmin: false, roles: ['reviewer', 'on-call'] }],
      ['root', { id: 'root', isAdmin: true, roles: ['admins'] }],
    ] as const) {
      expect(await (await post(h.url, VIEWER, `Bearer ${await tokenFor(user)}`)).json()).toEqual({
        data: { viewer },
      });
    }
  });

  it('keeps static tokens beside: a service account', async () => {
    expect(await (await post(h.url, VIEWER, `Bearer ${SERVICE_TOKEN}`)).json()).toEqual({
      data: { viewer: { id: 'ci-bot', isAdmin: false, roles: ['deployer'] } },
    });
  });

  it('an unknown opaque token, or none, is the 401 of before', async () => {
    for (const authorization of [undefined, 'Bearer not-a-jwt']) {
      const response = await post(h.url, VIEWER, authorization);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect((await response.json()).errors[0].message).toMatch(/Authorization: Bearer/);
    }
  });

  const refusals: [string, () => Promise<string>, string][] = [
    [
      'a token for another audience',
      () => tokenFor('alice', 'http://127.0.0.1:1/elsewhere'),
      'token audience is not this server',
    ],
    [
      'a token of an issuer not configured',
      () => craft(provider, { iss: 'http://127.0.0.1:1' }),
      'token issuer is not trusted',
    ],
    [
      'an expired token (beyond the leeway)',
      () => craft(provider, { aud: audience, exp: Math.floor(Date.now() / 1000) - 120 }),
      'token expired',
    ],
    [
      'a token not yet valid',
      () => craft(provider, { aud: audience, nbf: Math.floor(Date.now() / 1000) + 600 }),
      'token not yet valid',
    ],
    ['a token without exp', () => craft(provider, { aud: audience, exp: undefined }), 'token has no expiry'],
    [
      'alg: none',
      async () =>
        rawJwt({ alg: 'none', typ: 'JWT' }, { iss: provider.issuer, sub: 'alice', aud: audience, exp: 2e9 }, () => ''),
      'token algorithm is not allowed',
    ],
    [
      'HS256 signed with the provider\u2019s public key',
      async () => {
        const { createHmac } = await import('node:crypto');
        const publicPem = createPublicKey({ key: provider.privateJwk as never, format: 'jwk' })
          .export({ type: 'spki', format: 'pem' })
          .toString();
        return rawJwt(
          { alg: 'HS256', typ: 'JWT', kid: provider.privateJwk.kid },
          { iss: provider.issuer, sub: 'root', groups: ['admins'], aud: audience, exp: 2e9 },
          (input) => createHmac('sha256', publicPem).update(input).digest('base64url'),
        );
      },
      'token algorithm is not allowed',
    ],
    [
      'a token signed by a key the provider does not publish (unknown kid)',
      async () => {
        const { privateKey } = await import('jose').then((jose) =>
          jose.generateKeyPair('RS256', { extractable: true }),
        );
        const key = { ...(await (await import('jose')).exportJWK(privateKey)), kid: 'not-published' };
        return craft(provider, { aud: audience }, { key });
      },
      'token signing key is unknown',
    ],
    [
      'a token whose claims were changed after signing',
      async () => {
        const [header, , signature] = (await tokenFor('alice')).split('.');
        const forged = Buffer.from(
          JSON.stringify({ iss: provider.issuer, sub: 'root', groups: ['admins'], aud: audience, exp: 2e9 }),
        ).toString('base64url');
        return `${header}.${forged}.${signature}`;
      },
      'token signature is invalid',
    ],
  ];

  it.each(refusals)('refuses %s: 401 with one line of reason, and nothing runs', async (_label, token, reason) => {
    const jwt = await token();
    const response = await post(
      h.url,
      { query: 'mutation { startTurn(input: {agentId: "demo", message: "delete entities 1"}) { turn { id } } }' },
      `Bearer ${jwt}`,
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="${reason}"`,
    );
    const body = await response.json();
    expect(body.data ?? null).toBeNull();
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: `Authentication refused: ${reason}.`,
        extensions: { code: 'UNAUTHENTICATED' },
      }),
    ]);
    // No part of the token in the log: not the token, not its header, claims or signature.
    for (const part of jwt.split('.').filter((piece) => piece.length > 8)) expect(log.text()).not.toContain(part);
  });

  it('accepts a token expired within the leeway (60 s by default)', async () => {
    const token = await craft(provider, { aud: audience, exp: Math.floor(Date.now() / 1000) - 20 });
    expect((await post(h.url, VIEWER, `Bearer ${token}`)).status).toBe(200);
  });

  it('over WebSocket: a provider token connects; an expired one closes the socket with 4401 and its reason', async () => {
    const good = connectWs(h.url, `Bearer ${await tokenFor('alice')}`);
    try {
      expect((await good.iterate({ query: '{ viewer { id roles } }' }).next()).value).toEqual({
        data: { viewer: { id: 'alice', roles: ['reviewer'] } },
      });
    } finally {
      await good.dispose();
    }
    const expired = await craft(provider, { aud: audience, exp: Math.floor(Date.now() / 1000) - 120 });
    const client = connectWs(h.url, `Bearer ${expired}`);
    const received = subscribeWs(client, 'subscription { elicitationRequested { id } }');
    const closed = (await received.done) as { code?: number; reason?: string };
    expect(closed).toMatchObject({ code: 4401, reason: 'Unauthorized: token expired' });
    await client.dispose();
  });

  it('/metrics answers an admin of the provider, and refuses a token of another audience', async () => {
    const metrics = h.url.replace('/graphql', '/metrics');
    const asRoot = await fetch(metrics, { headers: { authorization: `Bearer ${await tokenFor('root')}` } });
    expect(asRoot.status).toBe(200);
    await asRoot.text();
    const asAlice = await fetch(metrics, { headers: { authorization: `Bearer ${await tokenFor('alice')}` } });
    expect(asAlice.status).toBe(403);
    await asAlice.text();
    const other = await fetch(metrics, {
      headers: { authorization: `Bearer ${await tokenFor('root', 'http://127.0.0.1:1')}` },
    });
    expect(other.status).toBe(401);
    await other.text();
  });

  it('/mcp refuses a token of another audience with 401 and its reason', async () => {
    const response = await fetch(h.url.replace('/graphql', '/mcp'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${await tokenFor('alice', 'http://127.0.0.1:1')}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(401);
    expect((await response.json()).error.message).toBe('Authentication refused: token audience is not this server.');
  });
});

describe('auth.oidc while the provider is down', () => {
  let provider: OidcProvider;
  let h: Harness;
  let audience: string;

  beforeAll(async () => {
    provider = await startOidcProvider();
    // The key set may be fetched again at once for an unknown kid (the default waits 10 s between two fetches).
    const config = configWith({ oidc: { issuer: provider.issuer, audience: 'http://127.0.0.1:4' } });
    const { authenticator } = createIdentity(config, 'toolgate.json', { keyTimings: { cooldownMs: 0 } });
    h = await startHarness({ config, authenticator });
    audience = 'http://127.0.0.1:4';
  });
  afterAll(async () => {
    await h.close();
    await provider.close();
  });

  it('keeps accepting tokens its cached keys verify; a token that needs a new key is 503; all is well once it is back', async () => {
    const token = await provider.accessToken('alice', { resource: audience });
    expect((await post(h.url, VIEWER, `Bearer ${token}`)).status).toBe(200);
    const { privateKey } = await (await import('jose')).generateKeyPair('RS256', { extractable: true });
    const newKey = { ...(await (await import('jose')).exportJWK(privateKey)), kid: 'after-the-outage' };
    const needsNewKey = await craft(provider, { aud: audience }, { key: newKey });

    await provider.stop();
    try {
      expect(await (await post(h.url, VIEWER, `Bearer ${token}`)).json()).toEqual({
        data: { viewer: { id: 'alice', isAdmin: false, roles: ['reviewer'] } },
      });
      const response = await post(h.url, VIEWER, `Bearer ${needsNewKey}`);
      expect(response.status).toBe(503);
      expect((await response.json()).errors).toEqual([
        expect.objectContaining({
          message: 'Authentication unavailable: identity provider unreachable; try again later.',
          extensions: { code: 'AUTHENTICATION_UNAVAILABLE' },
        }),
      ]);
    } finally {
      await provider.start();
    }
    expect((await post(h.url, VIEWER, `Bearer ${token}`)).status).toBe(200);
  });

  it('a server that never reached the provider answers 503 until it can, then verifies; one log line each way', async () => {
    const token = await provider.accessToken('alice', { resource: 'http://127.0.0.1:1' });
    await provider.stop();
    const log = memoryLog();
    const fresh = await startHarness({
      config: configWith({ oidc: { issuer: provider.issuer, audience: 'http://127.0.0.1:1' } }),
      logger: log.logger,
    });
    try {
      for (let i = 0; i < 3; i++) {
        const down = await post(fresh.url, VIEWER, `Bearer ${token}`);
        expect(down.status).toBe(503);
        expect(down.headers.get('retry-after')).toBe('5');
        await down.text();
      }
      expect(log.find('identity provider unreachable')).toEqual([
        expect.objectContaining({
          level: LEVEL.warn,
          issuer: provider.issuer,
          problem: expect.stringMatching(/^discovery failed: fetch failed: .*ECONNREFUSED/),
        }),
      ]);
      await provider.start();
      // Discovery is not retried within two seconds of a failure; then it is.
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect(await (await post(fresh.url, VIEWER, `Bearer ${token}`)).json()).toEqual({
        data: { viewer: { id: 'alice', isAdmin: false, roles: ['reviewer'] } },
      });
      expect(log.find('identity provider answers again')).toEqual([
        expect.objectContaining({ level: LEVEL.info, issuer: provider.issuer }),
      ]);
      for (const part of token.split('.')) expect(log.text()).not.toContain(part);
    } finally {
      await provider.start();
      await fresh.close();
    }
  });
});

describe('auth.oidc: an issuer written otherwise than the provider writes it', () => {
  it('is 503 for its tokens, and the log says which issuer the discovery document names', async () => {
    const provider = await startOidcProvider();
    const log = memoryLog();
    const h = await startHarness({
      config: configWith({ oidc: { issuer: `${provider.issuer}/`, audience: 'http://127.0.0.1:6' } }),
      logger: log.logger,
    });
    try {
      const token = await craft(provider, { iss: `${provider.issuer}/`, aud: 'http://127.0.0.1:6' });
      const response = await post(h.url, VIEWER, `Bearer ${token}`);
      expect(response.status).toBe(503);
      await response.text();
      expect(log.find('identity provider unreachable')).toEqual([
        expect.objectContaining({
          issuer: `${provider.issuer}/`,
          problem: `the discovery document names the issuer "${provider.issuer}", not this one`,
        }),
      ]);
    } finally {
      await h.close();
      await provider.close();
    }
  });
});

describe('auth.oidc: key rotation and several issuers', () => {
  it('fetches the keys again for an unknown kid: a rotated key is accepted, the old one still verifies', async () => {
    const provider = await startOidcProvider();
    const audience = 'http://127.0.0.1:2';
    const identity = createIdentity(configWith({ oidc: { issuer: provider.issuer, audience } }), 'toolgate.json', {
      keyTimings: { cooldownMs: 0 },
    });
    try {
      const before = await provider.accessToken('alice', { resource: audience });
      expect(await identity.authenticator.authenticate(`Bearer ${before}`)).toMatchObject({ ok: true });
      await provider.rotateSigningKey();
      const after = await provider.accessToken('alice', { resource: audience });
      expect(await identity.authenticator.authenticate(`Bearer ${after}`)).toMatchObject({
        ok: true,
        viewer: { id: 'alice', roles: ['reviewer'], issuer: provider.issuer, subject: 'alice', name: 'Alice Example' },
      });
      expect(await identity.authenticator.authenticate(`Bearer ${before}`)).toMatchObject({ ok: true });
    } finally {
      await provider.close();
    }
  });

  it('fetches the keys again for unknown kids at most once per cooldown', async () => {
    const provider = await startOidcProvider();
    const audience = 'http://127.0.0.1:2';
    // Long enough that a loaded machine finishes five refusals inside it; the tokens are signed beforehand.
    const cooldownMs = 1500;
    const { authenticator } = createIdentity(configWith({ oidc: { issuer: provider.issuer, audience } }), 'x', {
      keyTimings: { cooldownMs },
    });
    const jose = await import('jose');
    const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
    const stranger = { ...(await jose.exportJWK(privateKey)), kid: 'made-up' };
    const unknownKid = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        craft(provider, { aud: audience }, { key: { ...stranger, kid: `made-up-${n}` } }),
      ),
    );
    const known = await provider.accessToken('alice', { resource: audience });
    try {
      expect(await authenticator.authenticate(`Bearer ${known}`)).toMatchObject({ ok: true });
      expect(provider.requests.get('/jwks')).toBe(1);
      for (const token of unknownKid.slice(0, 5)) {
        expect(await authenticator.authenticate(`Bearer ${token}`)).toEqual({
          ok: false,
          status: 401,
          reason: 'token signing key is unknown',
        });
      }
      // Within the cooldown of the first fetch: no fetch at all.
      expect(provider.requests.get('/jwks')).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, cooldownMs + 100));
      for (const token of unknownKid.slice(5)) {
        expect(await authenticator.authenticate(`Bearer ${token}`)).toMatchObject({ ok: false });
      }
      // After it: one fetch for five unknown key ids.
      expect(provider.requests.get('/jwks')).toBe(2);
    } finally {
      await provider.close();
    }
  });

  it('takes tokens of two issuers, each user id with its issuer’s prefix', async () => {
    const [corp, partner] = await Promise.all([startOidcProvider(), startOidcProvider()]);
    const audience = 'http://127.0.0.1:3';
    const { authenticator } = createIdentity(
      configWith({
        oidc: [
          { issuer: corp.issuer, audience, userPrefix: 'corp:' },
          { issuer: partner.issuer, audience, userPrefix: 'partner:', roleMap: { reviewer: 'external-reviewer' } },
        ],
      }),
    );
    try {
      expect(
        await authenticator.authenticate(`Bearer ${await corp.accessToken('alice', { resource: audience })}`),
      ).toMatchObject({
        viewer: { id: 'corp:alice', roles: ['reviewer'], issuer: corp.issuer },
      });
      expect(
        await authenticator.authenticate(`Bearer ${await partner.accessToken('alice', { resource: audience })}`),
      ).toMatchObject({ viewer: { id: 'partner:alice', roles: ['external-reviewer'], issuer: partner.issuer } });
    } finally {
      await Promise.all([corp.close(), partner.close()]);
    }
  });

  it('refuses to listen on every interface without server.publicUrl: tokens could name no audience', async () => {
    const server = await createServer({
      config: configWith({ oidc: { issuer: 'http://127.0.0.1:1' } }),
      database: ':memory:',
    });
    try {
      await expect(server.listen(0, '0.0.0.0')).rejects.toThrow(
        /^server\.publicUrl: needed with auth\.oidc when listening on "0\.0\.0\.0"/,
      );
    } finally {
      await server.close();
    }
  });

  it('refuses several issuers without distinct prefixes: one line naming the field', () => {
    const issuer = (n: number) => `http://127.0.0.1:${n}`;
    expect(() =>
      createIdentity(
        configWith({ oidc: [{ issuer: issuer(1) }, { issuer: issuer(2), userPrefix: 'b:' }] }),
        'toolgate.json',
      ),
    ).toThrow(
      new ConfigError('toolgate.json: auth.oidc[0].userPrefix: required when there are several issuers, e.g. "corp:"'),
    );
    expect(() =>
      createIdentity(
        configWith({
          oidc: [
            { issuer: issuer(1), userPrefix: 'a:' },
            { issuer: issuer(2), userPrefix: 'a:b:' },
          ],
        }),
        'toolgate.json',
      ),
    ).toThrow(/^toolgate\.json: auth\.oidc\[0\]\.userPrefix: "a:" begins auth\.oidc\[1\]\.userPrefix "a:b:"/);
    expect(() =>
      createIdentity(
        configWith({
          oidc: [
            { issuer: issuer(1), userPrefix: 'a:' },
            { issuer: issuer(1), userPrefix: 'b:' },
          ],
        }),
        'toolgate.json',
      ),
    ).toThrow(new ConfigError('toolgate.json: auth.oidc[1].issuer: the same issuer as auth.oidc[0]'));
  });
});
