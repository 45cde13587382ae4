// The server has `auth`: ask for a bearer token. It is kept in sessionStorage (this tab, this session) only.
import { useState } from 'preact/hooks';

export function TokenPrompt({ rejected, onSubmit }: { rejected: boolean; onSubmit: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <main class="center">
      <form
        class="token-prompt"
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim()) onSubmit(token.trim());
        }}
      >
        <h1>Sign in to the toolgate inbox</h1>
        <p>This server asks for an access token: one of the tokens in its config file (auth.tokens).</p>
        {rejected && (
          <p class="error" role="alert">
            The server did not accept that token. Check it and try again.
          </p>
        )}
        <label>
          Access token
          <input
            type="password"
            autoComplete="off"
            autoFocus
            required
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </label>
        <p class="hint">Kept for this browser tab only; closing the tab forgets it.</p>
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
