// The sealed session cookie (src/http/session-cookie.ts): what the browser holds opens only with the key it was
// sealed with, unchanged and before its expiry; a value too long for one cookie goes over several and comes back whole.
import { describe, expect, it } from 'vitest';
import { derivedKey, requestCookies, sealedCookie } from '../../src/http/session-cookie.js';

const key = derivedKey('a-session-secret-of-the-tests-0123456789', 'inbox session');
const cookie = sealedCookie<{ token: string }>({ name: 'toolgate_session', key, path: '/', secure: false });

/** What a browser would send back after these Set-Cookie values. */
function jar(setCookies: string[], before = new Map<string, string>()): Map<string, string> {
  const cookies = new Map(before);
  for (const line of setCookies) {
    const [pair] = line.split(';');
    const at = pair!.indexOf('=');
    const [name, value] = [pair!.slice(0, at), pair!.slice(at + 1)];
    if (/Max-Age=0(;|$)/.test(line)) cookies.delete(name);
    else cookies.set(name, value);
  }
  return requestCookies({ cookie: [...cookies].map(([n, v]) => `${n}=${v}`).join('; ') });
}

describe('the sealed session cookie', () => {
  it('opens what it sealed; not with another key, not changed, not after its expiry', async () => {
    const sealed = jar(await cookie.seal({ token: 'abc' }, Date.now() + 60_000, new Map()));
    expect(await cookie.open(sealed)).toEqual({ token: 'abc' });
    const other = sealedCookie<{ token: string }>({
      name: 'toolgate_session',
      key: derivedKey('another-secret-of-the-tests-0123456789', 'inbox session'),
      path: '/',
      secure: false,
    });
    expect(await other.open(sealed)).toBeNull();
    // Another purpose of the same secret is another key.
    const signIn = sealedCookie<{ token: string }>({
      name: 'toolgate_session',
      key: derivedKey('a-session-secret-of-the-tests-0123456789', 'inbox sign-in'),
      path: '/',
      secure: false,
    });
    expect(await signIn.open(sealed)).toBeNull();
    const value = sealed.get('toolgate_session')!;
    const changed = new Map([
      ['toolgate_session', value.slice(0, 60) + (value[60] === 'A' ? 'B' : 'A') + value.slice(61)],
    ]);
    expect(await cookie.open(changed)).toBeNull();
    const expired = jar(await cookie.seal({ token: 'abc' }, Date.now() - 1000, new Map()));
    expect(await cookie.open(expired)).toBeNull();
  });

  it('splits a long value over numbered cookies, and a shorter one later deletes the extra ones', async () => {
    const long = { token: 'x'.repeat(6000) };
    const written = await cookie.seal(long, Date.now() + 60_000, new Map());
    expect(written.map((line) => line.split('=')[0])).toEqual([
      'toolgate_session',
      'toolgate_session.1',
      'toolgate_session.2',
    ]);
    for (const line of written) expect(line.length).toBeLessThan(4000);
    const browser = jar(written);
    expect(await cookie.open(browser)).toEqual(long);

    const short = await cookie.seal({ token: 'abc' }, Date.now() + 60_000, browser);
    expect(short.filter((line) => /Max-Age=0$|Max-Age=0;/.test(line)).map((line) => line.split('=')[0])).toEqual([
      'toolgate_session.1',
      'toolgate_session.2',
    ]);
    const after = jar(short, browser);
    expect([...after.keys()]).toEqual(['toolgate_session']);
    expect(await cookie.open(after)).toEqual({ token: 'abc' });
    expect(cookie.clear(after)).toEqual(['toolgate_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax']);
  });

  it('refuses a value too large for the cookies a browser keeps', async () => {
    await expect(cookie.seal({ token: 'x'.repeat(20_000) }, Date.now() + 60_000, new Map())).rejects.toThrow(
      'the session is too large for cookies',
    );
  });
});
