// updateAgentGating, called directly (no GraphQL): administrators only, every setting checked before any is stored,
// and a change applies to the next turn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAgent } from '../../src/app/agent-reads.js';
import { startTurn } from '../../src/app/start-turn.js';
import { updateAgentGating } from '../../src/app/update-agent-gating.js';
import { ADMIN, ALICE, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { AGENT_ID } from '../support/scenario.js';

let s: AppScenario;

beforeAll(async () => {
  s = await startApp({ tools: [{ name: 'rw' }], script: [callsWhatIsNamed()] });
});
afterAll(() => s?.close());

async function expectRefused(viewer: typeof ADMIN, input: Parameters<typeof updateAgentGating>[2], refusal: object) {
  const before = await s.snapshot();
  expect(await updateAgentGating(s.app, viewer, input)).toEqual({ ok: false, ...refusal });
  expect(await s.snapshot()).toEqual(before);
}

describe('updateAgentGating', () => {
  it('is for administrators only: anyone else is FORBIDDEN, whatever the agent, and nothing changes', async () => {
    for (const agentId of [AGENT_ID, 'nobody']) {
      await expectRefused(
        ALICE,
        { agentId, requireToolConfirmation: false },
        { code: 'FORBIDDEN', reason: 'ADMIN_ONLY' },
      );
    }
    expect((await getAgent(s.app, AGENT_ID))?.requireToolConfirmation).toBe(true);
  });

  it('refuses an unknown agent, a pause out of range, a tool the agent lacks and unusable rules', async () => {
    await expectRefused(ADMIN, { agentId: 'nobody' }, { code: 'NOT_FOUND', of: 'agent', field: 'agentId' });
    await expectRefused(
      ADMIN,
      { agentId: AGENT_ID, pauseTtlSeconds: 0 },
      { code: 'INVALID_INPUT', field: 'pauseTtlSeconds', reason: 'OUT_OF_RANGE', max: 30 * 24 * 3600 },
    );
    await expectRefused(
      ADMIN,
      // The first entry is fine: a later one's problem keeps it from being stored too.
      {
        agentId: AGENT_ID,
        toolConfirmation: [
          { toolId: 't:rw', mode: 'NEVER' },
          { toolId: 't:gone', mode: 'NEVER' },
        ],
      },
      { code: 'INVALID_INPUT', field: 'toolConfirmation', at: [1, 'toolId'], reason: 'UNKNOWN_TOOL', toolId: 't:gone' },
    );
    await expectRefused(
      ADMIN,
      { agentId: AGENT_ID, toolConfirmation: [{ toolId: 't:rw', rules: [{ match: {}, mode: 'DENY' }] }] },
      {
        code: 'INVALID_INPUT',
        field: 'toolConfirmation',
        at: [0, 'rules', 0, 'reason'],
        reason: 'INVALID_RULES',
        toolId: 't:rw',
        rule: 0,
        problem: expect.stringContaining('reason'),
      },
    );
  });

  it('sets what it names, keeps the rest, and the next turn is gated by it', async () => {
    const outcome = await updateAgentGating(s.app, ADMIN, {
      agentId: AGENT_ID,
      toolConfirmation: [{ toolId: 't:rw', mode: 'NEVER', allowEdit: false }],
    });
    expect(outcome).toMatchObject({
      ok: true,
      agent: { requireToolConfirmation: true, toolConfirmation: { 't:rw': 'NEVER' }, toolAllowEdit: { 't:rw': false } },
    });
    const turn = await startTurn(s.app, ALICE, {
      agentId: AGENT_ID,
      threadId: null,
      message: 't_rw',
      background: false,
    });
    expect(turn.ok && turn.turn.status).toBe('COMPLETED');
    expect(s.tools.count('rw')).toBe(1);
  });
});
