// The turn after an answer, live: its status, what the tools returned, the streamed and the final text. A gateway's
// call is worded as its MCP client's: no model works on after it, and the client gets the result.
import type { LiveTurn } from '../live-turn';
import { StatusBadge } from './Badges';
import { VisibleString, VisibleText } from './VisibleText';

const WORDS: Record<string, string> = {
  RUNNING: 'The agent is working…',
  PAUSED: 'The agent waits for another answer.',
  COMPLETED: 'The agent finished.',
  FAILED: 'The turn failed.',
  CANCELLED: 'The turn was cancelled; nothing more runs.',
  EXPIRED: 'The turn expired unanswered.',
};

const GATEWAY_WORDS: Record<string, string> = {
  RUNNING: 'The tool is running…',
  PAUSED: 'The call waits for another answer.',
  COMPLETED: 'The call is done; its client has the result.',
  FAILED: 'The call failed.',
  CANCELLED: 'The call was cancelled; the tool did not run.',
  EXPIRED: 'The call expired unanswered; the tool did not run.',
};

export function TurnProgress({ live, gateway = false }: { live: LiveTurn; gateway?: boolean }) {
  const turn = live.turn;
  if (!turn) return <p class="progress">Following the turn…</p>;
  const toolResults = turn.messages.filter((m) => m.role === 'TOOL' && m.text);
  return (
    <section class="progress" aria-label={gateway ? 'Call progress' : 'Turn progress'}>
      <p>
        {gateway ? 'Call' : 'Turn'}: <StatusBadge status={turn.status} />{' '}
        <span>{(gateway ? GATEWAY_WORDS : WORDS)[turn.status] ?? ''}</span>
      </p>
      {toolResults.length > 0 && (
        <ul class="tool-results" aria-label="Tool results">
          {toolResults.map((m) => (
            <li key={m.id}>{m.textDisplay && <VisibleText display={m.textDisplay} />}</li>
          ))}
        </ul>
      )}
      {live.streamed && turn.status === 'RUNNING' && (
        <p class="assistant streaming" aria-busy="true">
          <VisibleString text={live.streamed.text} />
        </p>
      )}
      {turn.status === 'COMPLETED' && turn.textDisplay?.text && (
        <p class="assistant final">
          <VisibleText display={turn.textDisplay} />
        </p>
      )}
      {turn.status === 'FAILED' && turn.error && <p class="error">{turn.error}</p>}
    </section>
  );
}
