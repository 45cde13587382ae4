// One confirmation request: the trusted question, the tool, its annotations, the arguments exactly as they will run
// (after an edited ACCEPT: what ran, marked edited, and the model's), what the user asked for, the agent and thread,
// a countdown; Accept (optionally edited, optionally remembered), Decline with instructions,
// Cancel; then the turn's progress, live. Under an approvers policy, who approved so far (live, as the turn changes);
// under four eyes the requester only cancels. Keys (when the card has focus): A accept, D decline, E edit, Escape back.
// A gateway's call (an MCP client's, no model) is worded as the client's: its arguments, its call to cancel.
import { useClient, useMutation } from '@urql/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CallerWithdrawal, ElicitationCardFragment, ResolveElicitationInput } from '../gql/graphql';
import { stepUpAssertion } from '../passkeys';
import { describeRequestError, describeUserError } from '../errors';
import { useLiveTurn } from '../live-turn';
import { AnswerMutation } from '../operations';
import { hrefOf, linkClick } from '../router';
import { formatRemaining, formatTime, spokenRemaining, useNow } from '../time';
import { Approvals } from './Approvals';
import { StatusBadge } from './Badges';
import { CardHead } from './CardHead';
import { visibleJson } from '../../../../src/domain/visible-text';
import { CallArguments } from './CallArguments';
import { VisibleString, type Displayed } from './VisibleText';
import { TurnProgress } from './TurnProgress';

type Mode = 'idle' | 'decline' | 'edit';

/** The answer's display form of its edited arguments, where the query that brought the answer selected it. */
function displayOf(response: object | null | undefined): Displayed | null {
  return response && 'argumentsDisplay' in response ? (response.argumentsDisplay as Displayed | null) : null;
}

const REMEMBER_TTLS = [
  { seconds: 3600, text: '1 hour' },
  { seconds: 86_400, text: '1 day' },
  { seconds: 604_800, text: '7 days' },
  { seconds: 2_592_000, text: '30 days' },
];

export function toolLabel(elicitation: ElicitationCardFragment): string {
  return callLabel(elicitation.toolCall, elicitation.turn.thread.agent.tools);
}

/** A call's tool as a card names it: the agent's label for the tool, else its annotated title, else its name. */
export function callLabel(
  toolCall: { toolId: string; name: string; annotations: { title?: string | null } },
  tools: readonly { toolId: string; label: string }[] | undefined,
): string {
  const tool = tools?.find((t) => t.toolId === toolCall.toolId);
  return tool?.label ?? toolCall.annotations.title ?? toolCall.name;
}

/**
 * What the decline box suggests, for this tool: what an agent's model should do instead, or why not, for a client
 * (whose model reads the answer as the call's result).
 */
export function declineHint(label: string, gateway: boolean): string {
  return gateway ? `e.g. why "${label}" must not run now` : `e.g. what to do instead of "${label}"`;
}

/** The user's message that started the request's turn, shortened for a card. */
export function requestText(elicitation: ElicitationCardFragment): string | null {
  const text = elicitation.turn.userMessage?.text?.trim();
  if (!text) return null;
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/** Why a gateway call was withdrawn, as the card says it. */
const WITHDRAWN: Record<CallerWithdrawal, string> = {
  CANCELLED: 'the caller stopped waiting (its client cancelled the call, e.g. on its timeout).',
  DISCONNECTED: 'the caller stopped waiting (its client disconnected).',
};

export function ElicitationCard({
  elicitation,
  onDismiss,
  onSettled,
  showThreadLink = true,
}: {
  elicitation: ElicitationCardFragment;
  onDismiss?: () => void;
  /** Once it stops waiting (answered here or elsewhere, or expired), with the status it ended in. */
  onSettled?: (status: string) => void;
  showThreadLink?: boolean;
}) {
  const cardRef = useRef<HTMLElement>(null);
  const [mode, setMode] = useState<Mode>('idle');
  const [instructions, setInstructions] = useState('');
  // The edit box starts from the visible JSON: hidden characters as \u escapes, which parse back to the same value.
  const [edited, setEdited] = useState(() => visibleJson(elicitation.toolCall.arguments).text);
  const [remember, setRemember] = useState(false);
  const [rememberScope, setRememberScope] = useState<'THREAD' | 'AGENT'>('THREAD');
  const [rememberTtl, setRememberTtl] = useState(3600);
  const [error, setError] = useState<string | null>(null);
  const [answeredHere, setAnsweredHere] = useState<string | null>(null);
  const [answeredWith, setAnsweredWith] = useState<ElicitationCardFragment['response'] | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [{ fetching }, answer] = useMutation(AnswerMutation);
  const client = useClient();
  const live = useLiveTurn(elicitation.turn.id);

  const liveElicitation = live.turn?.elicitations.find((e) => e.id === elicitation.id);
  const liveStatus = liveElicitation?.status;
  const status = answeredHere ?? refused ?? liveStatus ?? elicitation.status;
  // The answer as recorded, wherever it was given: its edited arguments are what ran.
  const response = answeredWith ?? liveElicitation?.response ?? elicitation.response;
  const answers = liveElicitation?.answers ?? elicitation.answers;
  const resolvedBy = liveElicitation?.resolvedBy ?? elicitation.resolvedBy;
  const withdrawn = liveElicitation?.withdrawn ?? elicitation.withdrawn;
  const pending = status === 'PENDING';
  const now = useNow(pending);
  const remaining = new Date(elicitation.expiresAt).getTime() - now;
  const expired = status === 'EXPIRED' || (pending && remaining <= 0);
  const answerable = pending && !expired && !fetching;
  // Four eyes: others approve; the requester may only cancel.
  const fourEyes = elicitation.approval?.requester === 'EXCLUDED';
  const decidable = answerable && !fourEyes;
  const label = toolLabel(elicitation);
  const agent = elicitation.turn.thread.agent;
  const gateway = agent.isGateway;
  const what = gateway ? 'call' : 'turn';
  const ids = { title: `title-${elicitation.id}`, question: `question-${elicitation.id}` };
  const request = requestText(elicitation);
  const settled = pending && !expired ? null : expired ? 'EXPIRED' : status;

  const focusCard = () => cardRef.current?.focus();

  useEffect(() => {
    if (settled) onSettled?.(settled);
  }, [settled]);

  /** Sends the answer; 'PASSKEY_REQUIRED' (nothing shown, nothing changed) when a step-up request needs the passkey. */
  async function submit(input: Omit<ResolveElicitationInput, 'elicitationId'>): Promise<'PASSKEY_REQUIRED' | void> {
    if (!answerable) return;
    setError(null);
    // Now, not after the answer: the form or button that had focus goes while the answer is sent, and focus must not
    // fall to the page meanwhile (an answer can take as long as the model call after it).
    focusCard();
    const result = await answer({ input: { elicitationId: elicitation.id, ...input } });
    if (result.error) {
      setError(describeRequestError(result.error));
      return;
    }
    const payload = result.data!.resolveElicitation;
    if (payload.userErrors.length > 0) {
      const code = payload.userErrors[0]!.code;
      if (code === 'PASSKEY_REQUIRED' && input.passkeyAssertion == null) return 'PASSKEY_REQUIRED';
      setError(payload.userErrors.map(describeUserError).join(' '));
      if (code === 'EXPIRED') setRefused('EXPIRED');
      // The first answer stands; the live turn shows which it was.
      if (code === 'ALREADY_RESOLVED' || code === 'NOT_FOUND') setRefused(payload.elicitation?.status ?? 'ANSWERED');
      return;
    }
    setMode('idle');
    setAnsweredHere(payload.elicitation?.status ?? input.action);
    setAnsweredWith(payload.elicitation?.response ?? null);
    // Only if it was lost: the user may have moved on (J, Tab) while the answer was on its way.
    if (document.activeElement === document.body) focusCard();
  }

  function accept() {
    const input: Omit<ResolveElicitationInput, 'elicitationId'> = { action: 'ACCEPT' };
    if (mode === 'edit') {
      try {
        input.arguments = JSON.parse(edited) as unknown;
      } catch {
        setError('The edited arguments are not valid JSON. Fix them, or press Escape to keep the original ones.');
        return;
      }
    }
    if (remember && elicitation.canRemember) input.remember = { scope: rememberScope, ttlSeconds: rememberTtl };
    void acceptWithStepUp(input);
  }

  /**
   * A step-up request's Accept carries the passkey's assertion over the arguments that will run. The Accept goes at
   * once; a step-up request refuses it without the assertion (changing nothing), and it is sent again with one.
   */
  async function acceptWithStepUp(input: Omit<ResolveElicitationInput, 'elicitationId'>) {
    if ((await submit(input)) !== 'PASSKEY_REQUIRED') return;
    const stepUp = await stepUpAssertion(client, elicitation.id, input.arguments);
    if ('error' in stepUp) {
      setError(stepUp.error);
      return;
    }
    if (stepUp.assertion) input.passkeyAssertion = stepUp.assertion;
    if ((await submit(input)) === 'PASSKEY_REQUIRED')
      setError('This request needs your passkey; nothing was answered.');
  }

  function decline(event?: Event) {
    event?.preventDefault();
    const text = instructions.trim();
    void submit({ action: 'DECLINE', ...(text ? { content: { instructions: text } } : {}) });
  }

  function openMode(next: Mode) {
    setError(null);
    setMode(next);
    // After render: the form's first field takes focus.
    setTimeout(() => cardRef.current?.querySelector<HTMLElement>(`[data-autofocus="${next}"]`)?.focus(), 0);
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'Escape' && mode !== 'idle') {
      event.preventDefault();
      setMode('idle');
      focusCard();
      return;
    }
    // Letter shortcuts only when the card itself has focus: typing in a field must type.
    if (event.target !== event.currentTarget || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!decidable) return;
    const key = event.key.toLowerCase();
    if (key === 'a') {
      event.preventDefault();
      accept();
    } else if (key === 'd') {
      event.preventDefault();
      openMode('decline');
    } else if (key === 'e' && elicitation.canEdit) {
      event.preventDefault();
      openMode('edit');
    }
  }

  return (
    <article
      ref={cardRef}
      class={`card ${expired ? 'card-expired' : ''} ${pending && !expired ? 'card-pending' : 'card-done'}`}
      tabIndex={0}
      aria-labelledby={ids.title}
      aria-describedby={ids.question}
      aria-keyshortcuts={decidable ? 'A D' : undefined}
      data-elicitation-id={elicitation.id}
      data-status={expired ? 'EXPIRED' : status}
      onKeyDown={onKeyDown}
    >
      <CardHead ids={ids} label={label} toolCall={elicitation.toolCall} message={elicitation.message} />
      <dl class="facts">
        {request && (
          <div>
            <dt>Request</dt>
            <dd class="request">
              {showThreadLink ? (
                <a href={hrefOf({ view: 'thread', threadId: elicitation.turn.thread.id })} onClick={linkClick}>
                  <VisibleString text={request} />
                </a>
              ) : (
                <VisibleString text={request} />
              )}
            </dd>
          </div>
        )}
        <div>
          <dt>{gateway ? 'Gateway' : 'Agent'}</dt>
          <dd>{agent.name}</dd>
        </div>
        <div>
          <dt>Thread</dt>
          <dd>
            {showThreadLink ? (
              <a href={hrefOf({ view: 'thread', threadId: elicitation.turn.thread.id })} onClick={linkClick}>
                {elicitation.turn.thread.id}
              </a>
            ) : (
              elicitation.turn.thread.id
            )}
          </dd>
        </div>
        <div>
          <dt>Asked</dt>
          <dd>{formatTime(elicitation.createdAt)}</dd>
        </div>
      </dl>
      <CallArguments
        modelArguments={elicitation.toolCall.arguments}
        modelDisplay={elicitation.toolCall.argumentsDisplay}
        status={expired ? 'EXPIRED' : status}
        editedArguments={response?.arguments}
        editedDisplay={displayOf(response)}
        from={gateway ? 'client' : 'model'}
      />

      {pending && !expired && (
        <p class="countdown" role="timer" aria-live="off" aria-label={`Expires in ${spokenRemaining(remaining)}`}>
          Expires in <strong>{formatRemaining(remaining)}</strong>
        </p>
      )}
      {expired && (
        <p class="countdown expired" role="status">
          <strong>Expired.</strong> The {gateway ? 'call' : 'agent'} stopped waiting; this request can no longer be
          answered and nothing ran.
        </p>
      )}
      {pending && !expired && elicitation.callerConnected === false && (
        <p class="caller-gone" role="note">
          <strong>The caller is not connected.</strong> Its client stopped waiting, and can come back for this call
          (with its idempotency key or task). An accepted call runs, and its result is kept for when it does.
        </p>
      )}
      {withdrawn && (
        <p class="answered" role="status">
          <strong>Withdrawn:</strong> {WITHDRAWN[withdrawn]} Nothing ran.
        </p>
      )}
      {!pending && !expired && !withdrawn && (
        <p class="answered" role="status">
          Answer: <StatusBadge status={status} />
          {resolvedBy && ` by ${resolvedBy}`}
          {!answeredHere && !elicitation.approval && liveStatus && liveStatus !== 'PENDING' && ' (answered elsewhere)'}
        </p>
      )}
      <div role="status" aria-live="polite">
        <Approvals approval={elicitation.approval} answers={answers} />
      </div>
      {fourEyes && pending && !expired && (
        <p class="four-eyes">
          Four eyes: {elicitation.approval!.required} approver{elicitation.approval!.required === 1 ? '' : 's'} of{' '}
          {elicitation.approval!.roles.join(', ')} decide this request, not you. You may cancel the {what}.
        </p>
      )}

      {decidable && mode === 'edit' && (
        <div class="edit">
          <label>
            Arguments to run instead (JSON)
            <textarea
              data-autofocus="edit"
              rows={Math.min(16, edited.split('\n').length + 1)}
              value={edited}
              spellcheck={false}
              onInput={(e) => setEdited(e.currentTarget.value)}
            />
          </label>
        </div>
      )}

      {decidable && elicitation.canRemember && mode !== 'decline' && (
        <fieldset class="remember">
          <legend class="visually-hidden">Remember this approval</legend>
          <label>
            <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />{' '}
            Remember: later calls of this tool run without asking
          </label>
          {remember && (
            <span class="remember-options">
              <label>
                where{' '}
                <select
                  value={rememberScope}
                  onChange={(e) => setRememberScope(e.currentTarget.value as 'THREAD' | 'AGENT')}
                >
                  <option value="THREAD">in this thread</option>
                  <option value="AGENT">in all my threads with {agent.name}</option>
                </select>
              </label>{' '}
              <label>
                for{' '}
                <select value={rememberTtl} onChange={(e) => setRememberTtl(Number(e.currentTarget.value))}>
                  {REMEMBER_TTLS.map((ttl) => (
                    <option key={ttl.seconds} value={ttl.seconds}>
                      {ttl.text}
                    </option>
                  ))}
                </select>
              </label>
            </span>
          )}
        </fieldset>
      )}

      {decidable && mode === 'decline' && (
        <form class="decline" onSubmit={decline}>
          <label>
            {gateway ? 'Why, for the client (optional)' : 'Instructions for the agent (optional)'}
            <input
              data-autofocus="decline"
              type="text"
              value={instructions}
              placeholder={declineHint(label, gateway)}
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
                setMode('idle');
                focusCard();
              }}
            >
              Back
            </button>
          </div>
        </form>
      )}

      {answerable && mode !== 'decline' && (
        <div class="actions">
          {decidable && (
            <>
              <button type="button" class="primary" onClick={accept} aria-keyshortcuts="A">
                {mode === 'edit' ? 'Accept with these arguments' : 'Accept'}
              </button>
              <button type="button" onClick={() => openMode('decline')} aria-keyshortcuts="D">
                Decline…
              </button>
            </>
          )}
          {decidable && elicitation.canEdit && mode !== 'edit' && (
            <button type="button" onClick={() => openMode('edit')} aria-keyshortcuts="E">
              Edit arguments…
            </button>
          )}
          {mode === 'edit' && (
            <button
              type="button"
              onClick={() => {
                setMode('idle');
                focusCard();
              }}
            >
              Keep the original arguments
            </button>
          )}
          <button
            type="button"
            class="quiet"
            onClick={() => void submit({ action: 'CANCEL' })}
            title={
              gateway
                ? 'Cancels the call: the tool does not run, and the client is told so.'
                : 'Stops the whole turn: no more tools run and the model is not called again.'
            }
          >
            Cancel {what}
          </button>
        </div>
      )}
      {fetching && <p role="status">Sending your answer…</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}

      {!pending && !expired && <TurnProgressOf live={live} gateway={gateway} />}
      {(!pending || expired) && onDismiss && (
        <div class="actions">
          <button type="button" class="quiet" onClick={onDismiss}>
            Dismiss
          </button>
        </div>
      )}
    </article>
  );
}

function TurnProgressOf({ live, gateway }: { live: ReturnType<typeof useLiveTurn>; gateway: boolean }) {
  return (
    <div role="status" aria-live="polite">
      <TurnProgress live={live} gateway={gateway} />
    </div>
  );
}
