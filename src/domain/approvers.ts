// Approvers (docs/approvers.md): who may answer a confirmation besides its requester, and when their answers decide
// it. Pure functions: the gate stores a request's policy with it at the pause (approvalAt), the store tallies the
// answers in the answer's transaction (tallyAnswers, in the quorum module).
import { canonicalJson } from './canonical-json.js';
import type { Agent, Approvers, ApproversPolicy, ElicitationApproval } from './records.js';

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
