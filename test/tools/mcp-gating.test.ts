// How MCP tools are gated by the annotations their server declares: the agent toggle × the per-tool override ×
// readOnlyHint (true / false / absent), over GraphQL, with the tools of a real MCP server process.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest, ModelResponse } from '../../src/models/model.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url));

/** "call <tool> <json>" calls that tool; after its result, answers with the result. */
function callByMessage(request: ModelRequest): ModelResponse {
  const last = request.messages.at(-1)!;
  if (last.role === 'TOOL') return { text: `result: ${last.text}`, toolCalls: [] };
  const [, name, args] = /^call (\S+) (.*)$/.exec(last.text ?? '')!;
  return {
    text: null,
    toolCalls: [{ id: `call_${request.messages.length}`, name: name!, arguments: JSON.parse(args!) }],
  };
}

const UPDATE = `mutation Update($input: UpdateAgentInput!) {
  updateAgent(input: $input) { agent { requireToolConfirmation tools { toolId label confirmation requiresConfirmation annotations { title readOnlyHint destructiveHint idempotentHint openWorldHint } } } userErrors { code message } }
}`;

describe('gating of MCP tools by their annotations', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      config: {
        models: { m: { provider: 'scripted' } },
        toolSources: { notes: { type: 'mcp', command: process.execPath, args: [FIXTURE] } },
        agents: [
          {
            id: 'gated',
            name: 'Gated',
            model: 'm',
            systemPrompt: '',
            tools: ['notes:read_note', 'notes:delete_note', 'notes:write_note', 'notes:echo'],
            requireToolConfirmation: false,
            toolConfirmation: {},
            pauseTtlSeconds: 600,
            maxIterations: 5,
          },
        ],
        plugins: [],
      },
      models: { m: new ScriptedModel([callByMessage]) },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const update = async (input: Record<string, unknown>) => {
    const payload = dataOf(await h.gql(UPDATE, { input: { agentId: 'gated', ...input } })).updateAgent;
    expect(payload.userErrors).toEqual([]);
    return payload.agent;
  };
  /** Sends one call and reports whether the turn paused for it (answering CANCEL) or ran it. */
  const asks = async (tool: string, args: Record<string, unknown>): Promise<boolean> => {
    const { turn } = dataOf(
      await h.gql(START_TURN, { input: { agentId: 'gated', message: `call ${tool} ${JSON.stringify(args)}` } }),
    ).startTurn;
    if (turn.status === 'PAUSED') {
      await h.gql(RESOLVE, { input: { elicitationId: turn.pendingElicitations[0].id, action: 'CANCEL' } });
      return true;
    }
    expect(turn.status).toBe('COMPLETED');
    expect(turn.text).toMatch(/^result: /);
    return false;
  };

  const calls = {
    read_note: { id: 'a' }, // readOnlyHint: true
    delete_note: { id: 'zzz' }, // readOnlyHint: false, destructiveHint: true
    write_note: { id: 'w', text: 'x' }, // destructiveHint: false only: readOnlyHint absent
    echo: { text: 'hi' }, // no annotations at all
  };

  it('shows the annotations exactly as the server declares them (absent hints are null)', async () => {
    const agent = await update({});
    const byId = Object.fromEntries(agent.tools.map((t: any) => [t.toolId, t]));
    expect(byId['notes:read_note'].annotations).toEqual({
      title: 'Ignored because title is set',
      readOnlyHint: true,
      destructiveHint: null,
      idempotentHint: null,
      openWorldHint: null,
    });
    expect(byId['notes:read_note'].label).toBe('Read note');
    expect(byId['notes:delete_note'].annotations).toEqual({
      title: 'Delete a note',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: null,
      openWorldHint: null,
    });
    expect(byId['notes:write_note'].annotations).toEqual({
      title: null,
      readOnlyHint: null,
      destructiveHint: false,
      idempotentHint: null,
      openWorldHint: null,
    });
    expect(byId['notes:echo'].annotations).toEqual({
      title: null,
      readOnlyHint: null,
      destructiveHint: null,
      idempotentHint: null,
      openWorldHint: null,
    });
  });

  it('agent toggle off: no tool asks, whatever its annotations', async () => {
    const agent = await update({ requireToolConfirmation: false });
    expect(agent.tools.map((t: any) => t.requiresConfirmation)).toEqual([false, false, false, false]);
    for (const [tool, args] of Object.entries(calls)) expect(await asks(tool, args), tool).toBe(false);
  });

  it('agent toggle on, BY_ANNOTATION: only readOnlyHint: true runs unasked; false, absent and unannotated ask', async () => {
    const agent = await update({ requireToolConfirmation: true });
    expect(Object.fromEntries(agent.tools.map((t: any) => [t.toolId, t.requiresConfirmation]))).toEqual({
      'notes:read_note': false,
      'notes:delete_note': true,
      'notes:write_note': true,
      'notes:echo': true,
    });
    expect(await asks('read_note', calls.read_note)).toBe(false);
    expect(await asks('delete_note', calls.delete_note)).toBe(true);
    expect(await asks('write_note', calls.write_note)).toBe(true);
    expect(await asks('echo', calls.echo)).toBe(true);
  });

  it('agent toggle on, overrides: ALWAYS asks even for read-only, NEVER runs even a destructive tool', async () => {
    const agent = await update({
      requireToolConfirmation: true,
      toolConfirmation: [
        { toolId: 'notes:read_note', mode: 'ALWAYS' },
        { toolId: 'notes:delete_note', mode: 'NEVER' },
        { toolId: 'notes:echo', mode: 'NEVER' },
      ],
    });
    expect(
      Object.fromEntries(agent.tools.map((t: any) => [t.toolId, [t.confirmation, t.requiresConfirmation]])),
    ).toEqual({
      'notes:read_note': ['ALWAYS', true],
      'notes:delete_note': ['NEVER', false],
      'notes:write_note': ['BY_ANNOTATION', true],
      'notes:echo': ['NEVER', false],
    });
    expect(await asks('read_note', calls.read_note)).toBe(true);
    expect(await asks('delete_note', calls.delete_note)).toBe(false);
    expect(await asks('write_note', calls.write_note)).toBe(true);
    expect(await asks('echo', calls.echo)).toBe(false);
  });

  it('agent toggle off again: the overrides no longer matter', async () => {
    await update({ requireToolConfirmation: false });
    expect(await asks('read_note', calls.read_note)).toBe(false);
    expect(await asks('write_note', calls.write_note)).toBe(false);
  });
});
