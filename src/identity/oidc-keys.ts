// An identity provider's signing keys: its discovery document, read once when a first token needs it, names the JWKS;
// jose's remote key set caches the keys, fetches them again for a key id it does not know (at most once per
// cooldown, so that tokens with made-up key ids cannot make the server hammer the provider) and when they are older
// than their lifetime. While the provider cannot be reached, the keys it gave last keep verifying tokens; a token
// that needs a key the server never saw cannot be checked then (503).
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type CryptoKey,
} from 'jose';

/** The provider could not be reached, or answered something that is not its discovery document or key set. */
export class ProviderUnreachable extends Error {
  override name = 'ProviderUnreachable';
}

export interface KeyTimings {
  /** Shortest time between two fetches of the key set for unknown key ids, in ms (default 10 s). */
  cooldownMs?: number;
  /** How long fetched keys are used before they are fetched again, in ms (default 10 min). */
  maxAgeMs?: number;
  /** How long a fetch of the discovery document or the key set may take, in ms (default 5 s). */
  timeoutMs?: number;
  /** After a failed fetch, how long requests use what they have without trying again, in ms (default 2 s). */
  retryAfterMs?: number;
}

export type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

/** The discovery document's URL of an issuer (OpenID Connect Discovery 1.0, section 4). */
export function discoveryUrl(issuer: string): URL {
  return new URL(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
}

export function providerKeys(issuer: string, timings: KeyTimings = {}): KeyResolver {
  const timeoutMs = timings.timeoutMs ?? 5_000;
  const retryAfterMs = timings.retryAfterMs ?? 2_000;
  let remote: ReturnType<typeof createRemoteJWKSet> | undefined;
  let discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  let failedAt = -Infinity;

  const discover = async (): Promise<ReturnType<typeof createRemoteJWKSet>> => {
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const response = await fetch(discoveryUrl(issuer), {
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: 'application/json' },
      });
      if (response.status !== 200) throw new ProviderUnreachable(`discovery answered ${response.status}`);
      document = (await response.json()) as typeof document;
    } catch (error) {
      if (error instanceof ProviderUnreachable) throw error;
      throw new ProviderUnreachable('discovery failed', { cause: error });
    }
    // The document must be the issuer's own (Discovery 1.0, section 4.3): else keys of another issuer would be used.
    if (document.issuer !== issuer) throw new ProviderUnreachable('the discovery document names another issuer');
    if (typeof document.jwks_uri !== 'string') throw new ProviderUnreachable('the discovery document has no jwks_uri');
    return createRemoteJWKSet(new URL(document.jwks_uri), {
      cooldownDuration: timings.cooldownMs ?? 10_000,
      cacheMaxAge: timings.maxAgeMs ?? 600_000,
      timeoutDuration: timeoutMs,
    });
  };

  const keySet = async (): Promise<ReturnType<typeof createRemoteJWKSet>> => {
    if (remote) return remote;
    if (!discovering) {
      if (Date.now() - failedAt < retryAfterMs) throw new ProviderUnreachable('discovery failed a moment ago');
      discovering = discover().then(
        (found) => {
          remote = found;
          discovering = undefined;
          return found;
        },
        (error: unknown) => {
          failedAt = Date.now();
          discovering = undefined;
          throw error;
        },
      );
    }
    return discovering;
  };

  /** The keys the provider gave last, while it cannot be reached. */
  const lastKeys = (set: ReturnType<typeof createRemoteJWKSet>): JSONWebKeySet | undefined => set.jwks();

  return async (header, token) => {
    const set = await keySet();
    const last = lastKeys(set);
    // Keys past their lifetime, and a fetch failed a moment ago: use them rather than wait on the provider again.
    if (last && !set.fresh && Date.now() - failedAt < retryAfterMs) {
      return staleKey(last, header, token);
    }
    try {
      return await set(header, token);
    } catch (error) {
      if (!isFetchFailure(error)) throw error;
      failedAt = Date.now();
      if (!last) throw new ProviderUnreachable('the key set could not be fetched', { cause: error });
      return staleKey(last, header, token);
    }
  };
}

/** A key of the set the provider gave last; a key id it does not hold needs the provider, which is down. */
async function staleKey(
  keys: JSONWebKeySet,
  header: JWSHeaderParameters,
  token: FlattenedJWSInput,
): Promise<CryptoKey> {
  try {
    return await createLocalJWKSet(keys)(header, token);
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) {
      throw new ProviderUnreachable('a new signing key is needed and the key set could not be fetched');
    }
    throw error;
  }
}

/** A failure to fetch the key set (network, timeout, not 200, not JSON), as opposed to a key that does not fit. */
function isFetchFailure(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout) return true;
  if (error instanceof errors.JWKSInvalid) return true;
  if (error instanceof TypeError) return true; // fetch's network errors
  return error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC';
}
