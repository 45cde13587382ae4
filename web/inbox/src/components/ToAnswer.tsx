// The approver queue (docs/approvers.md): requests of others the viewer may answer as an approver of one of their
// roles. elicitationRequested(scope: TO_ANSWER, includePending: true) delivers what pendingElicitations(scope:
// TO_ANSWER) lists, then each request offered to one of their roles, without a reload; a card leaves the queue once
// the request no longer waits (decided by the quorum, a DECLINE, cancelled, expired). J/K move between cards.
import { useSubscription } from '@urql/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ApproverCardFragment, InboxToAnswerSubscription } from '../gql/graphql';
import { describeRequestError } from '../errors';
import { ToAnswerSubscription } from '../operations';
import { ApproverCard } from './ApproverCard';
import { moveFocusBetweenCards } from './Inbox';

function collect(prev: ApproverCardFragment[] | undefined, data: InboxToAnswerSubscription) {
  const list = prev ?? [];
  const next = data.elicitationRequested;
  return list.some((e) => e.id === next.id) ? list : [...list, next];
}

function waitingText(waiting: number): string {
  return waiting === 0 ? 'Nothing to answer.' : `${waiting} request${waiting === 1 ? '' : 's'} in the queue.`;
}

export function ToAnswer({ viewer }: { viewer: { id: string; roles: readonly string[] } }) {
  const [result] = useSubscription({ query: ToAnswerSubscription }, collect);
  const [gone, setGone] = useState<ReadonlySet<string>>(new Set());
  const [lastOutcome, setLastOutcome] = useState<string | null>(null);
  const cards = (result.data ?? []).filter((e) => !gone.has(e.id));

  useEffect(() => {
    document.addEventListener('keydown', moveFocusBetweenCards);
    return () => document.removeEventListener('keydown', moveFocusBetweenCards);
  }, []);

  function onGone(id: string, outcome: string) {
    setGone((prev) => new Set([...prev, id]));
    setLastOutcome(outcome);
  }

  return (
    <section aria-labelledby="to-answer-heading">
      <h1 id="to-answer-heading">To answer</h1>
      <p class="hint">
        Requests of others that your roles ({viewer.roles.join(', ')}) approve. Each waits for the number of approvals
        its policy asks for; a card leaves the list once the request is decided. Keys: <kbd>J</kbd>/<kbd>K</kbd> next
        and previous request, <kbd>A</kbd> accept, <kbd>D</kbd> decline with instructions, <kbd>Esc</kbd> back.
      </p>
      {result.error && (
        <p class="error" role="alert">
          {describeRequestError(result.error)}
        </p>
      )}
      <p class="visually-hidden" role="status" aria-live="polite">
        {lastOutcome && `${lastOutcome} `}
        {waitingText(cards.length)}
      </p>
      {lastOutcome && (
        <p class="last-outcome" data-testid="last-outcome">
          {lastOutcome}
        </p>
      )}
      {cards.length === 0 ? (
        <p class="empty">Nothing to answer. Requests offered to your roles appear here the moment an agent asks.</p>
      ) : (
        <div class="cards">
          {cards.map((elicitation) => (
            <ApproverCard
              key={elicitation.id}
              elicitation={elicitation}
              viewerId={viewer.id}
              onGone={(outcome) => onGone(elicitation.id, outcome)}
            />
          ))}
        </div>
      )}
    </section>
  );
}
