// The inbox's sign-in at the HTTP level, against a real OpenID provider on loopback (docs/inbox.md "Signing in"): the
// session cookie's flags, a session that authenticates the inbox's own requests only (our header, this origin), the
// WebSocket upgrade's Origin check, a callback with another state refused, sign-out, and a socket closed when its
// token expires.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cookieHeader,
  registerInboxClient,
  SESSION_HEADER,
  SESSION_SECRET,
  setCookies,
  signInOverHttp,
  startSignInServer,
  type SignInServer,
} from '../support/inbox-sign-in.js';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider.js';
import { authConfig } from '../../src/config/schema.js';
import { startHarness } from '../support/harness.js';
import { testConfig } from '../support/scenario.js';
import { memoryLog } from '../support/log.js';

const VIEWER = '{ viewer { id roles } }';

let provider: OidcProvider;
let server: SignInServer;
const log = memoryLog('info');

beforeAll(async () => {
  provider = await startOidcProvider();
  server = await startSignInServer(provider, testConfig(), { harness: { logger: log.logger } });
}, 60_000);

afterAll(async () => {
  await server?.h.close();
  await provider?.close();
});

function viewerRequest(cookies: Map<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${server.base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookieHeader(cookies), ...headers },
    body: JSON.stringify({ query: VIEWER }),
  });
}

/** Opens a graphql-ws connection and resolves with its close (code, reason), or 'ack' once accepted. */
function connect(
  headers: Record<string, string>,
  connectionParams: Record<string, unknown> = {},
): Promise<{ socket: WebSocket; acked: Promise<boolean>; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new WebSocket(`${server.base.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { headers });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const acked = new Promise<boolean>((resolve) => {
    socket.on('message', (data) => {
      if (JSON.parse(data.toString()).type === 'connection_ack') resolve(true);
    });
    void closed.then(() => resolve(false));
  });
  return new Promise((resolve, reject) => {
    socket.on('open', () => {
      socket.send(JSON.stringify({ type: 'connection_init', payload: connectionParams }));
      resolve({ socket, acked, closed });
    });
    socket.on('unexpected-response', (_request, response) =>
      reject(new Error(`upgrade answered ${response.statusCode}`)),
    );
    socket.on('error', reject);
  });
}

describe('the inbox session', () => {
  it('signs in through the provider: an encrypted HttpOnly SameSite=Lax cookie, back to the inbox page asked for', async () => {
    const { callback, cookies } = await signInOverHttp(provider, server.base, 'alice');
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/inbox/to-answer');
    const session = callback.headers.getSetCookie().find((cookie) => cookie.startsWith('toolgate_session='))!;
    expect(session).toMatch(/; Path=\/;/);
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Lax/);
    expect(session).toMatch(/; Max-Age=\d+/);
    // Plain http here: no Secure flag (an https public URL gets Secure and the __Host- prefix).
    expect(session).not.toMatch(/Secure/);
    // Encrypted (JWE, five parts): nothing of the token readable.
    const value = cookies.get('toolgate_session')!;
    expect(value.split('.')).toHaveLength(5);
    expect(Buffer.from(value.split('.')[0]!, 'base64url').toString()).toContain('"enc":"A256GCM"');
    // The pending sign-in is gone.
    expect(callback.headers.getSetCookie().some((cookie) => /^toolgate_sign_in=;.*Max-Age=0/.test(cookie))).toBe(true);

    const info = await fetch(`${server.base}/auth/session`, {
      headers: { cookie: cookieHeader(cookies), ...SESSION_HEADER },
    });
    expect(info.status).toBe(200);
    const body = await info.json();
    expect(body).toMatchObject({ signedIn: true, user: 'alice', name: 'Alice Example' });

    const response = await viewerRequest(cookies, SESSION_HEADER);
    expect(response.status).toBe(200);
    expect((await response.json()).data.viewer).toMatchObject({ id: 'alice', roles: ['reviewer'] });
    // The log names who signed in, and holds no token (a JWT starts "eyJ") nor the cookie.
    expect(log.find('inbox signed in').at(-1)?.viewerId).toBe('alice');
    expect(log.text()).not.toContain('eyJ');
    expect(log.text()).not.toContain(value.slice(0, 40));
  });

  it('uses the cookie only for requests of its own pages: our header, this origin', async () => {
    const { cookies } = await signInOverHttp(provider, server.base, 'alice');
    // Same origin, as the inbox sends it.
    const own = await viewerRequest(cookies, {
      ...SESSION_HEADER,
      origin: server.base,
      'sec-fetch-site': 'same-origin',
    });
    expect((await own.json()).data.viewer.id).toBe('alice');
    // A form of another site (no header of ours): the cookie is not used, so no credentials.
    const form = await viewerRequest(cookies, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(form.status).toBe(401);
    // Our header from another origin (a same-site page on another port would get the cookie): refused.
    const crossOrigin = await viewerRequest(cookies, { ...SESSION_HEADER, origin: 'http://127.0.0.1:1' });
    expect(crossOrigin.status).toBe(403);
    expect(await crossOrigin.text()).toContain('Origin "http://127.0.0.1:1" is not this server\'s');
    const crossSite = await viewerRequest(cookies, { ...SESSION_HEADER, 'sec-fetch-site': 'same-site' });
    expect(crossSite.status).toBe(403);
    // /auth/session and /auth/logout answer the inbox's scripts only.
    expect((await fetch(`${server.base}/auth/session`, { headers: { cookie: cookieHeader(cookies) } })).status).toBe(
      403,
    );
    const logout = await fetch(`${server.base}/auth/logout`, {
      method: 'POST',
      headers: { cookie: cookieHeader(cookies), origin: 'https://evil.example', ...SESSION_HEADER },
    });
    expect(logout.status).toBe(403);
    // Still signed in.
    expect((await (await viewerRequest(cookies, SESSION_HEADER)).json()).data.viewer.id).toBe('alice');
  });

  it('refuses a WebSocket upgrade with the cookie from a foreign Origin; accepts its own', async () => {
    const { cookies } = await signInOverHttp(provider, server.base, 'bob');
    await expect(connect({ cookie: cookieHeader(cookies), origin: 'https://evil.example' })).rejects.toThrow(
      'upgrade answered 403',
    );
    const own = await connect({ cookie: cookieHeader(cookies), origin: server.base });
    expect(await own.acked).toBe(true);
    own.socket.close();
    // Without the cookie a foreign page gets a socket, but no credentials: 4401.
    const bare = await connect({ origin: 'https://evil.example' });
    expect(await bare.acked).toBe(false);
    expect((await bare.closed).code).toBe(4401);
  });

  it('refuses a callback whose state is not the one this browser started with', async () => {
    const login = await fetch(`${server.base}/auth/login`, { redirect: 'manual' });
    const pending = setCookies(login);
    const back = await provider.signIn(login.headers.get('location')!, 'alice');
    back.searchParams.set('state', 'another-state');
    const callback = await fetch(back, { redirect: 'manual', headers: { cookie: cookieHeader(pending) } });
    expect(callback.status).toBe(400);
    expect(await callback.text()).toContain('Sign-in refused');
    // Its page, as every page of /auth/*, runs nothing and is framed by no one.
    expect(callback.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(callback.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(callback.headers.get('x-frame-options')).toBe('DENY');
    expect(log.find('inbox sign-in refused').at(-1)?.reason).toBe('unexpected "state" response parameter value');
    expect(setCookies(callback).has('toolgate_session')).toBe(false);
    // And a callback without the sign-in cookie at all (started in another browser).
    const stranger = await fetch(back, { redirect: 'manual' });
    expect(stranger.status).toBe(400);
  });

  it('signs out: the cookie is cleared and the provider offers its own sign-out', async () => {
    const { cookies } = await signInOverHttp(provider, server.base, 'alice');
    const logout = await fetch(`${server.base}/auth/logout`, {
      method: 'POST',
      headers: { cookie: cookieHeader(cookies), origin: server.base, ...SESSION_HEADER },
    });
    expect(logout.status).toBe(200);
    const body = await logout.json();
    expect(body.providerLogoutUrl).toMatch(new RegExp(`^${provider.issuer}/session/end\\?`));
    expect(new URL(body.providerLogoutUrl).searchParams.get('post_logout_redirect_uri')).toBe(`${server.base}/inbox`);
    expect(logout.headers.getSetCookie().find((c) => c.startsWith('toolgate_session='))).toMatch(/Max-Age=0/);
    const after = await fetch(`${server.base}/auth/session`, { headers: SESSION_HEADER });
    expect(after.status).toBe(401);
  });

  it('answers 401 for a session cookie that was tampered with', async () => {
    const { cookies } = await signInOverHttp(provider, server.base, 'alice');
    const value = cookies.get('toolgate_session')!;
    const tampered = new Map([['toolgate_session', value.slice(0, -4) + (value.endsWith('AAAA') ? 'BBBB' : 'AAAA')]]);
    const info = await fetch(`${server.base}/auth/session`, {
      headers: { cookie: cookieHeader(tampered), ...SESSION_HEADER },
    });
    expect(info.status).toBe(401);
    expect((await viewerRequest(tampered, SESSION_HEADER)).status).toBe(401);
  });

  it('a second instance with the same secret behind the same address takes the session', async () => {
    const { cookies } = await signInOverHttp(provider, server.base, 'bob');
    // Both answer for one public URL (a load balancer's): the same audience, the same origin.
    const second = await startHarness({
      config: { ...server.config, server: { publicUrl: server.base } },
      database: server.h.database,
    });
    try {
      const response = await fetch(second.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: cookieHeader(cookies),
          origin: server.base,
          ...SESSION_HEADER,
        },
        body: JSON.stringify({ query: VIEWER }),
      });
      expect((await response.json()).data.viewer).toMatchObject({ id: 'bob', roles: ['reviewer'] });
      const info = await fetch(second.url.replace('/graphql', '/auth/session'), {
        headers: { cookie: cookieHeader(cookies), origin: server.base, ...SESSION_HEADER },
      });
      expect(await info.json()).toMatchObject({ signedIn: true, user: 'bob' });
    } finally {
      await second.close();
    }
  });

  it('behind an https public URL: Secure cookies, the session under the __Host- prefix', async () => {
    const publicUrl = 'https://toolgate.example.test';
    const client = await registerInboxClient(provider, publicUrl);
    // TLS ends in front of it (a proxy): the server itself speaks plain http on loopback.
    const behind = await startHarness({
      config: {
        ...testConfig(),
        server: { publicUrl },
        auth: authConfig.parse({
          // The provider here issues tokens for loopback resources only: the audience is the server's own address.
          oidc: { issuer: provider.issuer, audience: server.base },
          inbox: { ...client, session: { secret: SESSION_SECRET } },
        }),
      },
    });
    try {
      const local = behind.url.replace('/graphql', '');
      const login = await fetch(`${local}/auth/login`, { redirect: 'manual' });
      const [pending] = login.headers.getSetCookie();
      expect(pending).toMatch(
        /^__Secure-toolgate_sign_in=[^;]+; Path=\/auth\/callback; Max-Age=60\d; HttpOnly; SameSite=Lax; Secure$/,
      );
      const back = await provider.signIn(login.headers.get('location')!, 'alice');
      expect(back.origin).toBe(publicUrl);
      const callback = await fetch(`${local}${back.pathname}${back.search}`, {
        redirect: 'manual',
        headers: { cookie: cookieHeader(setCookies(login)) },
      });
      expect(callback.status).toBe(303);
      const session = callback.headers.getSetCookie().find((cookie) => cookie.includes('toolgate_session='))!;
      expect(session).toMatch(/^__Host-toolgate_session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await behind.close();
    }
  });

  it('says so when the provider cannot be reached, and signs in once it is back', async () => {
    const freshLog = memoryLog('info');
    const fresh = await startSignInServer(provider, testConfig(), { harness: { logger: freshLog.logger } });
    await provider.stop();
    try {
      const down = await fetch(`${fresh.base}/auth/login`, { redirect: 'manual' });
      expect(down.status).toBe(503);
      expect(await down.text()).toContain('The identity provider cannot be reached.');
      expect(down.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(freshLog.find('identity provider unreachable')).toHaveLength(1);
    } finally {
      await provider.start();
    }
    const { callback } = await signInOverHttp(provider, fresh.base, 'alice');
    expect(callback.status).toBe(303);
    await fresh.h.close();
  });

  it('closes a graphql-ws socket at its token\'s expiry with 4401 "Token expired"', async () => {
    const token = await provider.accessToken('bob', { resource: server.base, ttlSeconds: 2 });
    const opened = Date.now();
    const socket = await connect({}, { authorization: `Bearer ${token}` });
    expect(await socket.acked).toBe(true);
    const closed = await socket.closed;
    expect(closed).toEqual({ code: 4401, reason: 'Token expired' });
    expect(Date.now() - opened).toBeGreaterThan(500);
  });
});
