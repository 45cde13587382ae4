// "Register a passkey": the signed-in user's passkey, which approves the requests of tools that require step-up
// (docs/inbox.md#passkey-step-up). The outcome is said in the status line beside the button.
import { useClient } from '@urql/preact';
import { useState } from 'preact/hooks';
import { registerPasskey } from '../passkeys';

export function RegisterPasskey() {
  const client = useClient();
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);

  async function register() {
    setBusy(true);
    setSaid(null);
    const problem = await registerPasskey(client);
    setBusy(false);
    setSaid(problem ? { ok: false, text: problem } : { ok: true, text: 'Passkey registered.' });
  }

  return (
    <span class="passkey">
      <button type="button" class="quiet" onClick={() => void register()} disabled={busy}>
        Register a passkey
      </button>
      {said && (
        <span role={said.ok ? 'status' : 'alert'} class={said.ok ? 'passkey-ok' : 'error'}>
          {' '}
          {said.text}
        </span>
      )}
    </span>
  );
}
