// The tests' OpenID provider itself: it answers discovery, and its tokens are real JWTs a verifier accepts against
// its published keys, for the resource asked for, with the user's groups as they are when the token is minted.
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcProvider, type OidcProvider } from './oidc-provider.js';

describe('the tests’ OpenID provider', () => {
  let provider: OidcProvider;
  beforeAll(async () => {
    provider = await startOidcProvider();
  });
  afterAll(() => provider.close());

  it('answers discovery on loopback with its endpoints', async () => {
    const response = await fetch(`${provider.issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const discovery = (await response.json()) as Record<string, unknown>;
    expect(discovery).toMatchObject({
      issuer: provider.issuer,
      jwks_uri: `${provider.issuer}/jwks`,
      registration_endpoint: `${provider.issuer}/reg`,
      code_challenge_methods_supported: ['S256'],
    });
    expect(provider.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('mints a JWT access token for a resource that verifies against its JWKS and carries groups and name', async () => {
    const resource = 'http://127.0.0.1:4000';
    const token = await provider.accessToken('alice', { resource });
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt', kid: provider.privateJwk.kid });
    const keys = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
    const { payload } = await jwtVerify(token, keys, { issuer: provider.issuer, audience: resource });
    expect(payload).toMatchObject({ sub: 'alice', groups: ['reviewer'], name: 'Alice Example', scope: 'toolgate' });
    expect(payload.exp! - payload.iat!).toBe(300);
  });

  it('puts the groups of the moment into the next token, and the lifetime asked for', async () => {
    provider.users.alice!.groups = [];
    try {
      const token = await provider.accessToken('alice', { resource: 'http://127.0.0.1:4000', ttlSeconds: 5 });
      const keys = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
      const { payload } = await jwtVerify(token, keys, { issuer: provider.issuer });
      expect(payload.groups).toEqual([]);
      expect(payload.exp! - payload.iat!).toBe(5);
    } finally {
      provider.users.alice!.groups = ['reviewer'];
    }
  });

  it('refuses a resource that is not on loopback', async () => {
    await expect(provider.accessToken('alice', { resource: 'https://elsewhere.example' })).rejects.toThrow(
      /invalid_target/,
    );
  });

  it('stops answering and starts again on the same port', async () => {
    await provider.stop();
    await expect(fetch(`${provider.issuer}/jwks`)).rejects.toThrow();
    await provider.start();
    expect((await fetch(`${provider.issuer}/jwks`)).status).toBe(200);
  });
});

describe('a client that registers itself (dynamic client registration, as MCP clients do)', () => {
  let provider: OidcProvider;
  beforeAll(async () => {
    provider = await startOidcProvider({ users: { dana: { name: 'Dana', groups: ['ops'] } } });
  });
  afterAll(() => provider.close());

  it('registers, signs in through the login form with PKCE and gets a token for its resource', async () => {
    const redirectUri = 'http://127.0.0.1:9/callback';
    const registration = await fetch(`${provider.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }),
    });
    expect(registration.status).toBe(201);
    const { client_id: clientId } = (await registration.json()) as { client_id: string };
    const verifier = 'a-verifier-of-forty-three-characters-or-more-0123';
    const challenge = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))).toString(
      'base64url',
    );
    const resource = 'http://127.0.0.1:4001/mcp';
    const callback = await provider.signIn(
      `${provider.issuer}/auth?${new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'openid mcp',
        resource,
        state: 's1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })}`,
      'dana',
    );
    expect(callback.origin + callback.pathname).toBe(redirectUri);
    const tokens = (await (
      await fetch(`${provider.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: clientId,
          code: callback.searchParams.get('code')!,
          redirect_uri: redirectUri,
          code_verifier: verifier,
          resource,
        }),
      })
    ).json()) as { access_token: string };
    const keys = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
    const { payload } = await jwtVerify(tokens.access_token, keys, { issuer: provider.issuer, audience: resource });
    expect(payload).toMatchObject({ sub: 'dana', groups: ['ops'], name: 'Dana', scope: 'mcp' });
  });
});

describe('a key rotation at the provider', () => {
  it('signs with the new key and keeps the old one published', async () => {
    const provider = await startOidcProvider();
    try {
      const before = provider.privateJwk.kid;
      const after = (await provider.rotateSigningKey()).kid;
      expect(after).not.toBe(before);
      const token = await provider.accessToken('alice', { resource: 'http://127.0.0.1:4000' });
      expect(decodeProtectedHeader(token).kid).toBe(after);
      const jwks = (await (await fetch(`${provider.issuer}/jwks`)).json()) as { keys: { kid: string }[] };
      expect(jwks.keys.map((key) => key.kid)).toEqual([after, before]);
    } finally {
      await provider.close();
    }
  });
});

describe('a client given at the start (a backend-for-frontend)', () => {
  it('signs in with its secret and PKCE, gets a refresh token and renews with it', async () => {
    const redirectUri = 'http://127.0.0.1:9/auth/callback';
    const provider = await startOidcProvider({
      clients: [
        {
          client_id: 'inbox',
          client_secret: 'a-client-secret-for-the-tests-0123456789',
          token_endpoint_auth_method: 'client_secret_post',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
      ],
    });
    try {
      const verifier = 'another-verifier-of-forty-three-characters-0123';
      const challenge = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))).toString(
        'base64url',
      );
      const resource = 'http://127.0.0.1:4002';
      const callback = await provider.signIn(
        `${provider.issuer}/auth?${new URLSearchParams({
          client_id: 'inbox',
          response_type: 'code',
          redirect_uri: redirectUri,
          scope: 'openid profile toolgate',
          resource,
          state: 's2',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        })}`,
        'bob',
      );
      const token = (body: Record<string, string>) =>
        fetch(`${provider.issuer}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_id: 'inbox',
            client_secret: 'a-client-secret-for-the-tests-0123456789',
            resource,
            ...body,
          }),
        }).then((response) => response.json() as Promise<Record<string, string>>);
      const first = await token({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      });
      expect(first).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String) });
      const renewed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
      const keys = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
      const { payload } = await jwtVerify(renewed.access_token!, keys, { issuer: provider.issuer, audience: resource });
      expect(payload).toMatchObject({ sub: 'bob', groups: ['reviewer'] });
    } finally {
      await provider.close();
    }
  });
});
