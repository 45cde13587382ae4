// Sends a user message: in a thread (the agent continues it), or a new conversation with a chosen agent.
// startTurn runs in the background; the thread view follows the turn live over turnEvents.
import { useMutation, useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { describeRequestError, describeUserError } from '../errors';
import { AgentsQuery, SendMessageMutation } from '../operations';
import { hrefOf, navigate } from '../router';

export function Composer({
  threadId,
  agentId,
  agentName,
  onStarted,
}: {
  threadId: string | null;
  agentId?: string;
  agentName?: string;
  onStarted?: (turnId: string) => void;
}) {
  const [{ data: agents }] = useQuery({ query: AgentsQuery, pause: threadId !== null });
  const [chosen, setChosen] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [{ fetching }, send] = useMutation(SendMessageMutation);
  const target = agentId ?? (chosen || agents?.agents[0]?.id || '');

  async function submit(event?: Event) {
    event?.preventDefault();
    const text = message.trim();
    if (!text || !target || fetching) return;
    setError(null);
    const result = await send({ input: { agentId: target, threadId, message: text, background: true } });
    if (result.error) return setError(describeRequestError(result.error));
    const payload = result.data!.startTurn;
    if (payload.userErrors.length > 0) return setError(payload.userErrors.map(describeUserError).join(' '));
    setMessage('');
    if (payload.turn) onStarted?.(payload.turn.id);
    if (threadId === null && payload.thread) navigate(hrefOf({ view: 'thread', threadId: payload.thread.id }));
  }

  return (
    <form class="composer" onSubmit={submit}>
      {threadId === null && (
        <label for="composer-agent">
          Agent{' '}
          <select id="composer-agent" value={target} onChange={(e) => setChosen(e.currentTarget.value)}>
            {agents?.agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        {threadId === null ? 'Start a conversation' : `Message to ${agentName ?? 'the agent'}`}
        <textarea
          rows={2}
          value={message}
          placeholder="e.g. delete entities 1, 2 and 3"
          onInput={(e) => setMessage(e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter sends, Shift+Enter is a new line (as in most chat boxes).
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void submit();
            }
          }}
        />
      </label>
      <button type="submit" class="primary" disabled={fetching}>
        Send
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
