// A session cookie is an ambient credential: the browser attaches it to requests that other pages make too. A request
// it authenticates must come from a page of this server, which the browser tells by Origin and Sec-Fetch-Site, and must
// carry a header of ours, which no form can send and no other origin can send without a CORS preflight.
import type { IncomingHttpHeaders } from 'node:http';

/** The header the inbox sends with every request its session cookie authenticates. */
export const SESSION_REQUEST_HEADER = 'x-toolgate-csrf';

/** Whether the request asks to be authenticated by the session cookie (it carries our header). */
export function asksForSession(headers: IncomingHttpHeaders): boolean {
  return headers[SESSION_REQUEST_HEADER] !== undefined;
}

/**
 * Why the request may come from another origin's page; null when the browser says it came from this server's own
 * (or from no browser: no Origin and no Sec-Fetch-Site, as curl). `publicOrigin`: the server's configured public origin;
 * without one, the Origin must name the host the request was sent to.
 */
export function crossOriginRequest(headers: IncomingHttpHeaders, publicOrigin: string | null): string | null {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') {
    return `Sec-Fetch-Site "${site}": a session is used by this server's own pages only`;
  }
  const origin = headers.origin;
  if (origin === undefined) return null;
  const same = publicOrigin !== null ? origin === publicOrigin : hostOf(origin) === headers.host;
  return same ? null : `Origin "${origin}" is not this server's (a session is used by this server's own pages only)`;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
