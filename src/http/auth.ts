// Who is asking: bearer tokens from the config file, or the single admin user `local` when there is no `auth`
// section. One Authenticator serves HTTP (the Authorization header) and WebSocket (connectionParams.authorization).
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import { BEARER_TOKEN_CHARS, BEARER_TOKEN_FORMAT, isBearerToken } from '../config/bearer-token.js';
import { ConfigError, resolveSecret } from '../config/load.js';
import type { ToolgateConfig } from '../config/schema.js';
import type { Viewer } from '../app/viewer.js';

/** Turns the `Authorization` value of a request (HTTP header, or connectionParams.authorization over WebSocket) into a viewer. */
export interface Authenticator {
  /** null: no valid credentials. */
  authenticate(authorization: string | null | undefined): Viewer | null;
}

export const LOCAL_VIEWER: Viewer = { id: 'local', isAdmin: true, roles: [] };

/** No `auth` section: everyone is the single admin user `local` (the server then listens on loopback only). */
export const localAuthenticator: Authenticator = {
  authenticate: () => LOCAL_VIEWER,
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
  const entries = auth.tokens.map((entry, i) => ({
    digest: digest(usableToken(entry.token, `${where}: auth.tokens[${i}].token`)),
    viewer: { id: entry.user, isAdmin: entry.admin, roles: [...new Set(entry.roles ?? [])] } satisfies Viewer,
  }));
  entries.forEach((entry, i) => {
    const earlier = entries.findIndex((other) => other.digest.equals(entry.digest));
    if (earlier !== i)
      throw new ConfigError(`${where}: auth.tokens[${i}].token: the same token as auth.tokens[${earlier}]`);
  });
  return {
    authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === null) return null;
      const presented = digest(token);
      let found: Viewer | null = null;
      for (const entry of entries) {
        if (timingSafeEqual(entry.digest, presented)) found = entry.viewer;
      }
      return found;
    },
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

/** The authenticator for a config: tokens when it has an `auth` section, else the local admin. */
export function createAuthenticator(config: ToolgateConfig, where = '<config>'): Authenticator {
  return config.auth ? createTokenAuthenticator(config.auth, where) : localAuthenticator;
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

/** The error of a request without valid credentials where they are required: HTTP 401, extensions.code UNAUTHENTICATED. */
export function unauthenticatedError(): GraphQLError {
  return new GraphQLError(
    'Authentication required: send "Authorization: Bearer <token>" with a token from the server\'s config.',
    {
      extensions: { code: 'UNAUTHENTICATED', http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } } },
    },
  );
}

/** The viewer of an HTTP request or a WebSocket operation, or the UNAUTHENTICATED error. */
export function viewerOrThrow(auth: Authenticator, authorization: string | null | undefined): Viewer {
  const viewer = auth.authenticate(authorization);
  if (!viewer) throw unauthenticatedError();
  return viewer;
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
): { plugin: Plugin; viewerOf(request: Request): Viewer } {
  const viewers = new WeakMap<Request, Viewer>();
  return {
    plugin: {
      onParams({ request }) {
        const viewer = auth.authenticate(request.headers.get('authorization'));
        if (!viewer) {
          onRefused?.();
          throw unauthenticatedError();
        }
        viewers.set(request, viewer);
      },
    },
    viewerOf: (request) => viewers.get(request) ?? viewerOrThrow(auth, request.headers.get('authorization')),
  };
}

/**
 * Close codes of graphql-ws for a refused connection. toolgate closes every connection without valid
 * credentials (no token, malformed, unknown) with 4401, the WebSocket twin of HTTP 401; 4403 is what
 * graphql-ws itself sends when onConnect returns false, and toolgate does not send it for tokens.
 */
export const WS_UNAUTHORIZED = { code: 4401, reason: 'Unauthorized' } as const;

export type ConnectionAuth = { ok: true; viewer: Viewer } | { ok: false; code: number; reason: string };

/** The rule for graphql-ws `onConnect`: the token travels in `connectionParams.authorization`, e.g. "Bearer abc". */
export function authenticateConnection(
  auth: Authenticator,
  connectionParams: Readonly<Record<string, unknown>> | null | undefined,
): ConnectionAuth {
  const authorization = connectionParams?.authorization;
  const viewer = auth.authenticate(typeof authorization === 'string' ? authorization : null);
  return viewer ? { ok: true, viewer } : { ok: false, ...WS_UNAUTHORIZED };
}

/** Whether a listen address reaches this machine only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
