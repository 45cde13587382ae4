// The answer state machine: what a user's answer (ACCEPT, DECLINE, CANCEL) does to a confirmation request, decided
// from the request as the store read it inside the answer's transaction. Pure: the store writes what it says.
import { sameJson } from './canonical-json.js';
import { isPastExpiry } from './expiry.js';
import type { ElicitationAction, ElicitationAnswer, ElicitationRecord, JsonObject } from './records.js';

export type AnsweredStatus = 'ACCEPTED' | 'DECLINED' | 'CANCELLED';

export type AnswerDecision =
  /** No such request for this user. */
  | { kind: 'not_found' }
  /** Answered before with the same action and the same content: nothing changes, the caller gets what is recorded. */
  | { kind: 'duplicate' }
  /** Answered before (or closed) differently: the first answer stands. */
  | { kind: 'already_resolved' }
  /**
   * Too late: the request is EXPIRED and nothing runs. `expireTurn`: it was still PENDING past its expiry, so this
   * answer expires its turn now (closePausedTurn, 'expired'); false when it was recorded EXPIRED before.
   */
  | { kind: 'expired'; expireTurn: boolean }
  /**
   * Record the answer with `status`. Then CANCEL closes the turn (closePausedTurn, 'cancelled'); ACCEPT and DECLINE
   * resume it if no other request of the step is still PENDING (resumesTurn).
   */
  | { kind: 'record'; status: AnsweredStatus; then: 'cancel_turn' | 'resume_if_last' };

/** The status an answer gives its request. */
export function answeredStatus(action: ElicitationAction): AnsweredStatus {
  return action === 'ACCEPT' ? 'ACCEPTED' : action === 'DECLINE' ? 'DECLINED' : 'CANCELLED';
}

/**
 * What `answer`, given at `now`, does to `elicitation` (null: not found for this user). Answers are idempotent: the
 * same one again is a duplicate (sameAnswer); content is compared as JSON values, so key order does not matter. Never fail open:
 * at or after `expiresAt` nothing is recorded, whether or not the sweeper got there first.
 */
export function decideAnswer(
  elicitation: Pick<ElicitationRecord, 'status' | 'response' | 'expiresAt'> | null,
  answer: ElicitationAnswer,
  now: string,
): AnswerDecision {
  if (!elicitation) return { kind: 'not_found' };
  if (elicitation.status !== 'PENDING') {
    if (elicitation.status === 'EXPIRED') return { kind: 'expired', expireTurn: false };
    return { kind: sameAnswer(elicitation.response, answer) ? 'duplicate' : 'already_resolved' };
  }
  if (isPastExpiry(elicitation.expiresAt, now)) return { kind: 'expired', expireTurn: true };
  const then = answer.action === 'CANCEL' ? 'cancel_turn' : 'resume_if_last';
  return { kind: 'record', status: answeredStatus(answer.action), then };
}

/**
 * The same answer: same action, content, edited arguments and remember choice, compared as JSON values (absent and
 * null alike). Edited arguments that differ are another answer: ALREADY_RESOLVED, the first one stands.
 */
export function sameAnswer(recorded: ElicitationAnswer | null, answer: ElicitationAnswer): boolean {
  return (
    recorded?.action === answer.action &&
    sameJson(recorded.content ?? null, answer.content ?? null) &&
    sameJson(recorded.arguments ?? null, answer.arguments ?? null) &&
    sameJson(recorded.remember ?? null, answer.remember ?? null)
  );
}

/**
 * The answer as it counts: an ACCEPT whose `arguments` equal the model's (as JSON values, key order aside) is a plain
 * ACCEPT, not an edit, and is recorded, run, told to the model and reported as one. Anything else is unchanged.
 */
export function effectiveAnswer(answer: ElicitationAnswer, modelArguments: JsonObject): ElicitationAnswer {
  if (answer.action !== 'ACCEPT' || answer.arguments == null || !sameJson(answer.arguments, modelArguments)) {
    return answer;
  }
  const { arguments: _unchanged, ...plain } = answer;
  return plain;
}

/**
 * The last answer resumes the turn: after an ACCEPT or DECLINE is recorded, a claim of the turn (PAUSED → RUNNING)
 * is due when no other request of the step is still PENDING. The claim itself is the store's atomic conditional
 * write: of several answers racing to be last, exactly one wins it and continues the turn; the others report
 * 'recorded'.
 */
export function resumesTurn(otherPending: boolean): boolean {
  return !otherPending;
}
