// What a bearer token may be: one or more visible ASCII characters (RFC 9110 VCHAR, "!" to "~"), which is what
// "Authorization: Bearer <token>" carries through every client: no spaces (they end the token), no control
// characters (HTTP refuses them), nothing beyond ASCII (clients send UTF-8 and Node reads header bytes as Latin-1, so
// such a token would match from some clients and not others). RFC 6750's b64token is a subset: every token it allows
// is allowed here. The config refuses any other token (it could never log in), and the authenticator reads the same
// syntax from a request.

export const BEARER_TOKEN_FORMAT = 'one or more visible ASCII characters ("!" to "~"; no spaces)';

/** The token characters, for the Authorization header's pattern. */
export const BEARER_TOKEN_CHARS = '[\\x21-\\x7E]';

const TOKEN = new RegExp(`^${BEARER_TOKEN_CHARS}+$`);

export function isBearerToken(value: string): boolean {
  return TOKEN.test(value);
}
