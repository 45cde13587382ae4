// The turn after an answer, live: its status, what the tools returned, the streamed and the final text.
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

export function TurnProgress({ live }: { live: LiveTurn }) {
  const turn = live.turn;
  if (!turn) return <p class="progress">Following the turn…</p>;
  const toolResults = turn.messages.filter((m) => m.role === 'TOOL' && m.text);
  return (
    <section class="progress" aria-label="Turn progress">
      <p>
        Turn: <StatusBadge status={turn.status} /> <span>{WORDS[turn.status] ?? ''}</span>
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
