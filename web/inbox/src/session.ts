// The bearer token of a server with `auth` and no sign-in of its own: kept for this tab's session only (sessionStorage),
// never in a cookie.
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

// Or a session of the server's own: the server signs the inbox in through its identity provider (/auth/*) and keeps
// the tokens in an HttpOnly cookie the page cannot read. Requests it authenticates carry this header, which a form or
// another site's page cannot send.
export const SESSION_HEADERS: Readonly<Record<string, string>> = { 'x-toolgate-csrf': '1' };

export type SessionStatus =
  /** The server signs nobody in itself (no auth.oidc inbox): the token prompt, or nothing in the local mode. */
  | { kind: 'none' }
  | { kind: 'signed-in'; user: string; name: string | null; renewInMs: number | null }
  | { kind: 'signed-out'; reason: string }
  /** The server or its identity provider cannot be reached now. */
  | { kind: 'unreachable' };

let asking: Promise<SessionStatus> | null = null;

/**
 * The session as the server has it, renewed by the server when its tokens near their end. Callers at the same time
 * share one request: tabs and sockets that notice an expiry together renew once.
 */
export function checkSession(): Promise<SessionStatus> {
  asking ??= askSession().finally(() => {
    asking = null;
  });
  return asking;
}

async function askSession(): Promise<SessionStatus> {
  let response: Response;
  try {
    response = await fetch('/auth/session', { headers: SESSION_HEADERS, cache: 'no-store' });
  } catch {
    return { kind: 'unreachable' };
  }
  if (response.status === 404) return { kind: 'none' };
  const body = (await response.json().catch(() => ({}))) as {
    signedIn?: boolean;
    user?: string;
    name?: string | null;
    renewInMs?: number | null;
    reason?: string;
  };
  if (response.status === 401) return { kind: 'signed-out', reason: body.reason ?? 'not signed in' };
  if (!response.ok || !body.user) return { kind: 'unreachable' };
  return {
    kind: 'signed-in',
    user: body.user,
    name: body.name ?? null,
    renewInMs: body.renewInMs ?? null,
  };
}

/** Where the Sign in button goes: the server's sign-in, which brings the browser back to this page. */
export function signInHref(): string {
  return `/auth/login?returnTo=${encodeURIComponent(location.pathname + location.search)}`;
}

/** Ends the session; the provider's sign-out page to go to next, when it has one. */
export async function endSession(): Promise<string | null> {
  const response = await fetch('/auth/logout', { method: 'POST', headers: SESSION_HEADERS });
  const body = (await response.json().catch(() => ({}))) as { providerLogoutUrl?: string | null };
  return body.providerLogoutUrl ?? null;
}
