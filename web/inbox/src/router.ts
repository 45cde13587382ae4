// Client routes under /inbox (the server answers index.html for each): a pushState router small enough to read.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'pending' }
  | { view: 'to-answer' }
  | { view: 'history' }
  | { view: 'threads' }
  | { view: 'thread'; threadId: string }
  | { view: 'approvals' };

export const BASE = '/inbox';

export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'history') return { view: 'history' };
  if (parts[0] === 'to-answer') return { view: 'to-answer' };
  if (parts[0] === 'approvals') return { view: 'approvals' };
  if (parts[0] === 'threads' && parts[1]) return { view: 'thread', threadId: parts[1] };
  if (parts[0] === 'threads') return { view: 'threads' };
  return { view: 'pending' };
}

export function hrefOf(route: Route): string {
  switch (route.view) {
    case 'pending':
      return `${BASE}/`;
    case 'thread':
      return `${BASE}/threads/${encodeURIComponent(route.threadId)}`;
    default:
      return `${BASE}/${route.view}`;
  }
}

export function navigate(href: string): void {
  if (href === location.pathname) return;
  history.pushState(null, '', href);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return route;
}

/** onClick for an <a href>: a plain left click stays in the app; modified clicks open tabs as usual. */
export function linkClick(event: MouseEvent): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = event.currentTarget as HTMLAnchorElement;
  event.preventDefault();
  navigate(anchor.pathname);
}
