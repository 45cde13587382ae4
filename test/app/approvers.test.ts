// Approvers through the use cases, no API in front (docs/approvers.md): the gate decides a call's policy when it
// pauses and keeps it with the request, and an agent's pause cannot be shortened below its escalation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTurn } from '../../src/app/start-turn.js';
import { updateAgentGating } from '../../src/app/update-agent-gating.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { ElicitationRecord } from '../../src/domain/records.js';
import { ADMIN, ALICE, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { AGENT_ID } from '../support/scenario.js';

let s: AppScenario;

beforeAll(async () => {
  s = await startApp({
    tools: [{ name: 'wipe' }, { name: 'write' }, { name: 'plain' }],
    script: [callsWhatIsNamed({ write: { path: '/etc/hosts' } })],
    agent: {
      approvers: {
        roles: ['reviewer'],
        required: 2,
        requester: 'EXCLUDED',
        escalate: { afterSeconds: 600, roles: ['oncall'] },
      },
      toolConfirmation: {
        't:wipe': { approvers: { roles: ['admin'], required: 1, requester: 'ALSO' } },
        't:write': {
          rules: [
            {
              match: { required: ['path'] },
              mode: 'ALWAYS',
              approvers: { roles: ['security'], required: 1, requester: 'ALSO' },
            },
          ],
        },
      },
    },
  });
});
afterAll(() => s?.close());

async function paused(viewer: Viewer, message: string): Promise<ElicitationRecord[]> {
  const outcome = await startTurn(s.app, viewer, { agentId: AGENT_ID, threadId: null, message, background: false });
  if (!outcome.ok || !outcome.pausedWith) throw new Error(`did not pause: ${JSON.stringify(outcome)}`);
  return outcome.pausedWith;
}

describe('the policy of a paused call', () => {
  it("is decided at the pause and kept with the request: the rule's, the tool's, the agent's", async () => {
    const [write, wipe, plain] = await paused(ALICE, 't_write t_wipe t_plain');
    expect(write!.approval).toEqual({ roles: ['security'], required: 1, requester: 'ALSO', escalation: null });
    expect(wipe!.approval).toEqual({ roles: ['admin'], required: 1, requester: 'ALSO', escalation: null });
    const escalatesAt = new Date(Date.parse(plain!.createdAt) + 600_000).toISOString();
    expect(plain!.approval).toMatchObject({ roles: ['reviewer'], required: 2, requester: 'EXCLUDED' });
    // Decided a moment before the pause's commit: at most its createdAt + afterSeconds.
    expect(plain!.approval!.escalation!.roles).toEqual(['oncall']);
    expect(plain!.approval!.escalation!.at <= escalatesAt).toBe(true);
    expect(Date.parse(escalatesAt) - Date.parse(plain!.approval!.escalation!.at)).toBeLessThan(5000);
  });
});

describe('updateAgentGating and escalation', () => {
  it('refuses a pause that would expire before an escalation, and stores nothing', async () => {
    const before = await s.snapshot();
    expect(await updateAgentGating(s.app, ADMIN, { agentId: AGENT_ID, pauseTtlSeconds: 600 })).toEqual({
      ok: false,
      code: 'INVALID_INPUT',
      field: 'pauseTtlSeconds',
      reason: 'BELOW_ESCALATION',
      escalateAfterSeconds: 600,
    });
    expect(await s.snapshot()).toEqual(before);
    const longer = await updateAgentGating(s.app, ADMIN, { agentId: AGENT_ID, pauseTtlSeconds: 601 });
    expect(longer.ok && longer.agent?.pauseTtlSeconds).toBe(601);
  });
});
