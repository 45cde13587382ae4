// The gating matrix through the GraphQL API: AgentTool.requiresConfirmation and whether a turn really pauses,
// for agent off/on × ALWAYS/NEVER/BY_ANNOTATION × readOnlyHint true/false/unannotated; and updateAgent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolConfirmationMode } from '../../src/domain/records.js';
import type { ScriptStep } from '../../src/models/scripted.js';
import { dataOf, TEST_BACKEND } from '../support/harness.js';
import { AGENT_ID, call, callStep, manualClock, startScenario, textStep, type Scenario } from '../support/scenario.js';

const TOOLS = [
  { name: 'ro', annotations: { readOnlyHint: true } },
  { name: 'rw', annotations: { readOnlyHint: false } },
  { name: 'bare' },
];
const HINTS: Record<string, string> = { ro: 'readOnlyHint true', rw: 'readOnlyHint false', bare: 'unannotated' };

/** The model calls the tool the user's message names, then answers. */
const callNamedTool: ScriptStep = (request) => {
  const last = request.messages.at(-1)!;
  return last.role === 'USER' ? callStep(call(last.text!, {}, `call_${request.messages.length}`)) : textStep('done');
};

const AGENT_FIELDS = `id requireToolConfirmation pauseTtlSeconds tools { toolId annotations { readOnlyHint } confirmation requiresConfirmation }`;
const UPDATE = `mutation Update($input: UpdateAgentInput!) {
  updateAgent(input: $input) { agent { ${AGENT_FIELDS} } userErrors { code message field } }
}`;
const AGENT = `query { agent(id: "${AGENT_ID}") { ${AGENT_FIELDS} } }`;

/** docs/design.md's table, written out independently of the code. */
function asks(agentOn: boolean, mode: ToolConfirmationMode, tool: string): boolean {
  if (!agentOn) return false;
  if (mode === 'ALWAYS') return true;
  if (mode === 'NEVER') return false;
  return tool !== 'ro';
}

const clock = manualClock();
let s: Scenario;
beforeAll(async () => {
  s = await startScenario({
    tools: TOOLS,
    script: [callNamedTool],
    agent: { requireToolConfirmation: false },
    clock: clock.now,
  });
});
afterAll(async () => {
  await s.close();
});

describe('defaults', () => {
  it('every tool is BY_ANNOTATION and, with the agent off, nothing asks', async () => {
    const { agent } = dataOf(await s.h.gql(AGENT));
    expect(agent.requireToolConfirmation).toBe(false);
    expect(agent.tools).toEqual([
      {
        toolId: 't:ro',
        annotations: { readOnlyHint: true },
        confirmation: 'BY_ANNOTATION',
        requiresConfirmation: false,
      },
      {
        toolId: 't:rw',
        annotations: { readOnlyHint: false },
        confirmation: 'BY_ANNOTATION',
        requiresConfirmation: false,
      },
      {
        toolId: 't:bare',
        annotations: { readOnlyHint: null },
        confirmation: 'BY_ANNOTATION',
        requiresConfirmation: false,
      },
    ]);
  });
});

describe('the matrix', () => {
  for (const agentOn of [false, true]) {
    for (const mode of ['ALWAYS', 'NEVER', 'BY_ANNOTATION'] as const) {
      for (const tool of ['ro', 'rw', 'bare']) {
        const expected = asks(agentOn, mode, tool);
        it(`agent ${agentOn ? 'on' : 'off'} × ${mode} × ${HINTS[tool]} → ${expected ? 'pauses' : 'runs'}`, async () => {
          const update = dataOf(
            await s.h.gql(UPDATE, {
              input: {
                agentId: AGENT_ID,
                requireToolConfirmation: agentOn,
                toolConfirmation: [{ toolId: `t:${tool}`, mode }],
              },
            }),
          ).updateAgent;
          expect(update.userErrors).toEqual([]);
          const shown = update.agent.tools.find((t: any) => t.toolId === `t:${tool}`);
          expect(shown).toMatchObject({ confirmation: mode, requiresConfirmation: expected });

          const before = s.tools.count(tool);
          const { turn, thread } = await s.start(tool);
          expect(turn.status).toBe(expected ? 'PAUSED' : 'COMPLETED');
          expect(turn.pendingElicitations).toHaveLength(expected ? 1 : 0);
          expect(s.tools.count(tool)).toBe(before + (expected ? 0 : 1));
          await s.expectConsistent(thread.id);
        });
      }
    }
  }

  it('an override of one tool leaves the others as they were', async () => {
    await s.h.gql(UPDATE, {
      input: {
        agentId: AGENT_ID,
        requireToolConfirmation: true,
        toolConfirmation: [
          { toolId: 't:ro', mode: 'ALWAYS' },
          { toolId: 't:rw', mode: 'NEVER' },
        ],
      },
    });
    const update = dataOf(
      await s.h.gql(UPDATE, { input: { agentId: AGENT_ID, toolConfirmation: [{ toolId: 't:bare', mode: 'NEVER' }] } }),
    ).updateAgent;
    expect(update.agent.tools.map((t: any) => [t.toolId, t.confirmation, t.requiresConfirmation])).toEqual([
      ['t:ro', 'ALWAYS', true],
      ['t:rw', 'NEVER', false],
      ['t:bare', 'NEVER', false],
    ]);
    expect(update.agent.requireToolConfirmation).toBe(true);
  });
});

describe('updateAgent', () => {
  const snapshot = async () => dataOf(await s.h.gql(AGENT)).agent;

  it('changes pauseTtlSeconds, and the next pause expires that long after it', async () => {
    const update = dataOf(
      await s.h.gql(UPDATE, {
        input: {
          agentId: AGENT_ID,
          requireToolConfirmation: true,
          pauseTtlSeconds: 120,
          toolConfirmation: [{ toolId: 't:rw', mode: 'BY_ANNOTATION' }],
        },
      }),
    ).updateAgent;
    expect(update.agent.pauseTtlSeconds).toBe(120);
    const { turn } = await s.start('rw');
    expect(turn.status).toBe('PAUSED');
    const expected = new Date(clock.now().getTime() + 120_000).toISOString();
    expect(turn.expiresAt).toBe(expected);
    expect(turn.pendingElicitations[0].expiresAt).toBe(expected);
  });

  it.each([
    ['an unknown agent', { agentId: 'nope', requireToolConfirmation: false }, 'NOT_FOUND', ['input', 'agentId']],
    [
      'pauseTtlSeconds 0',
      { agentId: AGENT_ID, requireToolConfirmation: false, pauseTtlSeconds: 0 },
      'INVALID_INPUT',
      ['input', 'pauseTtlSeconds'],
    ],
    [
      'a negative pauseTtlSeconds',
      { agentId: AGENT_ID, pauseTtlSeconds: -5 },
      'INVALID_INPUT',
      ['input', 'pauseTtlSeconds'],
    ],
    [
      'pauseTtlSeconds over 30 days',
      { agentId: AGENT_ID, pauseTtlSeconds: 30 * 24 * 3600 + 1 },
      'INVALID_INPUT',
      ['input', 'pauseTtlSeconds'],
    ],
    [
      'an unknown tool after a valid one',
      {
        agentId: AGENT_ID,
        requireToolConfirmation: false,
        toolConfirmation: [
          { toolId: 't:ro', mode: 'NEVER' },
          { toolId: 't:missing', mode: 'ALWAYS' },
        ],
      },
      'INVALID_INPUT',
      ['input', 'toolConfirmation', '1', 'toolId'],
    ],
  ])('%s: a userError with its code and field, and nothing changes', async (_label, input, code, field) => {
    const before = await snapshot();
    const update = dataOf(await s.h.gql(UPDATE, { input })).updateAgent;
    expect(update.agent).toBeNull();
    expect(update.userErrors).toHaveLength(1);
    expect(update.userErrors[0]).toMatchObject({ code, field });
    expect(update.userErrors[0].message.length).toBeGreaterThan(5);
    expect(await snapshot()).toEqual(before);
  });

  it('an unknown mode is a GraphQL validation error, and nothing changes', async () => {
    const before = await snapshot();
    const response = await s.h.gql(UPDATE, {
      input: {
        agentId: AGENT_ID,
        requireToolConfirmation: false,
        toolConfirmation: [{ toolId: 't:ro', mode: 'SOMETIMES' }],
      },
    });
    expect(response.errors?.[0]?.message).toMatch(/SOMETIMES/);
    expect(await snapshot()).toEqual(before);
  });
});

describe('a gating change and a turn started at the same moment', () => {
  it('a change committed before the turn applies to it, even when the turn was asked for with the agent as read before', async () => {
    const own = await startScenario({
      tools: TOOLS,
      script: [callNamedTool],
      agent: { requireToolConfirmation: false },
    });
    try {
      const { store, runner } = own.h.server.services;
      const before = (await store.getAgent(AGENT_ID))!;
      expect(before.requireToolConfirmation).toBe(false);
      // Issued first. On SQLite it commits ahead of the turn, in the same batch (the batcher keeps its queue's order):
      // by the turn's first step it is the agent's gating. PostgreSQL orders two concurrent transactions of its pool
      // by nothing (the turn's may read the agent before the change commits), so there the commit is awaited first.
      const update = store.updateAgentGating(AGENT_ID, { requireToolConfirmation: true }, new Date().toISOString());
      if (TEST_BACKEND === 'postgres') await update;
      const started = await runner.startTurn({
        agentId: before.id,
        threadId: null,
        ownerId: 'someone',
        message: 'rw',
        background: false,
      });
      await update;
      expect(started.ok && started.turn.status).toBe('PAUSED');
      expect(own.tools.count('rw')).toBe(0);
    } finally {
      await own.close();
    }
  });
});
