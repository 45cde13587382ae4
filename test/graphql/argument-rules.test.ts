// Argument rules and allowEdit over the real HTTP API: a tool with a `path` argument runs unasked under /tmp/,
// pauses elsewhere, and a DENY rule vetoes with its reason (the tool never runs); updateAgent changes rules and
// allowEdit and the next turn follows them; a bad rule is a userError and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptStep } from '../../src/models/scripted.js';
import { dataOf, startHarness } from '../support/harness.js';
import {
  AGENT_ID,
  call,
  callStep,
  MODEL_ID,
  startScenario,
  testConfig,
  textStep,
  toolTexts,
  type Scenario,
} from '../support/scenario.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { CountingToolSource } from '../support/tools.js';

const TOOLS = [{ name: 'write_file' }, { name: 'read_file', annotations: { readOnlyHint: true } }];

const TMP_ONLY = {
  properties: { path: { type: 'string', pattern: '^/tmp/', not: { pattern: '\\.\\.' } } },
  required: ['path'],
};
const SECRETS = { properties: { path: { pattern: '^/var/secrets/' } }, required: ['path'] };

const CONFIGURED = {
  requireToolConfirmation: true,
  toolConfirmation: {
    't:write_file': {
      rules: [
        { match: SECRETS, mode: 'DENY' as const, reason: 'secrets are off limits' },
        { match: TMP_ONLY, mode: 'NEVER' as const },
      ],
    },
  },
};

/** The model writes the file the user's message names, then answers. */
const writeNamedPath: ScriptStep = (request) => {
  const last = request.messages.at(-1)!;
  return last.role === 'USER'
    ? callStep(call('write_file', { path: last.text! }, `call_${request.messages.length}`))
    : textStep('done');
};

const TOOL_FIELDS = `toolId confirmation requiresConfirmation allowEdit allowEditOverride rules { match mode reason }`;
const AGENT_FIELDS = `id requireToolConfirmation allowEdit tools { ${TOOL_FIELDS} }`;
const AGENT = `query { agent(id: "${AGENT_ID}") { ${AGENT_FIELDS} } }`;
const UPDATE = `mutation Update($input: UpdateAgentInput!) {
  updateAgent(input: $input) { agent { ${AGENT_FIELDS} } userErrors { code message field } }
}`;
const GATE = `query Gate($args: JSON!) {
  agent(id: "${AGENT_ID}") { tools { toolId gate(arguments: $args) { action ruleIndex reason grantable } } }
}`;

let s: Scenario;
beforeAll(async () => {
  s = await startScenario({ tools: TOOLS, script: [writeNamedPath], agent: CONFIGURED });
});
afterAll(async () => {
  await s.close();
});

const writeTool = async () => dataOf(await s.h.gql(AGENT)).agent.tools.find((t: any) => t.toolId === 't:write_file');
const gate = async (args: unknown) =>
  dataOf(await s.h.gql(GATE, { args })).agent.tools.find((t: any) => t.toolId === 't:write_file').gate;
const update = async (input: Record<string, unknown>) =>
  dataOf(await s.h.gql(UPDATE, { input: { agentId: AGENT_ID, ...input } })).updateAgent;

/** Starts a turn writing `path`; returns the turn and how often write_file ran during it. */
async function write(path: string) {
  const before = s.tools.count('write_file');
  const { turn, thread } = await s.start(path);
  await s.expectConsistent(thread.id);
  return { turn, ran: s.tools.count('write_file') - before };
}

describe('rules from the config', () => {
  it('the API shows them, in order, with the effective allowEdit', async () => {
    expect(await writeTool()).toEqual({
      toolId: 't:write_file',
      confirmation: 'BY_ANNOTATION',
      requiresConfirmation: true,
      allowEdit: true,
      allowEditOverride: null,
      rules: [
        { match: SECRETS, mode: 'DENY', reason: 'secrets are off limits' },
        { match: TMP_ONLY, mode: 'NEVER', reason: null },
      ],
    });
  });

  it('a path under /tmp/ runs without asking', async () => {
    const { turn, ran } = await write('/tmp/notes.txt');
    expect(turn.status).toBe('COMPLETED');
    expect(turn.pendingElicitations).toEqual([]);
    expect(ran).toBe(1);
    expect(s.tools.runs.get('write_file')!.at(-1)).toEqual({ path: '/tmp/notes.txt' });
  });

  it('a path elsewhere pauses and asks (no rule matches: the unannotated tool asks), and runs once accepted', async () => {
    const { turn, ran } = await write('/etc/hosts');
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations).toHaveLength(1);
    expect(turn.pendingElicitations[0].toolCall.arguments).toEqual({ path: '/etc/hosts' });
    expect(ran).toBe(0);
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('write_file')!.at(-1)).toEqual({ path: '/etc/hosts' });
  });

  it('"/tmp/../etc/passwd" is not under /tmp/: it asks', async () => {
    const { turn, ran } = await write('/tmp/../etc/passwd');
    expect(turn.status).toBe('PAUSED');
    expect(ran).toBe(0);
  });

  it('a DENY rule vetoes: the tool never runs and the model reads the reason', async () => {
    const { turn, ran } = await write('/var/secrets/key.pem');
    expect(ran).toBe(0);
    expect(turn.status).toBe('COMPLETED');
    expect(turn.pendingElicitations).toEqual([]);
    expect(toolTexts(turn.messages)).toEqual(['Execution of write_file was denied: secrets are off limits']);
    expect(s.model.requests.at(-1)!.messages.at(-1)).toMatchObject({
      role: 'TOOL',
      text: 'Execution of write_file was denied: secrets are off limits',
    });
  });

  it('gate(arguments) tells what a call would get, and which rule decided', async () => {
    expect(await gate({ path: '/tmp/a' })).toEqual({ action: 'RUN', ruleIndex: 1, reason: null, grantable: false });
    expect(await gate({ path: '/var/secrets/x' })).toEqual({
      action: 'DENY',
      ruleIndex: 0,
      reason: 'secrets are off limits',
      grantable: false,
    });
    expect(await gate({ path: '/etc/hosts' })).toEqual({
      action: 'ASK',
      ruleIndex: null,
      reason: null,
      grantable: true,
    });
  });

  it('gate(arguments) that are not an object is a GraphQL error naming the problem', async () => {
    const response = await s.h.gql(GATE, { args: [1, 2] });
    expect(response.errors?.[0]?.message).toBe('arguments must be a JSON object, as a tool call has.');
  });
});

describe('updateAgent', () => {
  it('replaces the rules; the next turn follows them', async () => {
    const result = await update({
      toolConfirmation: [{ toolId: 't:write_file', rules: [{ match: {}, mode: 'DENY', reason: 'writing is paused' }] }],
    });
    expect(result.userErrors).toEqual([]);
    const shown = result.agent.tools.find((t: any) => t.toolId === 't:write_file');
    expect(shown.rules).toEqual([{ match: {}, mode: 'DENY', reason: 'writing is paused' }]);
    expect(shown.confirmation).toBe('BY_ANNOTATION');

    const { turn, ran } = await write('/tmp/notes.txt');
    expect(ran).toBe(0);
    expect(toolTexts(turn.messages)).toEqual(['Execution of write_file was denied: writing is paused']);
  });

  it('an ALWAYS rule asks under mode NEVER, and the mode stays when only rules are given', async () => {
    await update({ toolConfirmation: [{ toolId: 't:write_file', mode: 'NEVER' }] });
    const result = await update({
      toolConfirmation: [
        { toolId: 't:write_file', rules: [{ match: TMP_ONLY, mode: 'ALWAYS', reason: 'review /tmp' }] },
      ],
    });
    expect(result.agent.tools.find((t: any) => t.toolId === 't:write_file')).toMatchObject({
      confirmation: 'NEVER',
      rules: [{ match: TMP_ONLY, mode: 'ALWAYS', reason: 'review /tmp' }],
    });
    expect((await write('/tmp/a')).turn.status).toBe('PAUSED');
    expect(await gate({ path: '/tmp/a' })).toMatchObject({ action: 'ASK', ruleIndex: 0, grantable: false });
    const elsewhere = await write('/home/a');
    expect(elsewhere.turn.status).toBe('COMPLETED');
    expect(elsewhere.ran).toBe(1);
  });

  it('[] removes the rules: the mode and annotations decide again', async () => {
    const result = await update({ toolConfirmation: [{ toolId: 't:write_file', mode: 'BY_ANNOTATION', rules: [] }] });
    expect(result.agent.tools.find((t: any) => t.toolId === 't:write_file').rules).toEqual([]);
    expect((await write('/tmp/a')).turn.status).toBe('PAUSED');
  });

  it('a DENY rule applies with the master toggle off, when nothing else asks', async () => {
    await update({
      requireToolConfirmation: false,
      toolConfirmation: [{ toolId: 't:write_file', rules: [{ match: SECRETS, mode: 'DENY', reason: 'secrets' }] }],
    });
    const denied = await write('/var/secrets/a');
    expect(denied.ran).toBe(0);
    expect(toolTexts(denied.turn.messages)).toEqual(['Execution of write_file was denied: secrets']);
    const other = await write('/etc/hosts');
    expect(other.turn.status).toBe('COMPLETED');
    expect(other.ran).toBe(1);
    await update({ requireToolConfirmation: true });
  });

  it('sets allowEdit for the agent and per tool; null gives a tool the agent setting back', async () => {
    let result = await update({
      allowEdit: false,
      toolConfirmation: [{ toolId: 't:read_file', allowEdit: true }],
    });
    expect(result.userErrors).toEqual([]);
    expect(result.agent.allowEdit).toBe(false);
    const byTool = (agent: any) =>
      Object.fromEntries(agent.tools.map((t: any) => [t.toolId, [t.allowEdit, t.allowEditOverride]]));
    expect(byTool(result.agent)).toEqual({ 't:write_file': [false, null], 't:read_file': [true, true] });

    result = await update({ toolConfirmation: [{ toolId: 't:read_file', allowEdit: null }] });
    expect(byTool(result.agent)).toEqual({ 't:write_file': [false, null], 't:read_file': [false, null] });
    // Absent allowEdit keeps the tool's setting; a mode change alone leaves it.
    await update({ toolConfirmation: [{ toolId: 't:read_file', allowEdit: false }] });
    result = await update({ allowEdit: true, toolConfirmation: [{ toolId: 't:read_file', mode: 'NEVER' }] });
    expect(byTool(result.agent)).toEqual({ 't:write_file': [true, null], 't:read_file': [false, false] });
  });

  it.each([
    [
      'a schema ajv refuses',
      [
        { match: {}, mode: 'NEVER' },
        { match: { patern: '^/tmp/' }, mode: 'NEVER' },
      ],
      ['input', 'toolConfirmation', '1', 'rules', '1', 'match'],
      /^Rule 1 of t:write_file: not a usable JSON Schema: strict mode: unknown keyword: "patern"\.$/,
    ],
    [
      'a pattern that cannot be matched in linear time',
      [{ match: { properties: { path: { pattern: '^(?!/tmp/)' } } }, mode: 'ALWAYS' }],
      ['input', 'toolConfirmation', '1', 'rules', '0', 'match'],
      /^Rule 0 of t:write_file: not a usable JSON Schema: the pattern "\^\(\?!\/tmp\/\)" uses a lookahead, \(\?!\/tmp\/\), which cannot be matched in linear time\.$/,
    ],
    [
      'a DENY without a reason',
      [{ match: {}, mode: 'DENY' }],
      ['input', 'toolConfirmation', '1', 'rules', '0', 'reason'],
      /^Rule 0 of t:write_file: a DENY rule needs a reason: the model is told it\.$/,
    ],
    [
      'a match that is not an object',
      [{ match: 'path', mode: 'NEVER' }],
      ['input', 'toolConfirmation', '1', 'rules', '0', 'match'],
      /a JSON Schema object/,
    ],
    [
      'a NUL character in a reason',
      [{ match: {}, mode: 'DENY', reason: 'a\u0000b' }],
      ['input', 'toolConfirmation', '1', 'rules', '0'],
      /NUL character/,
    ],
  ])('%s is INVALID_INPUT naming the rule, and nothing changes', async (_label, rules, field, message) => {
    const before = dataOf(await s.h.gql(AGENT)).agent;
    const result = await update({
      allowEdit: !before.allowEdit,
      requireToolConfirmation: !before.requireToolConfirmation,
      toolConfirmation: [
        { toolId: 't:read_file', mode: 'ALWAYS', rules: [{ match: {}, mode: 'NEVER' }] },
        { toolId: 't:write_file', rules },
      ],
    });
    expect(result.agent).toBeNull();
    expect(result.userErrors).toHaveLength(1);
    expect(result.userErrors[0]).toMatchObject({ code: 'INVALID_INPUT', field });
    expect(result.userErrors[0].message).toMatch(message);
    expect(dataOf(await s.h.gql(AGENT)).agent).toEqual(before);
  });

  it('an unknown rule mode is a GraphQL validation error, and nothing changes', async () => {
    const before = dataOf(await s.h.gql(AGENT)).agent;
    const response = await s.h.gql(UPDATE, {
      input: {
        agentId: AGENT_ID,
        toolConfirmation: [{ toolId: 't:write_file', rules: [{ match: {}, mode: 'MAYBE' }] }],
      },
    });
    expect(response.errors?.[0]?.message).toMatch(/MAYBE/);
    expect(dataOf(await s.h.gql(AGENT)).agent).toEqual(before);
  });
});

describe('a restart with the same config', () => {
  it('keeps the rules and allowEdit that updateAgent set', async () => {
    const first = await startScenario({ tools: TOOLS, script: [writeNamedPath], agent: CONFIGURED });
    const database = first.h.database;
    try {
      const result = dataOf(
        await first.h.gql(UPDATE, {
          input: {
            agentId: AGENT_ID,
            allowEdit: false,
            toolConfirmation: [
              {
                toolId: 't:write_file',
                rules: [{ match: {}, mode: 'DENY', reason: 'set by the API' }],
                allowEdit: true,
              },
            ],
          },
        }),
      ).updateAgent;
      expect(result.userErrors).toEqual([]);
    } finally {
      await first.close();
    }
    const tools = new CountingToolSource('t', TOOLS);
    const again = await startHarness({
      database,
      config: testConfig(CONFIGURED),
      models: { [MODEL_ID]: new ScriptedModel([writeNamedPath]) },
      toolSources: [tools],
    });
    try {
      const agent = dataOf(await again.gql(AGENT)).agent;
      expect(agent.allowEdit).toBe(false);
      expect(agent.tools.find((t: any) => t.toolId === 't:write_file')).toMatchObject({
        allowEdit: true,
        rules: [{ match: {}, mode: 'DENY', reason: 'set by the API' }],
      });
    } finally {
      await again.close();
    }
  });
});
