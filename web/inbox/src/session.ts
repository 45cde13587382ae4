// The bearer token of a server with `auth`: kept for this tab's session only (sessionStorage), never in a cookie.
const KEY = 'toolgate.inbox.token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage refused (private mode): the token lives in memory for this page only */
  }
}
