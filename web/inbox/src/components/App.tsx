// The shell: who is signed in (the server's own sign-in through its identity provider, else a token prompt when the
// server has `auth`), the navigation and the live link state.
import { Provider, useQuery } from '@urql/preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { createApiClient, type Credentials, type LinkState } from '../client';
import { describeRequestError, isUnauthenticated } from '../errors';
import { ViewerQuery } from '../operations';
import { hrefOf, linkClick, useRoute, type Route } from '../router';
import { checkSession, endSession, storedToken, storeToken, type SessionStatus } from '../session';
import { Grants } from './Grants';
import { History } from './History';
import { Inbox } from './Inbox';
import { RegisterPasskey } from './RegisterPasskey';
import { SignedOut } from './SignedOut';
import { ThreadList } from './ThreadList';
import { ThreadView } from './ThreadView';
import { ToAnswer } from './ToAnswer';
import { TokenPrompt } from './TokenPrompt';
import { VisibleString } from './VisibleText';

/** How this page talks to the server; `generation` counts the session's clients (a new one after an expiry). */
type Access =
  | { kind: 'checking' }
  | { kind: 'token'; token: string | null }
  | { kind: 'session'; generation: number }
  | { kind: 'signed-out'; reason: string }
  | { kind: 'unreachable' };

/** The least time between two renewals, whatever the server says: a wrong clock must not make the page hammer it. */
const MIN_RENEW_DELAY_MS = 1000;

export function App() {
  const [access, setAccess] = useState<Access>(() => {
    const token = storedToken();
    return token ? { kind: 'token', token } : { kind: 'checking' };
  });
  const [link, setLink] = useState<LinkState>('idle');
  /** When to ask the server to renew the session (a new object each time, so that the same moment counts again). */
  const [renewal, setRenewal] = useState<{ inMs: number } | null>(null);

  const apply = useCallback((status: SessionStatus, reconnect = false) => {
    if (status.kind === 'none') setAccess({ kind: 'token', token: null });
    else if (status.kind === 'signed-out') setAccess({ kind: 'signed-out', reason: status.reason });
    else if (status.kind === 'unreachable') {
      // A signed-in page keeps its session (the cookie still works until the token ends) and asks again soon.
      setAccess((previous) => (previous.kind === 'session' ? previous : { kind: 'unreachable' }));
      setRenewal({ inMs: 10_000 });
    } else {
      setAccess((previous) =>
        previous.kind === 'session'
          ? reconnect
            ? { kind: 'session', generation: previous.generation + 1 }
            : previous
          : { kind: 'session', generation: 0 },
      );
      setRenewal(status.renewInMs === null ? null : { inMs: status.renewInMs });
    }
  }, []);

  useEffect(() => {
    if (access.kind === 'checking') void checkSession().then((status) => apply(status));
  }, [access.kind, apply]);
  useEffect(() => {
    if (!renewal || access.kind !== 'session') return;
    const timer = setTimeout(
      () => void checkSession().then((status) => apply(status)),
      Math.max(MIN_RENEW_DELAY_MS, renewal.inMs),
    );
    return () => clearTimeout(timer);
  }, [renewal, access.kind, apply]);

  const clientKey =
    access.kind === 'token'
      ? `token:${access.token ?? ''}`
      : access.kind === 'session'
        ? `session:${access.generation}`
        : null;
  // One client per way of signing in (and per session generation), not per render.
  const api = useMemo(() => {
    if (access.kind === 'token') return createApiClient({ kind: 'token', token: access.token }, setLink);
    if (access.kind !== 'session') return null;
    const credentials: Credentials = {
      kind: 'session',
      renew: async () => {
        const status = await checkSession();
        apply(status);
        return status.kind === 'signed-in';
      },
      onExpired: () => void checkSession().then((status) => apply(status, true)),
    };
    return createApiClient(credentials, setLink);
  }, [clientKey]);
  useEffect(() => () => api?.dispose(), [api]);

  const signIn = (next: string | null) => {
    storeToken(next);
    setLink('idle');
    setAccess({ kind: 'token', token: next });
  };
  const signOut = async () => {
    setLink('idle');
    const providerLogoutUrl = await endSession().catch(() => null);
    if (providerLogoutUrl) location.assign(providerLogoutUrl);
    else setAccess({ kind: 'signed-out', reason: 'signed out' });
  };

  if (access.kind === 'signed-out') return <SignedOut reason={access.reason} />;
  if (!api) {
    return (
      <main class="center" aria-busy={access.kind === 'checking'}>
        {access.kind === 'unreachable' ? (
          <div role="alert">
            <p>The server cannot be reached. Check that toolgate is running, then try again.</p>
            <button type="button" onClick={() => setAccess({ kind: 'checking' })}>
              Try again
            </button>
          </div>
        ) : (
          <p>Connecting…</p>
        )}
      </main>
    );
  }
  return (
    <Provider value={api.client}>
      <Shell
        token={access.kind === 'token' ? access.token : null}
        session={access.kind === 'session'}
        link={link}
        onSignIn={signIn}
        onSignOut={() => void signOut()}
      />
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
  session,
  link,
  onSignIn,
  onSignOut,
}: {
  token: string | null;
  /** Signed in through the server's own sign-in. */
  session: boolean;
  link: LinkState;
  onSignIn: (token: string | null) => void;
  onSignOut: () => void;
}) {
  const [viewer, retry] = useQuery({ query: ViewerQuery, requestPolicy: 'network-only' });
  const route = useRoute();

  if (isUnauthenticated(viewer.error)) {
    // With a session, the client renewed it once already: the server does not take it.
    if (session) return <SignedOut reason="the server did not accept the session" />;
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
            Signed in as{' '}
            <strong data-testid="viewer">
              <VisibleString text={viewer.data.viewer.id} />
            </strong>
            {viewer.data.viewer.name && viewer.data.viewer.name !== viewer.data.viewer.id && (
              <>
                {' '}
                (<VisibleString text={viewer.data.viewer.name} />)
              </>
            )}
          </span>
          <RegisterPasskey />
          {(token || session) && (
            <button type="button" class="quiet" onClick={() => (session ? onSignOut() : onSignIn(null))}>
              Sign out
            </button>
          )}
        </p>
      </header>
      {/* Roles that changed (a renewed session's token carries the provider's groups of now) start the views afresh:
          what was offered to the old roles may not be any more. */}
      <main id="main" tabIndex={-1} key={viewer.data.viewer.roles.join(' ')}>
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
