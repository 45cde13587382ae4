// Answer an elicitation: the viewer accepts, declines or cancels one of their confirmation requests, or, as one of its
// approvers (docs/approvers.md), another user's request under an approvers policy. Who may answer, and everything
// about the answer itself, is checked here, before anything is recorded; the store then decides against the stored
// state (answered before, expired, the quorum) and the loop resumes the turn when it was the step's last answer.
import { validateArguments } from '../agent/arguments.js';
import { contentBytes, validateContent } from '../agent/content.js';
import { editAllowed } from '../agent/gating.js';
import { effectiveAnswer } from '../domain/answer-rules.js';
import { nestedDeeperThan } from '../domain/json-depth.js';
import { MAX_GRANT_TTL_SECONDS } from '../domain/grants.js';
import type {
  Agent,
  ElicitationAction,
  ElicitationAnswer,
  ElicitationRecord,
  ElicitationStatus,
  JsonObject,
  RememberChoice,
  TurnRecord,
} from '../domain/records.js';
import type { AppDeps } from './deps.js';
import { type Outcome } from './outcome.js';
import type { Viewer } from './viewer.js';

export interface AnswerElicitationInput {
  elicitationId: string;
  action: ElicitationAction;
  /** With ACCEPT or DECLINE: an object matching the request's requestedSchema. */
  content?: unknown;
  /** With ACCEPT: the arguments to run instead of the model's (an edit). */
  arguments?: unknown;
  /** With ACCEPT: remember the approval for later calls of the tool. */
  remember?: RememberChoice | null;
}

export type AnswerElicitationRefusal =
  | { code: 'INVALID_INPUT'; field: 'content'; reason: 'TOO_LARGE'; maxBytes: number }
  | { code: 'NOT_FOUND'; field: 'elicitationId' }
  /** The content does not match the request, or the edited arguments the tool's inputSchema: `problem` says how. */
  | { code: 'INVALID_CONTENT'; field: 'content' | 'arguments'; at: string[]; problem: string }
  | { code: 'INVALID_INPUT'; field: 'arguments' | 'remember'; reason: 'ACCEPT_ONLY' }
  /** The agent's allowEdit is off for the tool. */
  | { code: 'FORBIDDEN'; field: 'arguments'; reason: 'EDIT_OFF'; toolName: string }
  /** The agent no longer has the tool whose call is edited. */
  | { code: 'INVALID_INPUT'; field: 'arguments'; reason: 'TOOL_GONE'; toolId: string }
  | { code: 'INVALID_INPUT'; field: 'remember'; at: ['ttlSeconds']; reason: 'OUT_OF_RANGE'; max: number }
  /** The call asks every time (ALWAYS, or a listener's reason of its own), or was asked before grants existed. */
  | { code: 'INVALID_INPUT'; field: 'remember'; reason: 'NOT_REMEMBERABLE'; toolName: string }
  /**
   * Already answered (`status` as it is now): by the viewer, whose first answer stands (still PENDING while the
   * request waits for other approvers), or decided.
   */
  | { code: 'ALREADY_RESOLVED'; field: 'elicitationId'; status: ElicitationStatus }
  | { code: 'EXPIRED'; field: 'elicitationId'; expiresAt: string }
  /** Under an approvers policy, the viewer may not give this answer: see ApproverRefusalReason. */
  | { code: 'FORBIDDEN'; field: 'action'; reason: ApproverRefusalReason; escalatesAt?: string };

/**
 * Why an answer under an approvers policy is refused to someone who may see the request:
 * FOUR_EYES: the requester, excluded from answering but CANCEL (requester EXCLUDED);
 * CANCEL_BY_REQUESTER: a CANCEL from an approver (only the requester or an administrator cancels);
 * NOT_YET_ESCALATED: a member of an escalation role before the escalation time (`escalatesAt`);
 * NOT_AN_APPROVER: an administrator who holds none of the policy's roles (they may CANCEL).
 */
export type ApproverRefusalReason = 'FOUR_EYES' | 'CANCEL_BY_REQUESTER' | 'NOT_YET_ESCALATED' | 'NOT_AN_APPROVER';

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
  // The viewer's own request, read as the owner's; another user's only when the viewer could answer some request of
  // another user at all (they hold a role, or administer), and then only under a policy that lets them in: any other
  // reads as absent, exactly like an unknown id.
  const own = await app.store.getElicitation(input.elicitationId, viewer.id);
  const existing =
    own ?? (viewer.roles.length > 0 || viewer.isAdmin ? await app.store.loadElicitation(input.elicitationId) : null);
  if (!existing) return { ok: false, code: 'NOT_FOUND', field: 'elicitationId' };
  const standing = mayAnswer(existing, viewer, input.action, app.clock().toISOString());
  if (standing.kind === 'absent') return { ok: false, code: 'NOT_FOUND', field: 'elicitationId' };
  if (standing.kind === 'refused') {
    return {
      ok: false,
      code: 'FORBIDDEN',
      field: 'action',
      reason: standing.reason,
      ...(standing.escalatesAt !== undefined && { escalatesAt: standing.escalatesAt }),
    };
  }
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
  const requester = existing.ownerId === viewer.id;
  const result = await app.runner.resolveElicitation({
    elicitationId: input.elicitationId,
    // An approver reaches another user's request only now that it was authorized above.
    ownerId: requester ? viewer.id : null,
    answeredBy: viewer.id,
    answer,
  });
  if (result.ok) return requester ? result : { ...result, turn: null, pausedWith: null };
  switch (result.code) {
    case 'NOT_FOUND':
      return { ok: false, code: 'NOT_FOUND', field: 'elicitationId' };
    case 'ALREADY_RESOLVED':
      return { ok: false, code: 'ALREADY_RESOLVED', field: 'elicitationId', status: result.elicitation.status };
    case 'EXPIRED':
      return { ok: false, code: 'EXPIRED', field: 'elicitationId', expiresAt: result.elicitation.expiresAt };
  }
}

/** Whether the viewer may give this answer to this request, as far as who they are goes (docs/approvers.md). */
export type Standing =
  | { kind: 'allowed' }
  /** Not theirs to see: reads as not found. */
  | { kind: 'absent' }
  | { kind: 'refused'; reason: ApproverRefusalReason; escalatesAt?: string };

/**
 * Who may answer a request: its requester (under EXCLUDED only with CANCEL); a member of one of its policy's roles,
 * or of an escalation role once the escalation time has come (not with CANCEL); an administrator with CANCEL. Anyone
 * else does not see the request at all. A request without a policy is its requester's alone.
 */
export function mayAnswer(
  elicitation: Pick<ElicitationRecord, 'ownerId' | 'approval'>,
  viewer: Viewer,
  action: ElicitationAction,
  now: string,
): Standing {
  const { approval } = elicitation;
  if (elicitation.ownerId === viewer.id) {
    if (approval?.requester === 'EXCLUDED' && action !== 'CANCEL') return { kind: 'refused', reason: 'FOUR_EYES' };
    return { kind: 'allowed' };
  }
  if (!approval) return { kind: 'absent' };
  const holds = (roles: readonly string[]) => roles.some((role) => viewer.roles.includes(role));
  const { escalation } = approval;
  const member = holds(approval.roles) || (escalation !== null && holds(escalation.roles) && escalation.at <= now);
  const escalatesLater = escalation !== null && !member && holds(escalation.roles);
  if (action === 'CANCEL') {
    if (viewer.isAdmin) return { kind: 'allowed' };
    return member || escalatesLater ? { kind: 'refused', reason: 'CANCEL_BY_REQUESTER' } : { kind: 'absent' };
  }
  if (member) return { kind: 'allowed' };
  if (escalatesLater) return { kind: 'refused', reason: 'NOT_YET_ESCALATED', escalatesAt: escalation.at };
  if (viewer.isAdmin) return { kind: 'refused', reason: 'NOT_AN_APPROVER' };
  return { kind: 'absent' };
}

/** Whether an ACCEPT of this request may carry edited arguments: the agent's allowEdit for the tool, as of now. */
export function mayEdit(elicitation: ElicitationRecord, agent: Agent | null): boolean {
  return agent !== null && editAllowed(agent, elicitation.toolCall.toolId);
}

/**
 * Whether an ACCEPT of this request may remember its approval: it could when it was asked (the call's `grantable`)
 * and the tool is not set to ALWAYS now (an admin may have set it since; such a tool never takes a grant).
 */
export function mayRemember(elicitation: ElicitationRecord, agent: Agent | null): boolean {
  const { definitionHash, grantable, toolId } = elicitation.toolCall;
  return Boolean(definitionHash && grantable) && agent?.toolConfirmation[toolId] !== 'ALWAYS';
}

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
