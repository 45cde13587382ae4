// Answers under an approvers policy (docs/approvers.md "Answers under a quorum"): whether an approver's answer may be
// recorded, and what the answers recorded so far decide. Pure: the store reads the request and its answers in the
// answer's transaction (its turn's row locked), asks, and writes what these functions say.
import { sameAnswer, type AnswerDecision } from './answer-rules.js';
import { answerCounts } from './approvers.js';
import { sameJson } from './canonical-json.js';
import { isPastExpiry } from './expiry.js';
import type {
  ApproverAnswer,
  ElicitationAnswer,
  ElicitationApproval,
  ElicitationRecord,
  JsonObject,
  RememberChoice,
} from './records.js';

export type Tally =
  /** Not decided yet: `accepted` are the approvers whose ACCEPT of the current proposal counts. */
  | { kind: 'pending'; proposal: JsonObject | null; accepted: string[] }
  /** Decided: the request resolves with `answer`, given by `by` (the approver who completed it). */
  | { kind: 'decided'; answer: ElicitationAnswer; by: string };

/**
 * What the answers given so far (in the order given) decide under `policy`:
 *
 * - a DECLINE: DECLINE at once, with its content (the instructions reach the model);
 * - a CANCEL (only the requester's or an administrator's is ever recorded): CANCEL;
 * - `required` distinct ACCEPTs of the current proposal: ACCEPT, with those arguments;
 * - else still pending.
 *
 * The current proposal is what the latest ACCEPT approved: its edited arguments, or the model's (null). An edit thus
 * restarts the count: only ACCEPTs of the arguments proposed last count. Under EXCLUDED the requester's ACCEPT and
 * DECLINE never count (four eyes). The decided ACCEPT carries the content of the answer that completed it, and
 * remembers only when every counted ACCEPT asked to: with the narrowest scope and the shortest ttl among them.
 */
export function tallyAnswers(
  policy: Pick<ElicitationApproval, 'required' | 'requester'>,
  answers: readonly ApproverAnswer[],
  requesterId: string,
): Tally {
  const counts = (answer: ApproverAnswer) => answerCounts(policy, answer.approverId, requesterId);
  const cancel = answers.find((a) => a.action === 'CANCEL');
  if (cancel) return { kind: 'decided', answer: { action: 'CANCEL', content: null }, by: cancel.approverId };
  const decline = answers.find((a) => a.action === 'DECLINE' && counts(a));
  if (decline)
    return { kind: 'decided', answer: { action: 'DECLINE', content: decline.content }, by: decline.approverId };
  const proposal = currentProposal(answers);
  const accepted = answers.filter((a) => a.action === 'ACCEPT' && counts(a) && sameJson(a.arguments ?? null, proposal));
  if (accepted.length < policy.required) {
    return { kind: 'pending', proposal, accepted: accepted.map((a) => a.approverId) };
  }
  const completing = accepted.at(-1)!;
  const remember = rememberOfAll(accepted.map((a) => a.remember));
  return {
    kind: 'decided',
    by: completing.approverId,
    answer: {
      action: 'ACCEPT',
      content: completing.content,
      ...(proposal !== null && { arguments: proposal }),
      ...(remember && { remember }),
    },
  };
}

/** The arguments the latest ACCEPT approved (null: the model's); null when nobody accepted yet. */
export function currentProposal(answers: readonly Pick<ApproverAnswer, 'action' | 'arguments'>[]): JsonObject | null {
  return answers.findLast((a) => a.action === 'ACCEPT')?.arguments ?? null;
}

/** Remember only when every one asked to: the narrowest scope (THREAD before AGENT), the shortest ttl. */
function rememberOfAll(choices: readonly (RememberChoice | null)[]): RememberChoice | null {
  if (choices.length === 0 || choices.some((choice) => choice === null)) return null;
  const all = choices as RememberChoice[];
  return {
    scope: all.some((choice) => choice.scope === 'THREAD') ? 'THREAD' : 'AGENT',
    ttlSeconds: Math.min(...all.map((choice) => choice.ttlSeconds)),
  };
}

/** An approver's answer as recorded, compared with one sent again. */
function asAnswer(recorded: ApproverAnswer): ElicitationAnswer {
  return {
    action: recorded.action,
    content: recorded.content,
    ...(recorded.arguments !== null && { arguments: recorded.arguments }),
    ...(recorded.remember !== null && { remember: recorded.remember }),
  };
}

export type ApproverAnswerDecision =
  | Exclude<AnswerDecision, { kind: 'record' } | { kind: 'not_found' }>
  /** Record it as the approver's answer (replacing their earlier ACCEPT when an edit outdated it), then tally. */
  | { kind: 'record' };

/**
 * What an approver's answer does to a request under a policy, before the tally: the same answer again is a duplicate
 * (also once the request is decided: the approver gets the recorded result); another answer after theirs is
 * already_resolved, unless their ACCEPT no longer counts because an edit proposed other arguments since (they may
 * answer anew), or it is a CANCEL. Never fail open: at or after the expiry nothing is recorded.
 */
export function decideApproverAnswer(
  elicitation: Pick<ElicitationRecord, 'status' | 'expiresAt'>,
  answers: readonly ApproverAnswer[],
  approverId: string,
  answer: ElicitationAnswer,
  now: string,
): ApproverAnswerDecision {
  const mine = answers.find((a) => a.approverId === approverId) ?? null;
  const same = mine !== null && sameAnswer(asAnswer(mine), answer);
  if (elicitation.status === 'EXPIRED') return { kind: 'expired', expireTurn: false };
  if (elicitation.status !== 'PENDING') return { kind: same ? 'duplicate' : 'already_resolved' };
  if (isPastExpiry(elicitation.expiresAt, now)) return { kind: 'expired', expireTurn: true };
  if (same) return { kind: 'duplicate' };
  // A CANCEL stops the turn whatever its sender answered before (only the requester's or an admin's gets here).
  if (answer.action !== 'CANCEL' && !awaitsAnswerOf(answers, approverId)) return { kind: 'already_resolved' };
  return { kind: 'record' };
}

/**
 * Whether an approver is still to answer a request, given its answers so far: they have not answered, or their ACCEPT
 * is outdated. The list of requests to answer (the store's `toAnswer` statements) holds the same rule in SQL, as it
 * pages and counts in the database; test/app/approvers.test.ts pins the two to agree on both backends.
 */
export function awaitsAnswerOf(answers: readonly ApproverAnswer[], approverId: string): boolean {
  const mine = answers.find((a) => a.approverId === approverId);
  return !mine || outdated(mine, answers);
}

/** An ACCEPT of arguments other than the current proposal: an edit since restarted the count without it. */
export function outdated(answer: ApproverAnswer, answers: readonly ApproverAnswer[]): boolean {
  return answer.action === 'ACCEPT' && !sameJson(answer.arguments ?? null, currentProposal(answers));
}
