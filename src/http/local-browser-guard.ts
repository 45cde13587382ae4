// The local mode (no `auth` section) makes whoever reaches loopback the admin user `local`. A browser on the same
// machine reaches loopback too, on behalf of any web page it shows: without this guard such a page could POST a
// form to /graphql (a "simple" request, sent without a CORS preflight), open a WebSocket to it (WebSockets have no
// CORS at all), or, through DNS rebinding, read it as its own origin; and so start turns or ACCEPT a pending
// confirmation. Here a request is refused unless its Host is a loopback name and its Origin, when a browser sends
// one, is a page of this machine: curl and server-side clients send no Origin; the inbox and GraphiQL, served from
// here, send their own.
import type { IncomingHttpHeaders } from 'node:http';
import { isLoopbackHost } from './auth.js';

/** Why a request to the local mode looks like it came from another site through a browser; null when it did not. */
export function foreignBrowserRequest(headers: IncomingHttpHeaders): string | null {
  const host = headers.host;
  if (host !== undefined && !isLoopbackHost(hostnameOf(`http://${host}`) ?? '')) {
    return `Host "${host}" is not a loopback name (local mode answers 127.0.0.1, ::1 and localhost only)`;
  }
  const origin = headers.origin;
  if (origin !== undefined && !isLoopbackHost(hostnameOf(origin) ?? '')) {
    return `Origin "${origin}" is not a page of this machine (local mode answers no other site's pages)`;
  }
  return null;
}

/** The hostname of a URL, without IPv6 brackets; null when it is not one ("null", the Origin of a sandboxed page). */
function hostnameOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
}
