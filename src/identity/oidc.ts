// JWT access tokens of OpenID providers (auth.oidc): each token is checked with jose against its issuer's keys
// (src/identity/oidc-keys.ts): the signature with an allowed algorithm, "iss", "aud" (this server, RFC 8707),
// "exp" and "nbf" with a small leeway. Who the user is and which roles they hold come from the token's claims, as
// they are in the token presented with this request: nothing is remembered between requests.
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Viewer } from '../app/viewer.js';
import { ConfigError } from '../config/load.js';
import { DEFAULT_OIDC_ALGORITHMS, type OidcIssuerConfig } from '../config/schema.js';
import { refused, unavailable, type Authentication } from './authentication.js';
import { ProviderUnreachable, providerKeys, type KeyResolver, type KeyTimings } from './oidc-keys.js';

export interface OidcOptions {
  /** The server's own URL when auth.oidc names no audience: server.publicUrl, else the address it listens on. */
  defaultAudience: () => string | undefined;
  keyTimings?: KeyTimings;
}

export interface OidcAuthenticator {
  /** The user of a token, or why not; a token that is not a JWT is no credential of this authenticator (null). */
  authenticate(token: string): Promise<Authentication> | null;
  /** The issuers it trusts, as configured (for the protected resource metadata). */
  readonly issuers: readonly string[];
  /** The audience tokens of an issuer must carry (the default one when the issuer names none). */
  audienceOf(issuer: string): string | undefined;
  /** Whether an issuer names no audience of its own, so that the server's URL is the audience. */
  readonly needsDefaultAudience: boolean;
}

interface Issuer {
  config: OidcIssuerConfig;
  keys: KeyResolver;
  algorithms: string[];
}

/** `auth.oidc` as a list, its entries checked together: several issuers need distinct userPrefix values. */
export function oidcIssuers(oidc: OidcIssuerConfig | OidcIssuerConfig[] | undefined): OidcIssuerConfig[] {
  if (!oidc) return [];
  return Array.isArray(oidc) ? oidc : [oidc];
}

export function createOidcAuthenticator(
  oidc: OidcIssuerConfig | OidcIssuerConfig[],
  options: OidcOptions,
  where = '<config>',
): OidcAuthenticator {
  const list = Array.isArray(oidc);
  const configs = oidcIssuers(oidc);
  const at = (i: number) => `${where}: auth.oidc${list ? `[${i}]` : ''}`;
  checkIssuers(configs, at);
  const issuers = new Map<string, Issuer>(
    configs.map((config) => [
      config.issuer,
      {
        config,
        keys: providerKeys(config.issuer, options.keyTimings),
        algorithms: [...(config.algorithms ?? DEFAULT_OIDC_ALGORITHMS)],
      },
    ]),
  );
  const audienceOf = (issuer: string) => issuers.get(issuer)?.config.audience ?? options.defaultAudience();

  return {
    issuers: configs.map((config) => config.issuer),
    audienceOf,
    needsDefaultAudience: configs.some((config) => config.audience === undefined),
    authenticate(token) {
      const claims = unverifiedClaims(token);
      if (!claims) return null;
      const issuer = typeof claims.iss === 'string' ? issuers.get(claims.iss) : undefined;
      if (!issuer) return Promise.resolve(refused('token issuer is not trusted'));
      const audience = audienceOf(issuer.config.issuer);
      if (audience === undefined) {
        return Promise.resolve(unavailable('the server does not know its own URL yet: set server.publicUrl'));
      }
      return verify(token, issuer, audience);
    },
  };
}

/** Several issuers: each with a userPrefix no other starts with, so that no two issuers' users can share an id. */
function checkIssuers(configs: OidcIssuerConfig[], at: (i: number) => string): void {
  configs.forEach((config, i) => {
    const earlier = configs.findIndex((other) => other.issuer === config.issuer);
    if (earlier !== i) throw new ConfigError(`${at(i)}.issuer: the same issuer as auth.oidc[${earlier}]`);
  });
  if (configs.length < 2) return;
  configs.forEach((config, i) => {
    if (config.userPrefix === undefined) {
      throw new ConfigError(`${at(i)}.userPrefix: required when there are several issuers, e.g. "corp:"`);
    }
    configs.forEach((other, j) => {
      if (j !== i && other.userPrefix !== undefined && other.userPrefix.startsWith(config.userPrefix!)) {
        throw new ConfigError(
          `${at(i)}.userPrefix: "${config.userPrefix}" begins auth.oidc[${j}].userPrefix "${other.userPrefix}": users of the two issuers could share an id`,
        );
      }
    });
  });
}

/** The claims of a token that has the form of a JWT (read before its signature is checked: to find its issuer). */
function unverifiedClaims(token: string): JWTPayload | null {
  if (token.split('.').length !== 3) return null;
  try {
    decodeProtectedHeader(token);
    return decodeJwt(token);
  } catch {
    return null;
  }
}

async function verify(token: string, issuer: Issuer, audience: string): Promise<Authentication> {
  const { config } = issuer;
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, issuer.keys, {
      issuer: config.issuer,
      // A provider may write the resource with or without its trailing slash.
      audience: audience.endsWith('/') ? [audience, audience.slice(0, -1)] : [audience, `${audience}/`],
      algorithms: issuer.algorithms,
      clockTolerance: config.clockToleranceSeconds,
      requiredClaims: ['exp'],
    }));
  } catch (error) {
    return refusalOf(error);
  }
  return viewerOf(payload, config);
}

/** One line for each way a token fails; never any of its content. */
function refusalOf(error: unknown): Authentication {
  if (error instanceof ProviderUnreachable) return unavailable('identity provider unreachable');
  if (error instanceof errors.JWTExpired) return refused('token expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'aud':
        return refused('token audience is not this server');
      case 'iss':
        return refused('token issuer is not trusted');
      case 'nbf':
        return refused('token not yet valid');
      case 'exp':
        return refused('token has no expiry');
      default:
        return refused(`token claim "${error.claim}" is invalid`);
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return refused('token algorithm is not allowed');
  if (error instanceof errors.JWKSNoMatchingKey) return refused('token signing key is unknown');
  if (error instanceof errors.JWSSignatureVerificationFailed) return refused('token signature is invalid');
  if (error instanceof errors.JOSEError) return refused('token is malformed');
  throw error;
}

/** The viewer a verified token describes: its user (prefixed), display name, roles (mapped) and admin rights. */
export function viewerOf(payload: JWTPayload, config: OidcIssuerConfig): Authentication {
  const user = claimAt(payload, config.userClaim);
  if (typeof user !== 'string' || user === '') return refused(`token has no "${config.userClaim}" claim`);
  const name = [claimAt(payload, config.nameClaim), payload.email].find(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  const roles = rolesOf(claimAt(payload, config.rolesClaim), config.roleMap);
  const viewer: Viewer = {
    id: `${config.userPrefix ?? ''}${user}`,
    isAdmin: roles.some((role) => config.adminRoles?.includes(role) ?? false),
    roles,
    issuer: config.issuer,
    subject: typeof payload.sub === 'string' ? payload.sub : user,
    expiresAt: payload.exp! * 1000,
    ...(name !== undefined ? { name } : {}),
  };
  return { ok: true, viewer };
}

/**
 * A claim by its name; a name the token does not hold as such, with dots in it, is a path into nested claims
 * (Keycloak's `realm_access.roles`). A name that is itself a URL with dots (`https://example.com/roles`) is found
 * as it is.
 */
export function claimAt(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A roles claim (a list, or a space-separated string as OAuth's `scope` is) through the role map. */
export function rolesOf(claim: unknown, roleMap: OidcIssuerConfig['roleMap']): string[] {
  const groups =
    typeof claim === 'string'
      ? claim.split(' ').filter(Boolean)
      : Array.isArray(claim)
        ? claim.filter((group): group is string => typeof group === 'string')
        : [];
  const roles = roleMap ? groups.flatMap((group) => (Object.hasOwn(roleMap, group) ? roleMap[group]! : [])) : groups;
  return [...new Set(roles)];
}
