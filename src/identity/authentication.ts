// What an authenticator decides about a request's credentials: who it is, or why not.
import type { Viewer } from '../app/viewer.js';

/**
 * Who a request is, or why it is refused: 401 for credentials that prove nobody (none, unknown, a bad token), 503
 * when they cannot be checked now (the identity provider is unreachable and its keys are not cached). `reason` is
 * one line for the client and the log, never any part of the token.
 */
export type Authentication = { ok: true; viewer: Viewer } | { ok: false; status: 401 | 503; reason: string };

/** A refusal of a request's credentials. */
export type AuthenticationRefusal = Extract<Authentication, { ok: false }>;

/** Turns the `Authorization` value of a request (HTTP header, or connectionParams.authorization over WebSocket) into a viewer. */
export interface Authenticator {
  authenticate(authorization: string | null | undefined): Promise<Authentication>;
}

/** The reason of a request without credentials, or with a token no one was given: the 401 says how to authenticate. */
export const NO_VALID_TOKEN = 'no valid bearer token';

export const NOT_AUTHENTICATED: AuthenticationRefusal = { ok: false, status: 401, reason: NO_VALID_TOKEN };

export const refused = (reason: string): AuthenticationRefusal => ({ ok: false, status: 401, reason });

export const unavailable = (reason: string): AuthenticationRefusal => ({ ok: false, status: 503, reason });
