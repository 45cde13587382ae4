// Tools written as functions (defineToolSource, src/tools/code.ts), through the loop and the API: gated by their
// annotations, arguments checked against their schema before the function is called, its outcomes as the model reads
// them; and the mistakes defineToolSource refuses at once.
import { afterEach, describe, expect, it } from 'vitest';
import { defineToolSource, type FunctionTool } from '../../src/tools/code.js';
import type { ToolExecutionContext } from '../../src/tools/tool.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { call, callStep, testConfig, textStep } from '../support/scenario.js';
import type { ScriptStep } from '../../src/models/scripted.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A server whose test agent has the `fn` source's tools and answers with `script`. */
async function serve(tools: FunctionTool[], script: ScriptStep[]): Promise<{ h: Harness; model: ScriptedModel }> {
  const model = new ScriptedModel(script);
  h = await startHarness({
    config: testConfig({ tools: ['fn:*'] }),
    models: { scripted: model },
    toolSources: [defineToolSource('fn', tools)],
  });
  return { h, model };
}

async function start(h: Harness, message = 'go'): Promise<any> {
  return (dataOf(await h.gql(START_TURN, { input: { agentId: 'tester', message } })) as any).startTurn.turn;
}

/** The TOOL messages of a turn, as the model reads them. */
const toolTexts = (turn: any): string[] =>
  turn.messages.filter((message: any) => message.role === 'TOOL').map((message: any) => message.text);

describe('defineToolSource through the loop', () => {
  it('a read-only function runs unasked; its string is the result, its context names the call', async () => {
    const contexts: ToolExecutionContext[] = [];
    const { h } = await serve(
      [
        {
          name: 'today',
          description: 'The date.',
          annotations: { readOnlyHint: true },
          execute: (_args, context) => {
            contexts.push(context);
            return 'It is Tuesday.';
          },
        },
      ],
      [callStep(call('today')), textStep('done')],
    );
    const turn = await start(h);
    expect(turn.status).toBe('COMPLETED');
    expect(toolTexts(turn)).toEqual(['It is Tuesday.']);
    expect(contexts).toEqual([
      expect.objectContaining({
        agentId: 'tester',
        turnId: turn.id,
        toolCallId: 'call_today',
        threadId: expect.any(String),
      }),
    ]);
  });

  it('a function that changes something asks first, and runs once after ACCEPT with the arguments it was asked about', async () => {
    const runs: unknown[] = [];
    const { h } = await serve(
      [
        {
          name: 'close_ticket',
          title: 'Close ticket',
          description: 'Closes a ticket.',
          inputSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
          annotations: { destructiveHint: true },
          execute: async (args) => {
            runs.push(args);
            return { text: `Closed #${args.id}.`, isError: false };
          },
        },
      ],
      [callStep(call('close_ticket', { id: 7 })), textStep('done')],
    );
    const paused = await start(h);
    expect(paused.status).toBe('PAUSED');
    expect(paused.pendingElicitations[0].toolCall).toMatchObject({
      toolId: 'fn:close_ticket',
      arguments: { id: 7 },
      annotations: { destructiveHint: true, readOnlyHint: null },
    });
    expect(paused.pendingElicitations[0].message).toContain('Close ticket');
    expect(runs).toEqual([]);
    const input = { elicitationId: paused.pendingElicitations[0].id, action: 'ACCEPT' };
    const resolved = (dataOf(await h.gql(RESOLVE, { input })) as any).resolveElicitation.turn;
    expect(resolved.status).toBe('COMPLETED');
    expect(toolTexts(resolved)).toEqual(['Closed #7.']);
    expect(runs).toEqual([{ id: 7 }]);
  });

  it('arguments its schema refuses never reach the function; the model reads why', async () => {
    let ran = 0;
    const { h } = await serve(
      [
        {
          name: 'close_ticket',
          description: 'Closes a ticket.',
          inputSchema: {
            type: 'object',
            properties: { id: { type: 'integer' } },
            required: ['id'],
            additionalProperties: false,
          },
          annotations: { readOnlyHint: true },
          execute: () => {
            ran++;
            return 'closed';
          },
        },
      ],
      [callStep(call('close_ticket', { id: 'seven' })), textStep('done')],
    );
    const turn = await start(h);
    expect(toolTexts(turn)).toEqual(['Execution of close_ticket failed: invalid arguments: id must be integer']);
    expect(ran).toBe(0);
  });

  it('a thrown error and an isError result are failed calls, in the model’s words', async () => {
    const { h } = await serve(
      [
        {
          name: 'explode',
          description: 'Throws.',
          annotations: { readOnlyHint: true },
          execute: () => {
            throw new Error('the disk is full');
          },
        },
        {
          name: 'refuse',
          description: 'Fails.',
          annotations: { readOnlyHint: true },
          execute: async () => ({ text: 'no such ticket', isError: true }),
        },
      ],
      [callStep(call('explode'), call('refuse')), textStep('done')],
    );
    expect(toolTexts(await start(h))).toEqual([
      'Execution of explode failed: the disk is full',
      'Execution of refuse failed: no such ticket',
    ]);
  });
});

describe('defineToolSource refuses at once', () => {
  const tool = (overrides: Partial<FunctionTool> = {}): FunctionTool => ({
    name: 'ok',
    description: 'A tool.',
    execute: () => 'ok',
    ...overrides,
  });

  it.each([
    [
      'an id a config cannot name',
      () => defineToolSource('my tools', [tool()]),
      /the id "my tools" is not a tool source id/,
    ],
    ['a name with a space', () => defineToolSource('fn', [tool({ name: 'two words' })]), /"two words": a tool's name/],
    ['a name given twice', () => defineToolSource('fn', [tool(), tool()]), /"ok": two tools have this name/],
    [
      'an input schema that cannot be compiled',
      () => defineToolSource('fn', [tool({ inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } })]),
      /"ok": the input schema cannot be used: /,
    ],
  ])('%s', (_what, define, message) => {
    expect(define).toThrow(message);
  });
});
