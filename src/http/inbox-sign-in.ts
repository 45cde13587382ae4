// The inbox signs in through the organisation's OpenID provider, with this server as its backend (a
// "backend-for-frontend", the shape the OAuth 2.0 for Browser-Based Apps BCP recommends): the server runs the
// Authorization Code flow with PKCE, state and nonce (openid-client), keeps the tokens in an encrypted HttpOnly cookie
// (src/http/session-cookie.ts) and renews them with the refresh token; the page never holds a token. Requests that the
// cookie authenticates hand its access token to the same authenticator as a bearer token, so one set of rules decides
// who a person is and which roles they hold.
//
//   GET  /auth/login     starts a sign-in (?returnTo=/inbox/…), redirects to the provider
//   GET  /auth/callback  the provider's redirect back: code for tokens, session cookie, redirect to the inbox
//   GET  /auth/session   who is signed in and until when; renews the tokens when they near their end; 401 when over
//   POST /auth/logout    ends the session (and at the provider, when it offers RP-initiated logout)
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import type { Viewer } from '../app/viewer.js';
import { INBOX_PATH } from './inbox.js';
import { asksForSession, crossOriginRequest } from './same-origin.js';
import { derivedKey, requestCookies, sealedCookie, type SealedCookie } from './session-cookie.js';

export const AUTH_PATH = '/auth';

/** What the authenticator says of a bearer token (src/http/auth.ts). */
export type BearerCheck = (
  authorization: string,
) => Promise<{ ok: true; viewer: Viewer } | { ok: false; status: number; reason: string }>;

export interface InboxSignInOptions {
  issuer: string;
  clientId: string;
  /** A confidential client's secret (client_secret_basic); without one the client is public (PKCE only). */
  clientSecret?: string;
  scopes: string[];
  /** The resource indicator (RFC 8707) asked for: the audience of the access tokens; null sends none. */
  resource: () => string | null;
  /** More parameters of the authorization request (e.g. prompt=consent, which some providers want for offline_access). */
  authorizationParams: Record<string, string>;
  /** The secret the session cookie's key is derived from; every instance behind one address needs the same. */
  sessionSecret: string;
  /** The longest a session lasts from sign-in, renewals or not, in seconds. */
  sessionMaxAgeSeconds: number;
  /** This server's public URL (scheme, host, port): redirect URIs are made from it. */
  publicUrl: () => string;
  /** Whether publicUrl is configured (then Origin must be exactly its origin) or the address listened on. */
  publicUrlConfigured: boolean;
  authenticate: BearerCheck;
  logger?: Logger;
  onError?: (error: unknown) => void;
}

/** The sign-in in progress, between /auth/login and /auth/callback. */
interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

/** The session: tokens and their times (epoch ms). */
interface Session {
  accessToken: string;
  refreshToken?: string;
  /** When the access token was obtained and when it ends. */
  obtainedAt: number;
  accessExpiresAt: number;
  /** The end of the session, renewals or not. */
  endsAt: number;
}

const SIGN_IN_SECONDS = 600;
/** The longest an access token is taken to last when neither the provider nor the authenticator says. */
const DEFAULT_TOKEN_SECONDS = 300;

export interface InboxSignIn {
  handles(req: IncomingMessage): boolean;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /**
   * For a request to the API that asks for the session (our header): `Bearer <access token>`, or null without a
   * session; a refusal (403) when the request comes from another origin's page.
   */
  authorizationOf(req: IncomingMessage): Promise<{ authorization: string | null } | { refused: string }>;
  /** For a WebSocket upgrade: a refusal when it carries the session cookie and comes from another origin's page. */
  refuseUpgrade(req: IncomingMessage): string | null;
  /** `Bearer <access token>` of the session cookie of a WebSocket upgrade; null without a session. */
  upgradeAuthorization(req: IncomingMessage): Promise<string | null>;
}

export function createInboxSignIn(options: InboxSignInOptions): InboxSignIn {
  const secure = () => options.publicUrl().startsWith('https:');
  // __Host-: the browser takes the cookie only over https, for this host, for every path (no Domain): neither a
  // sibling subdomain nor a plain-http page can plant or overwrite it.
  const cookieName = (name: string) => (secure() ? `__Host-${name}` : name);
  const sessionKey = derivedKey(options.sessionSecret, 'inbox session');
  const signInKey = derivedKey(options.sessionSecret, 'inbox sign-in');
  const sessionCookie = (): SealedCookie<Session> =>
    sealedCookie({ name: cookieName('toolgate_session'), key: sessionKey, path: '/', secure: secure() });
  // The pending sign-in goes to /auth/callback only. (__Host- needs Path=/, so it is kept for the session.)
  const signInCookie = (): SealedCookie<PendingSignIn> =>
    sealedCookie({
      name: secure() ? '__Secure-toolgate_sign_in' : 'toolgate_sign_in',
      key: signInKey,
      path: `${AUTH_PATH}/callback`,
      secure: secure(),
    });
  const publicOrigin = () => (options.publicUrlConfigured ? new URL(options.publicUrl()).origin : null);
  const redirectUri = () => new URL(`${AUTH_PATH}/callback`, options.publicUrl()).href;

  // Discovery on first use, retried on the next request after a failure: the provider may be down when we start.
  let discovered: Promise<oidc.Configuration> | null = null;
  const provider = (): Promise<oidc.Configuration> => {
    discovered ??= discover(options).catch((error: unknown) => {
      discovered = null;
      throw error;
    });
    return discovered;
  };

  // Renewals in flight or just done, by refresh token: two tabs that renew at once send the provider one request
  // (a refresh token used twice may end the whole grant where the provider rotates them). A renewal done is reused
  // only while its token is not due for renewal itself.
  const renewals = new Map<string, { renewal: Promise<Session>; done?: Session }>();
  const renew = (session: Session): Promise<Session> => {
    const token = session.refreshToken!;
    const known = renewals.get(token);
    if (known && (!known.done || Date.now() < renewAt(known.done))) return known.renewal;
    const entry: { renewal: Promise<Session>; done?: Session } = { renewal: renewSession(session) };
    renewals.set(token, entry);
    entry.renewal.then(
      (done) => {
        entry.done = done;
        setTimeout(() => {
          if (renewals.get(token) === entry) renewals.delete(token);
        }, 30_000).unref();
      },
      () => {
        if (renewals.get(token) === entry) renewals.delete(token);
      },
    );
    return entry.renewal;
  };
  const renewSession = async (session: Session): Promise<Session> => {
    const config = await provider();
    const tokens = await oidc.refreshTokenGrant(config, session.refreshToken!, resourceParams(options));
    return sessionOf(tokens, session.endsAt, session.refreshToken);
  };

  const sessionOf = (
    tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
    endsAt: number,
    previousRefreshToken?: string,
  ): Session => {
    const now = Date.now();
    const expiresIn = tokens.expiresIn() ?? DEFAULT_TOKEN_SECONDS;
    return {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? previousRefreshToken,
      obtainedAt: now,
      accessExpiresAt: now + expiresIn * 1000,
      endsAt,
    };
  };

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let config: oidc.Configuration;
    try {
      config = await provider();
    } catch (error) {
      options.logger?.warn({ reason: reasonOf(error) }, 'identity provider unreachable');
      return page(res, 503, 'Sign-in is not available', 'The identity provider cannot be reached. Try again shortly.');
    }
    const pending: PendingSignIn = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      returnTo: inboxPathOf(new URL(req.url ?? '/', 'http://x').searchParams.get('returnTo')),
    };
    const cookies = requestCookies(req.headers);
    const setCookies = await signInCookie().seal(pending, Date.now() + SIGN_IN_SECONDS * 1000, cookies);
    const url = oidc.buildAuthorizationUrl(config, {
      ...options.authorizationParams,
      redirect_uri: redirectUri(),
      scope: options.scopes.join(' '),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      ...resourceParams(options),
    });
    redirect(res, url.href, setCookies);
  }

  async function callback(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cookies = requestCookies(req.headers);
    const pending = await signInCookie().open(cookies);
    const clearPending = signInCookie().clear(cookies);
    if (!pending) {
      return page(
        res,
        400,
        'Sign-in refused',
        'This sign-in was not started here, or took longer than 10 minutes. Start again.',
        clearPending,
      );
    }
    let session: Session;
    try {
      const config = await provider();
      const current = new URL(req.url ?? '/', options.publicUrl());
      const tokens = await oidc.authorizationCodeGrant(
        config,
        current,
        { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce },
        resourceParams(options),
      );
      session = sessionOf(tokens, Date.now() + options.sessionMaxAgeSeconds * 1000);
    } catch (error) {
      options.logger?.warn({ reason: reasonOf(error) }, 'inbox sign-in refused');
      return page(res, 400, 'Sign-in refused', `The sign-in did not complete: ${reasonOf(error)}.`, clearPending);
    }
    const checked = await options.authenticate(`Bearer ${session.accessToken}`);
    if (!checked.ok) {
      options.logger?.warn({ reason: checked.reason }, 'inbox sign-in: the access token is not accepted');
      return page(
        res,
        checked.status === 503 ? 503 : 403,
        'Sign-in refused',
        `You signed in at the identity provider, but this server does not accept its token: ${checked.reason}.`,
        clearPending,
      );
    }
    session.accessExpiresAt = checked.viewer.expiresAt ?? session.accessExpiresAt;
    options.logger?.info({ viewerId: checked.viewer.id }, 'inbox signed in');
    let setCookies: string[];
    try {
      setCookies = await sessionCookie().seal(session, session.endsAt, cookies);
    } catch (error) {
      options.logger?.warn({ reason: reasonOf(error) }, 'inbox sign-in: no session cookie');
      return page(
        res,
        500,
        'Sign-in failed',
        `${reasonOf(error)}: the provider's tokens are too large (ask it for fewer claims, e.g. fewer groups).`,
        clearPending,
      );
    }
    redirect(res, pending.returnTo, [...clearPending, ...setCookies]);
  }

  async function sessionInfo(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cookies = requestCookies(req.headers);
    const cookie = sessionCookie();
    const signedOut = (reason: string) =>
      json(res, 401, { signedIn: false, reason }, cookie.presentIn(cookies) ? cookie.clear(cookies) : []);
    let session = await cookie.open(cookies);
    if (!session) return signedOut('not signed in');
    const now = Date.now();
    if (now >= session.endsAt) return signedOut('the session is over');
    let renewed = false;
    if (now >= renewAt(session)) {
      if (!session.refreshToken) {
        if (now >= session.accessExpiresAt) return signedOut('the access token expired and cannot be renewed');
      } else {
        try {
          session = await renew(session);
          renewed = true;
        } catch (error) {
          if (error instanceof oidc.ResponseBodyError) {
            options.logger?.info({ reason: reasonOf(error) }, 'inbox session not renewed');
            return signedOut('the identity provider ended the session');
          }
          options.logger?.warn({ reason: reasonOf(error) }, 'inbox session renewal failed');
          // Down for now: the page keeps the session and asks again.
          if (now < session.accessExpiresAt) return json(res, 200, describe(session, null));
          return json(res, 503, { signedIn: true, reason: 'the identity provider cannot be reached' });
        }
      }
    }
    const checked = await options.authenticate(`Bearer ${session.accessToken}`);
    if (!checked.ok) {
      if (checked.status === 503) return json(res, 503, { signedIn: true, reason: checked.reason });
      return signedOut(checked.reason);
    }
    if (checked.viewer.expiresAt !== undefined) session.accessExpiresAt = checked.viewer.expiresAt;
    const setCookies = renewed ? await cookie.seal(session, session.endsAt, cookies) : [];
    return json(res, 200, describe(session, checked.viewer), setCookies);
  }

  async function logout(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cookies = requestCookies(req.headers);
    const cookie = sessionCookie();
    const session = await cookie.open(cookies);
    let providerLogoutUrl: string | null = null;
    if (session) {
      try {
        const config = await provider();
        // A copy of the cookie, wherever it went, can no longer be renewed.
        if (session.refreshToken && config.serverMetadata().revocation_endpoint) {
          await oidc.tokenRevocation(config, session.refreshToken, { token_type_hint: 'refresh_token' });
        }
        if (config.serverMetadata().end_session_endpoint) {
          providerLogoutUrl = oidc.buildEndSessionUrl(config, {
            post_logout_redirect_uri: new URL(INBOX_PATH, options.publicUrl()).href,
          }).href;
        }
      } catch (error) {
        options.logger?.warn({ reason: reasonOf(error) }, 'inbox sign-out: the identity provider was not told');
      }
    }
    options.logger?.info({}, 'inbox signed out');
    json(res, 200, { signedIn: false, providerLogoutUrl }, cookie.clear(cookies));
  }

  return {
    handles(req) {
      const path = pathOf(req);
      return path === AUTH_PATH || path.startsWith(`${AUTH_PATH}/`);
    },
    async serve(req, res) {
      const path = pathOf(req);
      const route = ROUTES[path];
      if (!route) return json(res, 404, { error: 'not found' });
      if (req.method !== route.method && !(route.method === 'GET' && req.method === 'HEAD')) {
        return json(res, 405, { error: `use ${route.method}` }, [], { allow: route.method });
      }
      // The two that read or end the session answer the inbox's own scripts only.
      if (route.script) {
        const refusal = crossOriginRequest(req.headers, publicOrigin());
        if (refusal) return json(res, 403, { error: refusal });
        if (!asksForSession(req.headers)) return json(res, 403, { error: 'missing the header X-Toolgate-CSRF' });
      }
      try {
        await { login, callback, session: sessionInfo, logout }[route.handler](req, res);
      } catch (error) {
        options.onError?.(error);
        if (!res.headersSent) json(res, 500, { error: 'internal error' });
        else res.end();
      }
    },
    async authorizationOf(req) {
      // Without our header the cookie is not used at all: a form or a link of another site gets no further than a
      // request without credentials.
      if (!asksForSession(req.headers)) return { authorization: null };
      const cookies = requestCookies(req.headers);
      const cookie = sessionCookie();
      if (!cookie.presentIn(cookies)) return { authorization: null };
      const refusal = crossOriginRequest(req.headers, publicOrigin());
      if (refusal) return { refused: refusal };
      const session = await cookie.open(cookies);
      return { authorization: session ? `Bearer ${session.accessToken}` : null };
    },
    refuseUpgrade(req) {
      if (!sessionCookie().presentIn(requestCookies(req.headers))) return null;
      return crossOriginRequest(req.headers, publicOrigin());
    },
    async upgradeAuthorization(req) {
      const session = await sessionCookie().open(requestCookies(req.headers));
      return session ? `Bearer ${session.accessToken}` : null;
    },
  };
}

const ROUTES: Record<
  string,
  { method: 'GET' | 'POST'; handler: 'login' | 'callback' | 'session' | 'logout'; script: boolean }
> = {
  [`${AUTH_PATH}/login`]: { method: 'GET', handler: 'login', script: false },
  [`${AUTH_PATH}/callback`]: { method: 'GET', handler: 'callback', script: false },
  [`${AUTH_PATH}/session`]: { method: 'GET', handler: 'session', script: true },
  [`${AUTH_PATH}/logout`]: { method: 'POST', handler: 'logout', script: true },
};

/**
 * When the session renews its access token: in the last quarter of the token's life, at most the last minute. The
 * inbox asks at that moment; a request before it gets the same token back.
 */
function renewAt(session: Session): number {
  const lifetime = session.accessExpiresAt - session.obtainedAt;
  return session.accessExpiresAt - Math.min(60_000, Math.max(1000, lifetime / 4));
}

/** What the inbox needs to know: who, and when to come back for a renewal (relative: the page's clock may be wrong). */
function describe(session: Session, viewer: Viewer | null) {
  const now = Date.now();
  return {
    signedIn: true,
    ...(viewer ? { user: viewer.id, name: viewer.name ?? null } : {}),
    expiresAt: new Date(session.accessExpiresAt).toISOString(),
    renewInMs: session.refreshToken ? Math.max(0, Math.min(renewAt(session), session.endsAt) - now) : null,
  };
}

function resourceParams(options: InboxSignInOptions): Record<string, string> {
  const resource = options.resource();
  return resource ? { resource } : {};
}

async function discover(options: InboxSignInOptions): Promise<oidc.Configuration> {
  const issuer = new URL(options.issuer);
  // Plain http only to a provider on this machine (development, the tests); anything else must be https.
  const loopback = issuer.protocol === 'http:' && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(issuer.hostname);
  const config = await oidc.discovery(
    issuer,
    options.clientId,
    options.clientSecret,
    options.clientSecret ? oidc.ClientSecretBasic(options.clientSecret) : oidc.None(),
    { timeout: 10, ...(loopback ? { execute: [oidc.allowInsecureRequests] } : {}) },
  );
  return config;
}

/** Only a page of the inbox: never another site (an open redirect) nor another path of this server. */
function inboxPathOf(value: string | null): string {
  if (!value || !/^\/inbox(\/[A-Za-z0-9._~%/-]*)?(\?[^#\s]*)?$/.test(value) || value.includes('//')) {
    return INBOX_PATH;
  }
  return value;
}

/** One line, no token content: openid-client's errors name the check that failed or the provider's error code. */
function reasonOf(error: unknown): string {
  if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError) {
    return `the identity provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  }
  // openid-client wraps what oauth4webapi found ("unexpected \"state\" response parameter value") in a general error.
  const found = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = found instanceof Error ? found.message : String(found);
  return message.split('\n')[0]!.replace(/\.$/, '');
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function redirect(res: ServerResponse, location: string, cookies: string[]): void {
  res.writeHead(303, { location, 'set-cookie': cookies, 'cache-control': 'no-store', 'content-length': '0' });
  res.end();
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  cookies: string[] = [],
  headers: Record<string, string> = {},
): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(bytes.length),
    'cache-control': 'no-store',
    ...(cookies.length ? { 'set-cookie': cookies } : {}),
    ...headers,
  });
  res.end(bytes);
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A page with no script and no style (the default policy of src/http/security-headers.ts stays). */
function page(res: ServerResponse, status: number, title: string, text: string, cookies: string[] = []): void {
  const body = Buffer.from(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>
<p><a href="${AUTH_PATH}/login">Sign in again</a> · <a href="${INBOX_PATH}">The inbox</a></p></body></html>
`);
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(body.length),
    'cache-control': 'no-store',
    ...(cookies.length ? { 'set-cookie': cookies } : {}),
  });
  res.end(body);
}
