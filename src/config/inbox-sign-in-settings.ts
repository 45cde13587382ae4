// `auth.inbox` resolved at start: secrets read (a missing env:NAME stops the start, as for tokens), defaults filled in.
import { ConfigError, resolveSecret } from './load.js';
import { DEFAULT_INBOX_SCOPES, DEFAULT_SESSION_HOURS, SESSION_SECRET_MIN_LENGTH } from './inbox-sign-in.js';
import type { ToolgateConfig } from './schema.js';

export interface InboxSignInSettings {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  scopes: string[];
  /** The resource indicator to send; null: the audience this server expects; false: none. */
  resource: string | false | null;
  authorizationParams: Record<string, string>;
  sessionSecret: string;
  sessionMaxAgeSeconds: number;
}

/** The inbox's sign-in, or null when the config has none (the inbox then asks for a token, or for nothing). */
export function inboxSignInSettings(config: ToolgateConfig, where = '<config>'): InboxSignInSettings | null {
  const inbox = config.auth?.inbox;
  if (!inbox) return null;
  const oidc = config.auth?.oidc;
  const issuers = oidc === undefined ? [] : (Array.isArray(oidc) ? oidc : [oidc]).map((entry) => entry.issuer);
  if (issuers.length === 0) {
    throw new ConfigError(
      `${where}: auth.inbox: needs auth.oidc, the identity provider whose tokens this server accepts`,
    );
  }
  if (inbox.issuer === undefined && issuers.length > 1) {
    throw new ConfigError(`${where}: auth.inbox.issuer: name one of auth.oidc's issuers (${issuers.join(', ')})`);
  }
  const issuer = inbox.issuer ?? issuers[0]!;
  if (!issuers.includes(issuer)) {
    throw new ConfigError(
      `${where}: auth.inbox.issuer: "${issuer}" is not an issuer of auth.oidc (${issuers.join(', ')}); the inbox's tokens must be ones this server accepts`,
    );
  }
  const secretAt = `${where}: auth.inbox.session.secret`;
  const sessionSecret = resolveSecret(inbox.session.secret, secretAt);
  if (sessionSecret.length < SESSION_SECRET_MIN_LENGTH) {
    throw new ConfigError(
      `${secretAt}: the environment variable ${inbox.session.secret.slice(4)} holds ${sessionSecret.length} characters; at least ${SESSION_SECRET_MIN_LENGTH} random ones are needed`,
    );
  }
  return {
    issuer,
    clientId: inbox.clientId,
    ...(inbox.clientSecret
      ? { clientSecret: resolveSecret(inbox.clientSecret, `${where}: auth.inbox.clientSecret`) }
      : {}),
    scopes: inbox.scopes ?? DEFAULT_INBOX_SCOPES,
    resource: inbox.resource ?? null,
    authorizationParams: inbox.authorizationParams ?? {},
    sessionSecret,
    sessionMaxAgeSeconds: Math.round((inbox.session.maxAgeHours ?? DEFAULT_SESSION_HOURS) * 3600),
  };
}
