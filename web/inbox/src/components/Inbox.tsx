// The viewer's pending confirmations, live: elicitationRequested(includePending: true) delivers those already
// waiting, then each new one, without a reload. Answered and expired cards stay (with the turn's progress) until
// dismissed. J/K move between cards, also before any card has focus. A status line tells screen readers how many
// wait and what became of the last one answered.
import { useSubscription } from '@urql/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ElicitationCardFragment, InboxPendingSubscription } from '../gql/graphql';
import { describeRequestError } from '../errors';
import { PendingSubscription } from '../operations';
import { ElicitationCard, toolLabel } from './ElicitationCard';
import { visibleText } from '../../../../src/domain/visible-text';

function collect(prev: ElicitationCardFragment[] | undefined, data: InboxPendingSubscription) {
  const list = prev ?? [];
  const next = data.elicitationRequested;
  return list.some((e) => e.id === next.id) ? list : [...list, next];
}

/** Where typing must type: a J or K there is a letter, not a move. */
function isTextEntry(element: Element | null): boolean {
  if (!element) return false;
  if (element instanceof HTMLElement && element.isContentEditable) return true;
  return element.matches('input, textarea, select');
}

/**
 * J: the next card, K: the previous one, from the card that has focus or holds it; with focus outside every card
 * (nothing focused yet, a link), J goes to the first card and K to the last.
 */
export function moveFocusBetweenCards(event: KeyboardEvent): void {
  const key = event.key.toLowerCase();
  if ((key !== 'j' && key !== 'k') || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target instanceof Element ? event.target : null;
  if (isTextEntry(target)) return;
  const cards = [...document.querySelectorAll<HTMLElement>('.cards article.card')];
  const current = target?.closest<HTMLElement>('article.card') ?? null;
  const index = current ? cards.indexOf(current) : -1;
  const next = index < 0 ? (key === 'j' ? cards[0] : cards.at(-1)) : cards[index + (key === 'j' ? 1 : -1)];
  if (next) {
    event.preventDefault();
    next.focus();
  }
}

function waitingText(waiting: number): string {
  return waiting === 0 ? 'Nothing waits for your answer.' : `${waiting} request${waiting === 1 ? '' : 's'} waiting.`;
}

export function Inbox() {
  const [result] = useSubscription({ query: PendingSubscription }, collect);
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(new Set());
  // Cards that stopped waiting since they arrived (the subscription delivered them PENDING), and the latest outcome.
  const [settled, setSettled] = useState<ReadonlyMap<string, string>>(new Map());
  const [lastOutcome, setLastOutcome] = useState<string | null>(null);
  const cards = (result.data ?? []).filter((e) => !dismissed.has(e.id));
  const waiting = cards.filter((e) => e.status === 'PENDING' && !settled.has(e.id)).length;

  useEffect(() => {
    document.addEventListener('keydown', moveFocusBetweenCards);
    return () => document.removeEventListener('keydown', moveFocusBetweenCards);
  }, []);

  function onSettled(elicitation: ElicitationCardFragment, status: string) {
    setSettled((prev) => new Map(prev).set(elicitation.id, status));
    setLastOutcome(`${visibleText(toolLabel(elicitation)).text}: ${status.toLowerCase()}.`);
  }

  return (
    <section aria-labelledby="pending-heading">
      <h1 id="pending-heading">Waiting for your answer</h1>
      <p class="hint">
        New requests appear here as agents ask. Keys: <kbd>J</kbd>/<kbd>K</kbd> next and previous request (or Tab to
        one), <kbd>A</kbd> accept, <kbd>D</kbd> decline with instructions, <kbd>E</kbd> edit the arguments,{' '}
        <kbd>Esc</kbd> back.
      </p>
      {result.error && (
        <p class="error" role="alert">
          {describeRequestError(result.error)}
        </p>
      )}
      <p class="visually-hidden" role="status" aria-live="polite">
        {lastOutcome && `${lastOutcome} `}
        {waitingText(waiting)}
      </p>
      {cards.length === 0 ? (
        <p class="empty">Nothing waits for your answer. Requests appear here the moment an agent asks.</p>
      ) : (
        <div class="cards">
          {cards.map((elicitation) => (
            <ElicitationCard
              key={elicitation.id}
              elicitation={elicitation}
              onSettled={(status) => onSettled(elicitation, status)}
              onDismiss={() => setDismissed((prev) => new Set([...prev, elicitation.id]))}
            />
          ))}
        </div>
      )}
    </section>
  );
}
