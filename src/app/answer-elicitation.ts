// Answer an elicitation: the viewer accepts, declines or cancels one of their confirmation requests, or, as one of its
// approvers (docs/approvers.md), another user's request under an approvers policy. Who may answer, and everything
// about the answer itself, is checked here, before anything is recorded; the store then decides against the stored
// state (answered before, expired, the quorum) and the loop resumes the turn when it was the step's last answer.
import { validateArguments } from '../domain/gate/arguments.js';
import { contentBytes, validateContent } from '../domain/gate/content.js';
import { effectiveAnswer } from '../domain/answer-rules.js';
import { nestedDeeperThan } from '../domain/json-depth.js';
import { type ApproverRefusalReason, mayAnswer, mayRemember } from '../domain/approvers.js';
import { editAllowed } from '../domain/gate/gating.js';
import { MAX_GRANT_TTL_SECONDS } from '../domain/grants.js';
import type { AnswerRefusal, NotFound } from '../domain/refusals.js';
import type {
  CallerWithdrawal,
  ElicitationAction,
  ElicitationAnswer,
  ElicitationRecord,
  JsonObject,
  RememberChoice,
  TurnRecord,
} from '../domain/records.js';
import type { RecordedAssertion } from '../domain/passkey-challenge.js';
import type { AppDeps } from './deps.js';
import { stepUpRequired, verifyStepUp, type PasskeyRefusal } from './passkeys.js';
import { type Outcome } from './outcome.js';
import { answerIdentityOf, type Viewer } from './viewer.js';

export interface AnswerElicitationInput {
  elicitationId: string;
  action: ElicitationAction;
  /** With ACCEPT or DECLINE: an object matching the request's requestedSchema. */
  content?: unknown;
  /** With ACCEPT: the arguments to run instead of the model's (an edit). */
  arguments?: unknown;
  /** With ACCEPT: remember the approval for later calls of the tool. */
  remember?: RememberChoice | null;
  /** With CANCEL, from src/app/cancel-call.ts: the call's caller stopped waiting, and why (kept with the request). */
  withdrawn?: CallerWithdrawal;
  /** With ACCEPT of a call that requires passkey step-up: the browser's startAuthentication result. */
  passkeyAssertion?: unknown;
  /** The request's Origin (a browser's): the relying party when server.publicUrl is not configured. */
  origin?: string | null;
}

export type AnswerElicitationRefusal =
  | { code: 'INVALID_INPUT'; field: 'content'; reason: 'TOO_LARGE'; maxBytes: number }
  | (NotFound<'elicitation'> & { field: 'elicitationId' })
  /** The content does not match the request, or the edited arguments the tool's inputSchema: `problem` says how. */
  | { code: 'INVALID_CONTENT'; field: 'content' | 'arguments'; at: string[]; problem: string }
  | { code: 'INVALID_INPUT'; field: 'arguments' | 'remember'; reason: 'ACCEPT_ONLY' }
  /** The agent's allowEdit is off for the tool. */
  | { code: 'FORBIDDEN'; field: 'arguments'; reason: 'EDIT_OFF'; toolName: string }
  /** The agent no longer has the tool whose call is edited. */
  | { code: 'INVALID_INPUT'; field: 'arguments'; reason: 'TOOL_GONE'; toolId: string }
  | { code: 'INVALID_INPUT'; field: 'remember'; at: ['ttlSeconds']; reason: 'OUT_OF_RANGE'; max: number }
  /** The call asks every time (ALWAYS, or a listener's reason of its own), or was asked before grants existed. */
  | { code: 'INVALID_INPUT'; field: 'remember'; reason: 'NOT_REMEMBERABLE'; toolName: string; stepUp?: true }
  /** The store's refusals: not found, answered before (ALREADY_RESOLVED), expired. */
  | (AnswerRefusal & { field: 'elicitationId' })
  /** Under an approvers policy, the viewer may not give this answer: see ApproverRefusalReason. */
  | { code: 'FORBIDDEN'; field: 'action'; reason: ApproverRefusalReason; escalatesAt?: string }
  /** The tool requires passkey step-up: the assertion is missing or does not verify (src/app/passkeys.ts). */
  | PasskeyRefusal;

export type AnswerElicitationOutcome = Outcome<
  {
    elicitation: ElicitationRecord;
    /**
     * The turn after the answer: PAUSED while others of its step (or other approvers) wait, else where it stopped
     * next. null for an approver who is not the requester: they see the request, not the requester's turn.
     */
    turn: TurnRecord | null;
    pausedWith: ElicitationRecord[] | null;
  },
  AnswerElicitationRefusal
>;

/**
 * The request, when this user may give this answer to it now (who may answer, by the request's policy); else the
 * refusal answerElicitation gives. The viewer's own request is read as the owner's; another user's only when the viewer
 * could answer some request of another user at all (they hold a role, or administer), and then only under a policy
 * that lets them in: any other reads as absent, exactly like an unknown id.
 */
export async function answerableBy(
  app: AppDeps,
  viewer: Viewer,
  elicitationId: string,
  action: ElicitationAction,
): Promise<Outcome<{ elicitation: ElicitationRecord }, AnswerElicitationRefusal>> {
  const own = await app.store.getElicitation(elicitationId, viewer.id);
  const existing =
    own ?? (viewer.roles.length > 0 || viewer.isAdmin ? await app.store.loadElicitation(elicitationId) : null);
  if (!existing) return NOT_FOUND;
  const standing = mayAnswer(existing, viewer, action, app.clock().toISOString());
  if (standing.kind === 'absent') return NOT_FOUND;
  if (standing.kind === 'refused') {
    return {
      ok: false,
      code: 'FORBIDDEN',
      field: 'action',
      reason: standing.reason,
      ...(standing.escalatesAt !== undefined && { escalatesAt: standing.escalatesAt }),
    };
  }
  return { ok: true, elicitation: existing };
}

export async function answerElicitation(
  app: AppDeps,
  viewer: Viewer,
  input: AnswerElicitationInput,
): Promise<AnswerElicitationOutcome> {
  const content = input.content ?? null;
  // Size first, before any lookup: the answer is the same for every id, and nothing large is parsed further.
  if (contentBytes(content) > app.limits.maxContentBytes) {
    return {
      ok: false,
      code: 'INVALID_INPUT',
      field: 'content',
      reason: 'TOO_LARGE',
      maxBytes: app.limits.maxContentBytes,
    };
  }
  // Edited arguments nested too deeply are refused as early, before anything recursive (comparing them) walks them.
  if (input.arguments != null && nestedDeeperThan(input.arguments, app.limits.maxToolArgumentsDepth)) {
    const problem = `arguments are nested more than ${app.limits.maxToolArgumentsDepth} levels deep.`;
    return { ok: false, code: 'INVALID_CONTENT', field: 'arguments', at: [], problem };
  }
  const found = await answerableBy(app, viewer, input.elicitationId, input.action);
  if (!found.ok) return found;
  const existing = found.elicitation;
  const problem = validateContent(existing.request.requestedSchema, input.action, content);
  if (problem)
    return { ok: false, code: 'INVALID_CONTENT', field: 'content', at: problem.path, problem: problem.message };
  const given: ElicitationAnswer = { action: input.action, content: content as JsonObject | null };
  if (input.arguments != null) given.arguments = input.arguments as JsonObject;
  if (input.remember != null) given.remember = { scope: input.remember.scope, ttlSeconds: input.remember.ttlSeconds };
  // Before anything else reads it: an "edit" that changes nothing is a plain ACCEPT, recorded and reported as one.
  const answer = effectiveAnswer(given, existing.toolCall.arguments);
  const refusal = await checkEditAndRemember(app, existing, answer);
  if (refusal) return refusal;
  // Step-up last, once everything else holds: verifying uses the assertion (its counter moves forward).
  let assertion: RecordedAssertion | undefined;
  if (answer.action === 'ACCEPT' && existing.status === 'PENDING' && stepUpRequired(app, existing)) {
    // A remembered approval would let later calls run without a passkey.
    if (answer.remember != null) {
      const toolName = existing.toolCall.name;
      return {
        ok: false,
        code: 'INVALID_INPUT',
        field: 'remember',
        reason: 'NOT_REMEMBERABLE',
        toolName,
        stepUp: true,
      };
    }
    const args = answer.arguments ?? existing.toolCall.arguments;
    const verified = await verifyStepUp(app, viewer, input.origin ?? null, existing, args, input.passkeyAssertion);
    if (!verified.ok) return verified;
    assertion = verified.assertion;
  }
  const requester = existing.ownerId === viewer.id;
  const result = await app.runner.resolveElicitation({
    elicitationId: input.elicitationId,
    // An approver reaches another user's request only now that it was authorized above.
    ownerId: requester ? viewer.id : null,
    answeredBy: viewer.id,
    answeredAs: answerIdentityOf(viewer),
    answer,
    ...(input.withdrawn !== undefined && answer.action === 'CANCEL' && { withdrawn: input.withdrawn }),
    ...(assertion && { assertion }),
  });
  if (result.ok) return requester ? result : { ...result, turn: null, pausedWith: null };
  return { ...result, field: 'elicitationId' };
}

const NOT_FOUND = { ok: false, code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' } as const;

/**
 * Edited arguments and remember, checked before anything is recorded: only with ACCEPT; edits only where the agent
 * allows them and only as the tool's inputSchema accepts; remember only for a tool that does not ask every time.
 */
async function checkEditAndRemember(
  app: AppDeps,
  elicitation: ElicitationRecord,
  answer: ElicitationAnswer,
): Promise<({ ok: false } & AnswerElicitationRefusal) | null> {
  const { arguments: edited, remember } = answer;
  // Answered already: the store decides (the same answer again is a duplicate, another is ALREADY_RESOLVED), whatever
  // changed in the agent or the tool since.
  if ((edited == null && remember == null) || elicitation.status !== 'PENDING') return null;
  if (answer.action !== 'ACCEPT') {
    return {
      ok: false,
      code: 'INVALID_INPUT',
      field: edited != null ? 'arguments' : 'remember',
      reason: 'ACCEPT_ONLY',
    };
  }
  const { toolId, name } = elicitation.toolCall;
  const agent = await app.store.getAgent(elicitation.agentId);
  if (edited != null) {
    const tool = agent && (await app.tools.toolOf(agent, toolId));
    if (agent && !editAllowed(agent, toolId)) {
      return { ok: false, code: 'FORBIDDEN', field: 'arguments', reason: 'EDIT_OFF', toolName: name };
    }
    if (!tool) return { ok: false, code: 'INVALID_INPUT', field: 'arguments', reason: 'TOOL_GONE', toolId };
    const problem = validateArguments(tool.inputSchema, edited);
    if (problem) {
      return { ok: false, code: 'INVALID_CONTENT', field: 'arguments', at: problem.path, problem: problem.message };
    }
  }
  if (remember != null) {
    const { ttlSeconds } = remember;
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_GRANT_TTL_SECONDS) {
      return {
        ok: false,
        code: 'INVALID_INPUT',
        field: 'remember',
        at: ['ttlSeconds'],
        reason: 'OUT_OF_RANGE',
        max: MAX_GRANT_TTL_SECONDS,
      };
    }
    if (!mayRemember(elicitation, agent)) {
      return { ok: false, code: 'INVALID_INPUT', field: 'remember', reason: 'NOT_REMEMBERABLE', toolName: name };
    }
  }
  return null;
}
