// A toolgate whose inbox signs in through the tests' OpenID provider (test/support/oidc-provider.ts): the inbox's client
// registered at the provider by dynamic registration (its redirect URI names the server's port, chosen first), and
// helpers that sign in over plain HTTP the way a browser would.
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { authConfig, type ToolgateConfig } from '../../src/config/schema.js';
import { startHarness, type Harness } from './harness.js';
import type { OidcProvider } from './oidc-provider.js';

export const SESSION_SECRET = 'a-session-secret-of-the-tests-0123456789';
export const SESSION_HEADER = { 'x-toolgate-csrf': '1' };

export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A confidential client for the inbox at `base` (http://127.0.0.1:<port>), registered dynamically; with `renews`
 * false it may not use refresh tokens (its sessions end with their first access token).
 */
export async function registerInboxClient(
  provider: OidcProvider,
  base: string,
  renews = true,
): Promise<{ clientId: string; clientSecret: string }> {
  const response = await fetch(`${provider.issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'toolgate inbox (tests)',
      redirect_uris: [`${base}/auth/callback`],
      post_logout_redirect_uris: [`${base}/inbox`],
      grant_types: renews ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }),
  });
  const body = (await response.json()) as { client_id?: string; client_secret?: string };
  if (!response.ok || !body.client_id || !body.client_secret) {
    throw new Error(`client registration answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

export interface SignInServer {
  h: Harness;
  /** http://127.0.0.1:<port> */
  base: string;
  /** The config it runs with (to start a second instance beside it). */
  config: ToolgateConfig;
}

/** A toolgate on a port of its own that accepts `provider`'s tokens (auth.oidc) and whose inbox signs in there. */
export async function startSignInServer(
  provider: OidcProvider,
  config: ToolgateConfig,
  options: {
    inbox?: Partial<NonNullable<NonNullable<ToolgateConfig['auth']>['inbox']>>;
    /** Whether the provider lets the inbox's client renew with refresh tokens (default yes). */
    renews?: boolean;
    harness?: Parameters<typeof startHarness>[0];
  } = {},
): Promise<SignInServer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const client = await registerInboxClient(provider, base, options.renews ?? true);
  const fullConfig: ToolgateConfig = {
    ...config,
    // Through the schema, as a config file would be: its defaults filled in, its checks made.
    auth: authConfig.parse({
      ...config.auth,
      oidc: { issuer: provider.issuer },
      inbox: {
        ...client,
        session: { secret: SESSION_SECRET },
        ...options.inbox,
      },
    }),
  };
  const h = await startHarness({ ...options.harness, port, config: fullConfig });
  return { h, base, config: fullConfig };
}

/** The cookies a response sets, as name → value (a deletion as ''). */
export function setCookies(response: Response): Map<string, string> {
  const found = new Map<string, string>();
  for (const cookie of response.headers.getSetCookie()) {
    const [pair] = cookie.split(';');
    const at = pair!.indexOf('=');
    found.set(pair!.slice(0, at), pair!.slice(at + 1));
  }
  return found;
}

export const cookieHeader = (cookies: Map<string, string>) =>
  [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/**
 * Signs `user` in as a browser would, over HTTP: /auth/login, the provider's login form, /auth/callback. Returns the
 * callback's response (a redirect to the inbox, with the session cookie) and the cookies a browser would then hold.
 */
export async function signInOverHttp(
  provider: OidcProvider,
  base: string,
  user: string,
): Promise<{ callback: Response; cookies: Map<string, string> }> {
  const login = await fetch(`${base}/auth/login?returnTo=/inbox/to-answer`, { redirect: 'manual' });
  if (login.status !== 303) throw new Error(`/auth/login answered ${login.status}`);
  const pending = setCookies(login);
  const back = await provider.signIn(login.headers.get('location')!, user);
  const callback = await fetch(back, { redirect: 'manual', headers: { cookie: cookieHeader(pending) } });
  const cookies = new Map([...setCookies(callback)].filter(([, value]) => value !== ''));
  return { callback, cookies };
}
