// Which approvers policy a call's confirmation gets (docs/approvers.md): the matching argument rule's, else the tool's,
// else the agent's; and the pause stores it with its escalation at an absolute time.
import { describe, expect, it } from 'vitest';
import { approversFor } from '../../src/domain/gate/gating.js';
import { approvalAt, longestEscalation } from '../../src/domain/approvers.js';
import type { ApproversPolicy } from '../../src/domain/records.js';
import { agent } from '../support/definitions.js';

const policy = (role: string, more: Partial<ApproversPolicy> = {}): ApproversPolicy => ({
  roles: [role],
  required: 1,
  requester: 'ALSO',
  escalate: null,
  ...more,
});

describe('approversFor: rule > tool > agent', () => {
  const a = agent({
    approvers: policy('agent-wide'),
    toolApprovers: { 's:delete': policy('deleters'), 's:read': 'REQUESTER' },
    toolRules: {
      's:delete': [
        {
          match: { properties: { path: { pattern: '^/etc/' } }, required: ['path'] },
          mode: 'ALWAYS',
          approvers: policy('security'),
        },
        { match: { required: ['force'] }, mode: 'ALWAYS' },
      ],
    },
  });

  it("takes the first matching rule's policy", () => {
    expect(approversFor(a, 's:delete', { path: '/etc/passwd' })).toEqual(policy('security'));
  });

  it("takes the tool's when the first matching rule names none, or no rule matches", () => {
    expect(approversFor(a, 's:delete', { path: '/tmp/x', force: true })).toEqual(policy('deleters'));
    expect(approversFor(a, 's:delete', { path: '/tmp/x' })).toEqual(policy('deleters'));
  });

  it("takes the agent's for a tool without one; a tool's REQUESTER wins over the agent's policy", () => {
    expect(approversFor(a, 's:write', {})).toEqual(policy('agent-wide'));
    expect(approversFor(a, 's:read', {})).toBe('REQUESTER');
  });

  it('is REQUESTER for an agent without approvers', () => {
    expect(approversFor(agent(), 's:delete', { path: '/etc/passwd' })).toBe('REQUESTER');
  });
});

describe('approvalAt: the policy as a request keeps it', () => {
  it('is null for the requester alone', () => {
    expect(approvalAt('REQUESTER', '2026-01-01T00:00:00.000Z')).toBeNull();
  });

  it('keeps roles, quorum and requester part, and the escalation at pause time + afterSeconds', () => {
    const approval = approvalAt(
      policy('reviewer', { required: 2, requester: 'EXCLUDED', escalate: { afterSeconds: 900, roles: ['oncall'] } }),
      '2026-01-01T00:00:00.000Z',
    );
    expect(approval).toEqual({
      roles: ['reviewer'],
      required: 2,
      requester: 'EXCLUDED',
      escalation: { roles: ['oncall'], at: '2026-01-01T00:15:00.000Z' },
    });
  });

  it("longestEscalation: the latest escalation among an agent's policies, null without one", () => {
    expect(longestEscalation(agent())).toBeNull();
    const escalating = agent({
      approvers: policy('a', { escalate: { afterSeconds: 60, roles: ['b'] } }),
      toolRules: {
        's:x': [
          { match: {}, mode: 'ALWAYS', approvers: policy('c', { escalate: { afterSeconds: 300, roles: ['d'] } }) },
        ],
      },
    });
    expect(longestEscalation(escalating)).toBe(300);
  });
});
