// Who is asking: bearer tokens from the config file, JWT access tokens of the OpenID providers it names
// (src/identity/oidc.ts), or the single admin user `local` when there is no `auth` section. One Authenticator serves
// HTTP (the Authorization header) and WebSocket (connectionParams.authorization).
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import { BEARER_TOKEN_CHARS, BEARER_TOKEN_FORMAT, isBearerToken } from '../config/bearer-token.js';
import { ConfigError, resolveSecret } from '../config/load.js';
import type { ToolgateConfig } from '../config/schema.js';
import type { Viewer } from '../app/viewer.js';
import {
  NO_VALID_TOKEN,
  NOT_AUTHENTICATED,
  type Authentication,
  type AuthenticationRefusal,
  type Authenticator,
} from '../identity/authentication.js';
import { createOidcAuthenticator, type OidcAuthenticator } from '../identity/oidc.js';
import type { KeyTimings } from '../identity/oidc-keys.js';
import { publicUrl as publicUrlOf, type PublicUrl } from '../identity/public-url.js';

export { NO_VALID_TOKEN, NOT_AUTHENTICATED, type Authentication, type AuthenticationRefusal, type Authenticator };

export const LOCAL_VIEWER: Viewer = { id: 'local', isAdmin: true, roles: [] };

/** No `auth` section: everyone is the single admin user `local` (the server then listens on loopback only). */
export const localAuthenticator: Authenticator = {
  authenticate: () => Promise.resolve({ ok: true, viewer: LOCAL_VIEWER }),
};

type AuthConfig = NonNullable<ToolgateConfig['auth']>;

/** SHA-256 first, so that the comparison below always compares 32 bytes: a token's length does not leak. */
const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * Bearer tokens from `auth.tokens` (literal or `env:NAME`), resolved once at start. Every known token is
 * compared, in constant time, whatever matched: the time taken does not tell how close a guess was or which
 * entry it hit.
 */
export function createTokenAuthenticator(auth: AuthConfig, where = '<config>'): Authenticator {
  const tokens = staticTokens(auth, where);
  return {
    authenticate(authorization) {
      const token = bearerToken(authorization);
      const viewer = token === null ? null : tokens(token);
      return Promise.resolve(viewer ? { ok: true, viewer } : NOT_AUTHENTICATED);
    },
  };
}

/** The viewer of a static token, or null; every entry compared in constant time. */
function staticTokens(auth: AuthConfig, where: string): (token: string) => Viewer | null {
  const entries = (auth.tokens ?? []).map((entry, i) => ({
    digest: digest(usableToken(entry.token, `${where}: auth.tokens[${i}].token`)),
    viewer: { id: entry.user, isAdmin: entry.admin, roles: [...new Set(entry.roles ?? [])] } satisfies Viewer,
  }));
  entries.forEach((entry, i) => {
    const earlier = entries.findIndex((other) => other.digest.equals(entry.digest));
    if (earlier !== i)
      throw new ConfigError(`${where}: auth.tokens[${i}].token: the same token as auth.tokens[${earlier}]`);
  });
  return (token) => {
    const presented = digest(token);
    let found: Viewer | null = null;
    for (const entry of entries) {
      if (timingSafeEqual(entry.digest, presented)) found = entry.viewer;
    }
    return found;
  };
}

/**
 * The token of a config entry, resolved; one that no request could present is a config error (the loader checked a
 * literal already; a config given in code and an env:NAME value are checked here).
 */
function usableToken(value: string, where: string): string {
  const token = resolveSecret(value, where);
  if (!isBearerToken(token)) {
    const what = value.startsWith('env:') ? `the environment variable ${value.slice(4)}` : 'the token';
    throw new ConfigError(`${where}: ${what} cannot be sent as a bearer token: expected ${BEARER_TOKEN_FORMAT}`);
  }
  return token;
}

/** How the server knows people: its authenticator, and the identity providers it trusts with the URL it is at. */
export interface Identity {
  authenticator: Authenticator;
  /** auth.oidc's issuers and audiences; null without auth.oidc. */
  oidc: OidcAuthenticator | null;
  /** The URL this server is reached at (server.publicUrl, else where it listens). */
  publicUrl: PublicUrl;
}

/**
 * The identity of a config: static tokens and OpenID providers' tokens when it has an `auth` section (a static token
 * is looked up first; a JWT no static entry holds goes to its issuer), else the local admin.
 */
export function createIdentity(
  config: ToolgateConfig,
  where = '<config>',
  options: { keyTimings?: KeyTimings } = {},
): Identity {
  const publicUrl = publicUrlOf(config.server?.publicUrl);
  const auth = config.auth;
  if (!auth) return { authenticator: localAuthenticator, oidc: null, publicUrl };
  const tokens = staticTokens(auth, where);
  const oidc = auth.oidc
    ? createOidcAuthenticator(auth.oidc, { defaultAudience: publicUrl.get, keyTimings: options.keyTimings }, where)
    : null;
  const authenticator: Authenticator = {
    authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === null) return Promise.resolve(NOT_AUTHENTICATED);
      const viewer = tokens(token);
      if (viewer) return Promise.resolve({ ok: true, viewer });
      return oidc?.authenticate(token) ?? Promise.resolve(NOT_AUTHENTICATED);
    },
  };
  return { authenticator, oidc, publicUrl };
}

/** The authenticator for a config: tokens when it has an `auth` section, else the local admin. */
export function createAuthenticator(config: ToolgateConfig, where = '<config>'): Authenticator {
  return createIdentity(config, where).authenticator;
}

const BEARER = new RegExp(`^Bearer +(${BEARER_TOKEN_CHARS}+) *$`, 'i');

/**
 * `Bearer <token>` (the scheme is case-insensitive, RFC 7235), the token in the syntax the config allows
 * (src/config/bearer-token.ts); anything else is no credentials.
 */
export function bearerToken(authorization: unknown): string | null {
  if (typeof authorization !== 'string') return null;
  const match = BEARER.exec(authorization);
  return match ? match[1]! : null;
}

export const AUTHENTICATION_REQUIRED =
  'Authentication required: send "Authorization: Bearer <token>" with a token from the server\'s config.';

/** The words of a refusal for a client: how to authenticate when nothing valid came, else the reason. */
export function refusalMessage(refusal: AuthenticationRefusal): string {
  if (refusal.status === 503) return `Authentication unavailable: ${refusal.reason}; try again later.`;
  return refusal.reason === NO_VALID_TOKEN ? AUTHENTICATION_REQUIRED : `Authentication refused: ${refusal.reason}.`;
}

/**
 * The `WWW-Authenticate` value of a 401 (RFC 6750): the scheme alone when no token was valid, with
 * error="invalid_token" and its reason when a token was presented and refused for a reason of its own.
 */
export function bearerChallenge(refusal: AuthenticationRefusal): string {
  if (refusal.reason === NO_VALID_TOKEN) return 'Bearer';
  return `Bearer error="invalid_token", error_description="${refusal.reason.replace(/["\\]/g, '')}"`;
}

/**
 * The error of a request refused for its credentials where they are required: HTTP 401 with extensions.code
 * UNAUTHENTICATED, or 503 with AUTHENTICATION_UNAVAILABLE when they cannot be checked now.
 */
export function unauthenticatedError(refusal: AuthenticationRefusal = NOT_AUTHENTICATED): GraphQLError {
  if (refusal.status === 503) {
    return new GraphQLError(refusalMessage(refusal), {
      extensions: { code: 'AUTHENTICATION_UNAVAILABLE', http: { status: 503, headers: { 'Retry-After': '5' } } },
    });
  }
  return new GraphQLError(refusalMessage(refusal), {
    extensions: {
      code: 'UNAUTHENTICATED',
      http: { status: 401, headers: { 'WWW-Authenticate': bearerChallenge(refusal) } },
    },
  });
}

/** The viewer of an HTTP request or a WebSocket operation, or the UNAUTHENTICATED error. */
export async function viewerOrThrow(auth: Authenticator, authorization: string | null | undefined): Promise<Viewer> {
  const result = await auth.authenticate(authorization);
  if (!result.ok) throw unauthenticatedError(result);
  return result.viewer;
}

/**
 * The credentials of an HTTP request, checked once, as soon as its GraphQL params are read: before the document is
 * parsed and validated, so that without a valid token a client learns nothing of the schema (a validation error
 * would name types and fields, also with introspection off). `viewerOf` hands the viewer found there to the context
 * factory, which does not check the token again.
 */
export function requestAuthentication(
  auth: Authenticator,
  onRefused?: () => void,
): { plugin: Plugin; viewerOf(request: Request): Viewer | Promise<Viewer> } {
  const viewers = new WeakMap<Request, Viewer>();
  return {
    plugin: {
      async onParams({ request }) {
        const result = await auth.authenticate(request.headers.get('authorization'));
        if (!result.ok) {
          onRefused?.();
          throw unauthenticatedError(result);
        }
        viewers.set(request, result.viewer);
      },
    },
    viewerOf: (request) => viewers.get(request) ?? viewerOrThrow(auth, request.headers.get('authorization')),
  };
}

/**
 * Close codes of graphql-ws for a refused connection. toolgate closes every connection without valid
 * credentials (no token, malformed, unknown) with 4401, the WebSocket twin of HTTP 401; 4403 is what
 * graphql-ws itself sends when onConnect returns false, and toolgate does not send it for tokens. Credentials that
 * cannot be checked now (the identity provider unreachable) close with 1013, "try again later".
 */
export const WS_UNAUTHORIZED = { code: 4401, reason: 'Unauthorized' } as const;
export const WS_TRY_AGAIN_LATER = 1013;

export type ConnectionAuth = { ok: true; viewer: Viewer } | { ok: false; code: number; reason: string };

/** A close frame's reason holds 123 bytes at most. */
const closeReason = (text: string): string => (Buffer.byteLength(text) <= 123 ? text : `${text.slice(0, 119)}...`);

/** The rule for graphql-ws `onConnect`: the token travels in `connectionParams.authorization`, e.g. "Bearer abc". */
export async function authenticateConnection(
  auth: Authenticator,
  connectionParams: Readonly<Record<string, unknown>> | null | undefined,
): Promise<ConnectionAuth> {
  const authorization = connectionParams?.authorization;
  const result = await auth.authenticate(typeof authorization === 'string' ? authorization : null);
  if (result.ok) return result;
  if (result.status === 503) {
    return { ok: false, code: WS_TRY_AGAIN_LATER, reason: closeReason(`Try again later: ${result.reason}`) };
  }
  if (result.reason === NO_VALID_TOKEN) return { ok: false, ...WS_UNAUTHORIZED };
  return { ok: false, code: WS_UNAUTHORIZED.code, reason: closeReason(`Unauthorized: ${result.reason}`) };
}

/** Whether a listen address reaches this machine only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
