// Approvers (docs/approvers.md): who may answer a confirmation besides its requester, and when their answers decide
// it. Pure functions: the gate stores a request's policy with it at the pause (approvalAt), the use cases ask who may
// answer, edit and remember (mayAnswer, mayEdit, mayRemember), the store tallies the answers in the answer's
// transaction (tallyAnswers, in the quorum module).
import { canonicalJson } from './canonical-json.js';
import { editAllowed } from './gate/gating.js';
import type {
  Agent,
  Approvers,
  ApproversPolicy,
  ElicitationAction,
  ElicitationApproval,
  ElicitationRecord,
} from './records.js';

/** The policy as stored with a request paused at `now` (escalation at an absolute time); null for the requester alone. */
export function approvalAt(approvers: Approvers, now: string): ElicitationApproval | null {
  if (approvers === 'REQUESTER') return null;
  const { roles, required, requester, escalate } = approvers;
  return {
    roles: [...roles],
    required,
    requester,
    escalation: escalate
      ? {
          roles: [...escalate.roles],
          at: new Date(Date.parse(now) + escalate.afterSeconds * 1000).toISOString(),
        }
      : null,
  };
}

/** Every policy an agent names: its own, its tools', its argument rules'. */
export function policiesOf(agent: Pick<Agent, 'approvers' | 'toolApprovers' | 'toolRules'>): ApproversPolicy[] {
  const all: Approvers[] = [
    agent.approvers,
    ...Object.values(agent.toolApprovers),
    ...Object.values(agent.toolRules).flatMap((rules) => rules.map((rule) => rule.approvers ?? 'REQUESTER')),
  ];
  return all.filter((approvers): approvers is ApproversPolicy => approvers !== 'REQUESTER');
}

/** The longest escalate.afterSeconds among an agent's policies (a pause must last longer); null: none escalates. */
export function longestEscalation(agent: Pick<Agent, 'approvers' | 'toolApprovers' | 'toolRules'>): number | null {
  const after = policiesOf(agent).flatMap((policy) => (policy.escalate ? [policy.escalate.afterSeconds] : []));
  return after.length ? Math.max(...after) : null;
}

/**
 * What a remembered approval is bound to of a request's policy: who answers and how many, not when it escalates (each
 * request has its own time). null for the requester alone.
 */
export function approversKey(approval: ElicitationApproval | null): string | null {
  if (!approval) return null;
  return canonicalJson({
    roles: [...approval.roles].sort(),
    required: approval.required,
    requester: approval.requester,
    escalation: approval.escalation ? [...approval.escalation.roles].sort() : null,
  });
}

/**
 * Who may answer a request under `approval`, by role, and from when: its roles from its creation, its escalation roles
 * from the escalation time (a role in both, from its creation). What the list of requests to answer reads by role.
 */
export function approverRoles(approval: ElicitationApproval, createdAt: string): { role: string; from: string }[] {
  const from = new Map<string, string>();
  for (const role of approval.escalation?.roles ?? []) from.set(role, approval.escalation!.at);
  for (const role of approval.roles) from.set(role, createdAt);
  return [...from].map(([role, at]) => ({ role, from: at }));
}

/**
 * Why an answer under an approvers policy is refused to someone who may see the request:
 * FOUR_EYES: the requester, excluded from answering but CANCEL (requester EXCLUDED);
 * CANCEL_BY_REQUESTER: a CANCEL from an approver (only the requester or an administrator cancels);
 * NOT_YET_ESCALATED: a member of an escalation role before the escalation time (`escalatesAt`);
 * NOT_AN_APPROVER: an administrator who holds none of the policy's roles (they may CANCEL).
 */
export type ApproverRefusalReason = 'FOUR_EYES' | 'CANCEL_BY_REQUESTER' | 'NOT_YET_ESCALATED' | 'NOT_AN_APPROVER';

/** Who asks to answer a request: a user, whether they administer, the roles of the token they came with. */
export interface Answerer {
  id: string;
  isAdmin: boolean;
  roles: readonly string[];
}

/** Whether the answerer may give this answer to this request, as far as who they are goes (docs/approvers.md). */
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
  answerer: Answerer,
  action: ElicitationAction,
  now: string,
): Standing {
  const { approval } = elicitation;
  if (elicitation.ownerId === answerer.id) {
    if (approval?.requester === 'EXCLUDED' && action !== 'CANCEL') return { kind: 'refused', reason: 'FOUR_EYES' };
    return { kind: 'allowed' };
  }
  if (!approval) return { kind: 'absent' };
  const holds = (roles: readonly string[]) => roles.some((role) => answerer.roles.includes(role));
  const { escalation } = approval;
  const member = holds(approval.roles) || (escalation !== null && holds(escalation.roles) && escalation.at <= now);
  const escalatesLater = escalation !== null && !member && holds(escalation.roles);
  if (action === 'CANCEL') {
    if (answerer.isAdmin) return { kind: 'allowed' };
    return member || escalatesLater ? { kind: 'refused', reason: 'CANCEL_BY_REQUESTER' } : { kind: 'absent' };
  }
  if (member) return { kind: 'allowed' };
  if (escalatesLater) return { kind: 'refused', reason: 'NOT_YET_ESCALATED', escalatesAt: escalation.at };
  if (answerer.isAdmin) return { kind: 'refused', reason: 'NOT_AN_APPROVER' };
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

/** Whether an approver's answer counts towards the quorum, as far as who gave it goes: the requester's only under ALSO. */
export function answerCounts(
  approval: Pick<ElicitationApproval, 'requester'>,
  approverId: string,
  requesterId: string,
): boolean {
  return approval.requester === 'ALSO' || approverId !== requesterId;
}
