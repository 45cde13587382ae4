// The shell: who is signed in (a token prompt when the server has `auth`), the navigation and the live link state.
import { Provider, useQuery } from '@urql/preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApiClient, type LinkState } from '../client';
import { describeRequestError, isUnauthenticated } from '../errors';
import { ViewerQuery } from '../operations';
import { hrefOf, linkClick, useRoute, type Route } from '../router';
import { storedToken, storeToken } from '../session';
import { Grants } from './Grants';
import { History } from './History';
import { Inbox } from './Inbox';
import { ThreadList } from './ThreadList';
import { ThreadView } from './ThreadView';
import { ToAnswer } from './ToAnswer';
import { TokenPrompt } from './TokenPrompt';

export function App() {
  const [token, setToken] = useState<string | null>(storedToken);
  const [link, setLink] = useState<LinkState>('idle');
  const api = useMemo(() => createApiClient(token, setLink), [token]);
  useEffect(() => () => api.dispose(), [api]);
  const signIn = (next: string | null) => {
    storeToken(next);
    setLink('idle');
    setToken(next);
  };
  return (
    <Provider value={api.client}>
      <Shell token={token} link={link} onSignIn={signIn} />
    </Provider>
  );
}

/** `approver`: shown to viewers who hold a role (others' requests are offered by role). */
const NAV: { route: Route; text: string; approver?: true }[] = [
  { route: { view: 'pending' }, text: 'Pending' },
  { route: { view: 'to-answer' }, text: 'To answer', approver: true },
  { route: { view: 'threads' }, text: 'Threads' },
  { route: { view: 'history' }, text: 'History' },
  { route: { view: 'approvals' }, text: 'Remembered' },
];

function Shell({
  token,
  link,
  onSignIn,
}: {
  token: string | null;
  link: LinkState;
  onSignIn: (token: string | null) => void;
}) {
  const [viewer, retry] = useQuery({ query: ViewerQuery, requestPolicy: 'network-only' });
  const route = useRoute();

  if (isUnauthenticated(viewer.error)) {
    return <TokenPrompt rejected={token !== null} onSubmit={onSignIn} />;
  }
  if (!viewer.data) {
    return (
      <main class="center" aria-busy={viewer.fetching}>
        {viewer.error ? (
          <div role="alert">
            <p>{describeRequestError(viewer.error)}</p>
            <button type="button" onClick={() => retry()}>
              Try again
            </button>
          </div>
        ) : (
          <p>Connecting…</p>
        )}
      </main>
    );
  }

  const current = route.view === 'thread' ? 'threads' : route.view;
  const isApprover = viewer.data.viewer.roles.length > 0;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={hrefOf({ view: 'pending' })} onClick={linkClick}>
          toolgate inbox
        </a>
        <nav aria-label="Views">
          <ul>
            {NAV.filter((item) => !item.approver || isApprover).map((item) => (
              <li key={item.route.view}>
                <a
                  href={hrefOf(item.route)}
                  onClick={linkClick}
                  aria-current={current === item.route.view ? 'page' : undefined}
                >
                  {item.text}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="who">
          {link !== 'idle' && (
            <span class={`link link-${link}`} role="status" title="The live connection to the server">
              {link === 'live' ? 'Live' : link === 'reconnecting' ? 'Reconnecting…' : 'Connecting…'}
            </span>
          )}{' '}
          <span>
            Signed in as <strong data-testid="viewer">{viewer.data.viewer.id}</strong>
          </span>
          {token && (
            <button type="button" class="quiet" onClick={() => onSignIn(null)}>
              Sign out
            </button>
          )}
        </p>
      </header>
      <main id="main" tabIndex={-1}>
        {route.view === 'pending' && <Inbox />}
        {route.view === 'to-answer' && <ToAnswer viewer={viewer.data.viewer} />}
        {route.view === 'history' && <History />}
        {route.view === 'threads' && <ThreadList />}
        {route.view === 'thread' && <ThreadView threadId={route.threadId} />}
        {route.view === 'approvals' && <Grants />}
      </main>
    </>
  );
}
