// The inbox's session, sealed into cookies: JSON encrypted and authenticated with a key derived from the configured
// secret (JWE, dir + A256GCM, by jose), so the browser holds it but can neither read nor change it, and every instance
// that shares the secret can open it. A sealed value longer than one cookie may hold is split over numbered cookies
// (`name`, `name.1`, …): some providers' tokens are large.
import { hkdfSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { EncryptJWT, jwtDecrypt, type JWTPayload } from 'jose';

/** Characters per cookie value: browsers keep at least 4096 bytes per cookie, name and attributes included. */
const CHUNK_CHARS = 3800;
/** More would not fit in the Cookie header Node accepts (16 KiB) beside anything else. */
const MAX_CHUNKS = 4;

export interface CookieAttributes {
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  path: string;
  secure: boolean;
}

/** The cookies of a request, by name; a malformed pair is skipped; the first of two with the same name wins. */
export function requestCookies(headers: IncomingHttpHeaders): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    if (!cookies.has(name)) cookies.set(name, pair.slice(at + 1).trim());
  }
  return cookies;
}

/** A Set-Cookie value: always HttpOnly and SameSite=Lax (sent on the provider's redirect back, not on other sites' requests). */
export function setCookie(name: string, value: string, attributes: CookieAttributes): string {
  return [
    `${name}=${value}`,
    `Path=${attributes.path}`,
    `Max-Age=${Math.max(0, Math.round(attributes.maxAge))}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(attributes.secure ? ['Secure'] : []),
  ].join('; ');
}

export interface SealedCookie<T extends object> {
  /** Set-Cookie values that store `value` until `expiresAt` (epoch ms), and delete chunks a longer value left. */
  seal(value: T, expiresAt: number, present: Map<string, string>): Promise<string[]>;
  /** The value, or null when absent, tampered with, sealed with another key or past its expiry. */
  open(cookies: Map<string, string>): Promise<T | null>;
  /** Set-Cookie values that delete every chunk present. */
  clear(present: Map<string, string>): string[];
  /** Whether the request carries the cookie at all (opened or not). */
  presentIn(cookies: Map<string, string>): boolean;
}

/** A 256-bit key for one purpose from the configured secret (HKDF-SHA-256): other purposes get other keys. */
export function derivedKey(secret: string, purpose: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, 'toolgate', purpose, 32));
}

export function sealedCookie<T extends object>(options: {
  name: string;
  key: Uint8Array;
  path: string;
  secure: boolean;
}): SealedCookie<T> {
  const { name, key, path, secure } = options;
  const chunkName = (i: number) => (i === 0 ? name : `${name}.${i}`);
  const chunksIn = (cookies: Map<string, string>) => {
    const found: string[] = [];
    for (let i = 0; i < MAX_CHUNKS && cookies.has(chunkName(i)); i++) found.push(chunkName(i));
    return found;
  };
  const clear = (present: Map<string, string>) =>
    chunksIn(present).map((chunk) => setCookie(chunk, '', { maxAge: 0, path, secure }));
  return {
    async seal(value, expiresAt, present) {
      const sealed = await new EncryptJWT({ v: value } as unknown as JWTPayload)
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt / 1000))
        .encrypt(key);
      const parts: string[] = [];
      for (let at = 0; at < sealed.length; at += CHUNK_CHARS) parts.push(sealed.slice(at, at + CHUNK_CHARS));
      if (parts.length > MAX_CHUNKS) {
        throw new Error(`the session is too large for cookies (${sealed.length} characters sealed)`);
      }
      const maxAge = (expiresAt - Date.now()) / 1000;
      const written = parts.map((part, i) => setCookie(chunkName(i), part, { maxAge, path, secure }));
      const stale = chunksIn(present)
        .slice(parts.length)
        .map((chunk) => setCookie(chunk, '', { maxAge: 0, path, secure }));
      return [...written, ...stale];
    },
    async open(cookies) {
      const chunks = chunksIn(cookies);
      if (chunks.length === 0) return null;
      try {
        const { payload } = await jwtDecrypt(chunks.map((chunk) => cookies.get(chunk)).join(''), key, {
          keyManagementAlgorithms: ['dir'],
          contentEncryptionAlgorithms: ['A256GCM'],
        });
        return (payload as { v?: T }).v ?? null;
      } catch {
        return null;
      }
    },
    clear,
    presentIn: (cookies) => cookies.has(name),
  };
}
