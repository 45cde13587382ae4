// The viewer's pending confirmations, live: elicitationRequested(includePending: true) delivers those already
// waiting, then each new one, without a reload. Answered and expired cards stay (with the turn's progress) until
// dismissed. J/K move between cards.
import { useSubscription } from '@urql/preact';
import { useState } from 'preact/hooks';
import type { ElicitationCardFragment, InboxPendingSubscription } from '../gql/graphql';
import { describeRequestError } from '../errors';
import { PendingSubscription } from '../operations';
import { ElicitationCard } from './ElicitationCard';

function collect(prev: ElicitationCardFragment[] | undefined, data: InboxPendingSubscription) {
  const list = prev ?? [];
  const next = data.elicitationRequested;
  return list.some((e) => e.id === next.id) ? list : [...list, next];
}

export function moveFocusBetweenCards(event: KeyboardEvent): void {
  const key = event.key.toLowerCase();
  if ((key !== 'j' && key !== 'k') || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target as HTMLElement;
  if (!target.classList.contains('card')) return;
  const cards = [...(event.currentTarget as HTMLElement).querySelectorAll<HTMLElement>('article.card')];
  const index = cards.indexOf(target);
  const next = cards[index + (key === 'j' ? 1 : -1)];
  if (next) {
    event.preventDefault();
    next.focus();
  }
}

export function Inbox() {
  const [result] = useSubscription({ query: PendingSubscription }, collect);
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(new Set());
  const cards = (result.data ?? []).filter((e) => !dismissed.has(e.id));
  const waiting = cards.filter((e) => e.status === 'PENDING').length;

  return (
    <section aria-labelledby="pending-heading">
      <h1 id="pending-heading">Waiting for your answer</h1>
      <p class="hint">
        New requests appear here as agents ask. Keys: Tab to a request, <kbd>A</kbd> accept, <kbd>D</kbd> decline with
        instructions, <kbd>E</kbd> edit the arguments, <kbd>Esc</kbd> back, <kbd>J</kbd>/<kbd>K</kbd> next and previous
        request.
      </p>
      {result.error && (
        <p class="error" role="alert">
          {describeRequestError(result.error)}
        </p>
      )}
      <p class="visually-hidden" role="status" aria-live="polite">
        {waiting === 0 ? 'Nothing waits for your answer.' : `${waiting} request${waiting === 1 ? '' : 's'} waiting.`}
      </p>
      {cards.length === 0 ? (
        <p class="empty">Nothing waits for your answer. Requests appear here the moment an agent asks.</p>
      ) : (
        <div class="cards" onKeyDown={moveFocusBetweenCards}>
          {cards.map((elicitation) => (
            <ElicitationCard
              key={elicitation.id}
              elicitation={elicitation}
              onDismiss={() => setDismissed((prev) => new Set([...prev, elicitation.id]))}
            />
          ))}
        </div>
      )}
    </section>
  );
}
