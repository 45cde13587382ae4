// One request of another user that the viewer may answer as an approver (docs/approvers.md): what the card needs and no
// more. The trusted question, the tool, the arguments exactly as they will run (hidden characters shown), the agent,
// who asked, the quorum so far; Accept, Decline with instructions. Live through elicitationUpdated: each counted answer
// and the decision, which takes it out of the queue. Keys (when the card has focus): A accept, D decline, Escape back.
import { useClient, useMutation, useSubscription } from '@urql/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApproverCardFragment, ApproverCardLiveSubscription as LiveData } from '../gql/graphql';
import { stepUpAssertion } from '../passkeys';
import { describeRequestError, describeUserError } from '../errors';
import { ApproverAnswerMutation, ApproverCardLiveSubscription } from '../operations';
import { formatRemaining, formatTime, spokenRemaining, useNow } from '../time';
import { Approvals, countingAccepts } from './Approvals';
import { CardHead } from './CardHead';
import { CallArguments } from './CallArguments';
import { callLabel } from './ElicitationCard';
import { visibleText } from '../../../../src/domain/visible-text';

/** How far a request went: decided beats pending, more answers beat fewer (the mutation's and the live one race). */
function progress(elicitation: ApproverCardFragment): number {
  return (elicitation.status === 'PENDING' ? 0 : 1_000_000) + elicitation.answers.length;
}

export function ApproverCard({
  elicitation: delivered,
  viewerId,
  onGone,
}: {
  elicitation: ApproverCardFragment;
  viewerId: string;
  /** Once it no longer waits for anyone (decided, cancelled, expired), with what became of it. */
  onGone: (outcome: string) => void;
}) {
  const cardRef = useRef<HTMLElement>(null);
  const [declining, setDeclining] = useState(false);
  const [instructions, setInstructions] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [answered, setAnswered] = useState<ApproverCardFragment | null>(null);
  const [{ fetching }, answer] = useMutation(ApproverAnswerMutation);
  const client = useClient();
  const [live] = useSubscription(
    { query: ApproverCardLiveSubscription, variables: { id: delivered.id } },
    (_prev: ApproverCardFragment | undefined, data: LiveData) => data.elicitationUpdated,
  );

  const elicitation = [live.data, answered]
    .filter((e): e is ApproverCardFragment => e != null)
    .reduce((newest, e) => (progress(e) > progress(newest) ? e : newest), delivered);
  const pending = elicitation.status === 'PENDING';
  const now = useNow(pending);
  const remaining = new Date(elicitation.expiresAt).getTime() - now;
  const expired = elicitation.status === 'EXPIRED' || (pending && remaining <= 0);
  // An approver answers once; an edit by another approver since lets them approve the new arguments.
  const mine = elicitation.answers.find((a) => a.approver === viewerId);
  const theirTurn = !mine || (mine.action === 'ACCEPT' && !mine.counts);
  const answerable = pending && !expired && theirTurn && !fetching;
  const label = callLabel(elicitation.toolCall, elicitation.agent?.tools);
  const ids = { title: `title-${elicitation.id}`, question: `question-${elicitation.id}` };
  const gone = expired ? 'expired' : pending ? null : `${elicitation.status.toLowerCase()}`;

  useEffect(() => {
    if (!gone) return;
    const by = elicitation.resolvedBy ? ` by ${elicitation.resolvedBy}` : '';
    onGone(`${visibleText(label).text}: ${gone}${by}.`);
  }, [gone]);

  const focusCard = () => cardRef.current?.focus();

  async function submit(action: 'ACCEPT' | 'DECLINE', content?: { instructions: string }, passkeyAssertion?: unknown) {
    if (!answerable) return;
    setError(null);
    focusCard();
    const result = await answer({
      input: {
        elicitationId: elicitation.id,
        action,
        ...(content && { content }),
        ...(passkeyAssertion != null && { passkeyAssertion }),
      },
    });
    if (result.error) {
      setError(describeRequestError(result.error));
      return;
    }
    const payload = result.data!.resolveElicitation;
    if (payload.userErrors.length > 0) {
      // A step-up request refuses an Accept without the approver's passkey, changing nothing: the same Accept again,
      // with the assertion. Every other answer goes at once, with no round trip more.
      if (action === 'ACCEPT' && passkeyAssertion == null && payload.userErrors[0]!.code === 'PASSKEY_REQUIRED') {
        const stepUp = await stepUpAssertion(client, elicitation.id, null);
        if ('error' in stepUp) setError(stepUp.error);
        else await submit(action, content, stepUp.assertion);
        return;
      }
      setError(payload.userErrors.map(describeUserError).join(' '));
      return;
    }
    setDeclining(false);
    if (payload.elicitation) setAnswered(payload.elicitation);
  }

  function decline(event?: Event) {
    event?.preventDefault();
    const text = instructions.trim();
    void submit('DECLINE', text ? { instructions: text } : undefined);
  }

  function openDecline() {
    setError(null);
    setDeclining(true);
    setTimeout(() => cardRef.current?.querySelector<HTMLElement>('[data-autofocus="decline"]')?.focus(), 0);
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'Escape' && declining) {
      event.preventDefault();
      setDeclining(false);
      focusCard();
      return;
    }
    if (event.target !== event.currentTarget || event.ctrlKey || event.metaKey || event.altKey || !answerable) return;
    const key = event.key.toLowerCase();
    if (key === 'a') {
      event.preventDefault();
      void submit('ACCEPT');
    } else if (key === 'd') {
      event.preventDefault();
      openDecline();
    }
  }

  const accepted = countingAccepts(elicitation.answers).length;
  const required = elicitation.approval?.required ?? 1;

  return (
    <article
      ref={cardRef}
      class={`card ${pending && !expired ? 'card-pending' : 'card-done'}`}
      tabIndex={0}
      aria-labelledby={ids.title}
      aria-describedby={ids.question}
      aria-keyshortcuts={answerable ? 'A D' : undefined}
      data-elicitation-id={elicitation.id}
      data-status={expired ? 'EXPIRED' : elicitation.status}
      onKeyDown={onKeyDown}
    >
      <CardHead ids={ids} label={label} toolCall={elicitation.toolCall} message={elicitation.message} />
      <dl class="facts">
        <div>
          <dt>Asked by</dt>
          <dd data-testid="requested-by">{elicitation.requestedBy}</dd>
        </div>
        <div>
          <dt>Agent</dt>
          <dd>{elicitation.agent?.name ?? 'an agent that no longer exists'}</dd>
        </div>
        <div>
          <dt>Asked</dt>
          <dd>{formatTime(elicitation.createdAt)}</dd>
        </div>
      </dl>
      <CallArguments
        modelArguments={elicitation.toolCall.arguments}
        modelDisplay={elicitation.toolCall.argumentsDisplay}
        status={expired ? 'EXPIRED' : elicitation.status}
        editedArguments={null}
      />
      <div role="status" aria-live="polite">
        <Approvals approval={elicitation.approval} answers={elicitation.answers} />
        {pending && !expired && !theirTurn && (
          <p class="answered">
            You answered. Waiting for {required - accepted} more approval{required - accepted === 1 ? '' : 's'}.
          </p>
        )}
      </div>

      {pending && !expired && (
        <p class="countdown" role="timer" aria-live="off" aria-label={`Expires in ${spokenRemaining(remaining)}`}>
          Expires in <strong>{formatRemaining(remaining)}</strong>
        </p>
      )}

      {answerable && declining && (
        <form class="decline" onSubmit={decline}>
          <label>
            Instructions for the agent (optional)
            <input
              data-autofocus="decline"
              type="text"
              value={instructions}
              onInput={(e) => setInstructions(e.currentTarget.value)}
            />
          </label>
          <div class="actions">
            <button type="submit" class="danger">
              Decline
            </button>
            <button
              type="button"
              onClick={() => {
                setDeclining(false);
                focusCard();
              }}
            >
              Back
            </button>
          </div>
        </form>
      )}
      {answerable && !declining && (
        <div class="actions">
          <button type="button" class="primary" onClick={() => void submit('ACCEPT')} aria-keyshortcuts="A">
            Accept
          </button>
          <button type="button" onClick={openDecline} aria-keyshortcuts="D">
            Decline…
          </button>
        </div>
      )}
      {fetching && <p role="status">Sending your answer…</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}
