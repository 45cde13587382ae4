// No page of this server may be shown inside another site's frame: a click there is the user's own click (GraphiQL's
// run button, an inbox answer), and in the local mode reaching loopback is the credential. Every response of the HTTP
// server starts with these headers; a page that needs more than nothing (the inbox, GraphiQL) replaces the
// Content-Security-Policy with its own, which forbids framing as well. Anything else that happens to be HTML (an error
// page, a future route) may load and run nothing.
import type { ServerResponse } from 'node:http';

/** The policy of a response that is not one of our pages: nothing loads, nothing runs, nothing frames it. */
export const DENY_ALL_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const DEFAULT_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DENY_ALL_POLICY,
  // For browsers that predate frame-ancestors.
  'x-frame-options': 'DENY',
};

/** Sets the default headers on a response before anything answers it; headers written later take precedence. */
export function setDefaultSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(DEFAULT_SECURITY_HEADERS)) res.setHeader(name, value);
}
