// `auth.inbox`: the approval inbox signs people in through an identity provider of `auth.oidc`, with the server as its
// backend (src/http/inbox-sign-in.ts): a client registered at the provider for the redirect URI
// <public URL>/auth/callback, the scopes to ask for, and the secret the session cookie is encrypted with (shared by
// every instance).
import { z } from 'zod';

/** The shortest session secret: 32 characters of a random string carry enough for the 256-bit key derived from it. */
export const SESSION_SECRET_MIN_LENGTH = 32;

export const DEFAULT_INBOX_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

/** A scope token of RFC 6749 (printable ASCII but space, quote and backslash). */
const scope = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'expected one scope, without spaces');

export const inboxSignInConfig = z
  .object({
    issuer: z.url().optional().describe('The provider to sign in with, one of auth.oidc; default the only one there'),
    clientId: z.string().min(1).describe('The client registered at the provider for the inbox'),
    clientSecret: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Its secret, for a confidential client (client_secret_basic); "env:NAME" reads it from the environment. Without one the client is public (PKCE only)',
      ),
    scopes: z
      .array(scope)
      .min(1)
      .refine((scopes) => scopes.includes('openid'), 'must include "openid"')
      .optional()
      .describe(
        `Scopes asked for at sign-in (default ${DEFAULT_INBOX_SCOPES.join(' ')}; offline_access brings the refresh token that renews the session)`,
      ),
    resource: z
      .union([z.url(), z.literal(false)])
      .optional()
      .describe(
        'The resource indicator (RFC 8707) sent at sign-in and renewal, the audience of the access tokens; default the audience this server expects; false sends none (Microsoft Entra ID: name the API\'s scope in "scopes" instead)',
      ),
    authorizationParams: z
      .record(z.string().regex(/^[a-z_]+$/), z.string())
      .optional()
      .describe(
        'More parameters of the authorization request, e.g. {"prompt": "consent"} where the provider wants it for offline_access',
      ),
    session: z
      .object({
        secret: z
          .string()
          .min(1)
          .refine(
            (value) => value.startsWith('env:') || value.length >= SESSION_SECRET_MIN_LENGTH,
            `expected at least ${SESSION_SECRET_MIN_LENGTH} characters of a random string, or "env:NAME"`,
          )
          .describe(
            `The key of the session cookie is derived from it: at least ${SESSION_SECRET_MIN_LENGTH} random characters, the same on every instance; "env:NAME" reads it from the environment`,
          ),
        maxAgeHours: z
          .number()
          .positive()
          .max(24 * 30)
          .optional()
          .describe('The longest a session lasts from sign-in, renewals or not (default 12)'),
      })
      .strict()
      .describe('The session cookie (encrypted, HttpOnly, SameSite=Lax)'),
  })
  .strict()
  .describe('Sign-in of the approval inbox through an identity provider of auth.oidc (docs/inbox.md)');

export type InboxSignInConfig = z.infer<typeof inboxSignInConfig>;

export const DEFAULT_SESSION_HOURS = 12;
