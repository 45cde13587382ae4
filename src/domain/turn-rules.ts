// The rules of a turn's life that a store applies inside its transactions: whether a turn may start on a thread, what
// happens to the thread's paused turn, and how a paused turn closes without running. Pure functions: the store reads
// the rows, asks, and writes what the answer says, so every dialect decides alike.
import { isPastExpiry } from './expiry.js';
import { closeStep } from './gate/closing.js';
import type {
  CloseReason,
  ElicitationDraft,
  ElicitationRecord,
  ThreadRecord,
  ToolMessageDraft,
  TurnRecord,
} from './records.js';
import type { StartRefusal } from './refusals.js';

export type ThreadDecision =
  /** No thread was named: the turn starts a new one. */
  | { kind: 'new' }
  | { kind: 'existing'; thread: ThreadRecord }
  | { kind: 'refuse'; refusal: Extract<StartRefusal, { of: 'thread' }> };

/**
 * Where a new turn goes. `found`: the named thread as the store read it for the caller (scoped to the owner: another
 * owner's thread is not found), null if none or if no thread was named. A thread belongs to one agent.
 */
export function decideThread(
  request: { threadId: string | null; agentId: string },
  found: ThreadRecord | null,
): ThreadDecision {
  // An empty id is an id like any other: no thread has it (NOT_FOUND), it does not mean "a new thread".
  if (request.threadId === null) return { kind: 'new' };
  if (!found) return { kind: 'refuse', refusal: { code: 'NOT_FOUND', of: 'thread', reason: 'NO_SUCH_THREAD' } };
  if (found.agentId !== request.agentId)
    return { kind: 'refuse', refusal: { code: 'NOT_FOUND', of: 'thread', reason: 'OTHER_AGENT' } };
  return { kind: 'existing', thread: found };
}

export type ActiveTurnDecision =
  /** Nothing runs or waits on the thread. */
  | { kind: 'start' }
  /** A turn is RUNNING: a thread runs one turn at a time. */
  | { kind: 'refuse'; refusal: Extract<StartRefusal, { code: 'THREAD_BUSY' }> }
  /**
   * A turn is PAUSED: the new message replaces it. It closes first (closePausedTurn), 'expired' if its expiry has
   * passed (it could not be answered any more anyway), else 'superseded'.
   */
  | { kind: 'supersede'; reason: Extract<CloseReason, 'expired' | 'superseded'> };

/** What a new turn does to the thread's active turn (RUNNING or PAUSED; null if none), at `now`. */
export function decideActiveTurn(
  active: Pick<TurnRecord, 'status' | 'expiresAt'> | null,
  now: string,
): ActiveTurnDecision {
  if (active?.status === 'RUNNING') return { kind: 'refuse', refusal: { code: 'THREAD_BUSY' } };
  if (active?.status === 'PAUSED') {
    const expired = active.expiresAt !== null && isPastExpiry(active.expiresAt, now);
    return { kind: 'supersede', reason: expired ? 'expired' : 'superseded' };
  }
  return { kind: 'start' };
}

/** What closing a paused turn writes. */
export interface PausedTurnClosing {
  /** The turn's final status, and that of its elicitations still PENDING: EXPIRED when it expired, else CANCELLED. */
  status: 'EXPIRED' | 'CANCELLED';
  /** The elicitations still PENDING (in the order given): they close with `status`; answered ones keep their answer. */
  closeElicitations: string[];
  /** One TOOL message per call of the step (none without a step), from `closeStep` and the answers already given. */
  toolMessages: ToolMessageDraft[];
}

/**
 * A PAUSED turn that will not run: cancelled by its user (CANCEL), expired, or superseded by a new message.
 * `elicitations`: all of the turn's, as stored in the closing transaction (an answer recorded in it included).
 */
export function closePausedTurn(
  turn: Pick<TurnRecord, 'step'>,
  elicitations: readonly Pick<ElicitationRecord, 'id' | 'status' | 'response'>[],
  reason: CloseReason,
): PausedTurnClosing {
  const answers = Object.fromEntries(elicitations.map((e) => [e.id, e.response]));
  return {
    status: reason === 'expired' ? 'EXPIRED' : 'CANCELLED',
    closeElicitations: elicitations.filter((e) => e.status === 'PENDING').map((e) => e.id),
    toolMessages: turn.step ? closeStep(turn.step, reason, answers) : [],
  };
}

/**
 * The elicitations a pause creates, as their rows hold them once written (PENDING, of the turn's owner): what a store
 * returns from pauseTurn without reading them back.
 */
export function pausedElicitations(
  turn: Pick<TurnRecord, 'id' | 'threadId' | 'agentId' | 'ownerId'>,
  drafts: readonly ElicitationDraft[],
  now: string,
  expiresAt: string,
): ElicitationRecord[] {
  return drafts.map((draft) => ({
    id: draft.id,
    turnId: turn.id,
    threadId: turn.threadId,
    agentId: turn.agentId,
    ownerId: turn.ownerId,
    toolCallId: draft.toolCallId,
    status: 'PENDING',
    request: draft.request,
    toolCall: draft.toolCall,
    response: null,
    grantId: null,
    resolvedBy: null,
    resolvedByIdentity: null,
    resolvedAt: null,
    withdrawn: null,
    createdAt: now,
    expiresAt,
    approval: draft.approval ?? null,
    escalatedAt: null,
    callerWaitingUntil: null,
  }));
}

/** A new turn as its start writes it: RUNNING, with no step and no iteration yet. */
export function startedTurn(
  turn: Pick<TurnRecord, 'id' | 'threadId' | 'agentId' | 'ownerId'>,
  now: string,
): TurnRecord {
  return {
    ...turn,
    status: 'RUNNING',
    text: null,
    error: null,
    iterations: 0,
    step: null,
    createdAt: now,
    updatedAt: now,
    expiresAt: null,
  };
}
