// The server signs the inbox in through its identity provider, and this page has no session (any more): say so, and
// offer to sign in, which comes back to this page.
import { signInHref } from '../session';

/** What the server's reason means to the person. */
function explanation(reason: string): string {
  if (reason === 'not signed in') return "Sign in with your organisation's account to answer your agents' requests.";
  if (reason === 'signed out') return 'You signed out of the toolgate inbox.';
  return `Your session ended (${reason}). Sign in again to go on.`;
}

export function SignedOut({ reason }: { reason: string }) {
  return (
    <main class="center">
      <div class="token-prompt" data-testid="signed-out">
        <h1>Signed out</h1>
        <p>{explanation(reason)}</p>
        <button type="button" class="primary" autoFocus onClick={() => location.assign(signInHref())}>
          Sign in
        </button>
      </div>
    </main>
  );
}
