// Vetoes and listeners through the GraphQL API: a vetoed call never runs, the model is told why and goes on.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ElicitRequestFormParamsSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolPreExecuteEvent, ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import { dataOf } from '../support/harness.js';
import { protectNotes } from '../support/notes.js';
import { call, callStep, startScenario, textStep, toolTexts, type Scenario } from '../support/scenario.js';
import { toolMessageFor } from '../support/transcript.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const DENIED = 'Execution of edit_note was denied: protected notes are read-only';
const TOOLS = [{ name: 'edit_note' }, { name: 'read_note', annotations: { readOnlyHint: true } }];

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

describe('a veto from a code listener', () => {
  it('does not run the tool, answers with the exact denied text, and the next model call sees it', async () => {
    s = await startScenario({
      tools: TOOLS,
      listeners: [protectNotes()],
      script: [callStep(call('edit_note', { id: 'protected' })), textStep('I cannot edit that note.')],
    });
    const { turn, thread } = await s.start('edit the protected note');
    // The tool asks for confirmation (unannotated, agent on), but the veto wins: no pause, no elicitation.
    expect(turn.status).toBe('COMPLETED');
    expect(turn.text).toBe('I cannot edit that note.');
    expect(turn.elicitations).toEqual([]);
    expect(s.tools.count('edit_note')).toBe(0);
    expect(toolTexts(turn.messages)).toEqual([DENIED]);
    expect(s.model.requests).toHaveLength(2);
    expect(toolMessageFor(s.model.requests[1]!.messages, 'call_edit_note')?.text).toBe(DENIED);
    await s.expectConsistent(thread.id);
  });

  it('wins over confirmation even when it comes after the confirmation listener', async () => {
    const seen: boolean[] = [];
    const lateVeto: ToolPreExecuteListener = {
      priority: -10,
      onToolPreExecute(event) {
        seen.push(event.getElicitationRequest() !== null);
        event.setVeto('too late in the day');
      },
    };
    s = await startScenario({
      tools: TOOLS,
      listeners: [lateVeto],
      script: [callStep(call('edit_note', { id: 'n1' })), textStep('ok')],
    });
    const { turn, thread } = await s.start('edit n1');
    expect(seen).toEqual([true]); // the confirmation listener had asked
    expect(turn.status).toBe('COMPLETED');
    expect(turn.elicitations).toEqual([]);
    expect(toolTexts(turn.messages)).toEqual(['Execution of edit_note was denied: too late in the day']);
    expect(s.tools.count('edit_note')).toBe(0);
    const pending = await s.h.gql('{ pendingElicitations { totalCount } }');
    expect(pending.data.pendingElicitations.totalCount).toBe(0);
    await s.expectConsistent(thread.id);
  });

  it('vetoes a call that would run without confirmation too', async () => {
    s = await startScenario({
      tools: TOOLS,
      listeners: [{ onToolPreExecute: (e) => e.setVeto('reads are off') }],
      agent: { requireToolConfirmation: false },
      script: [callStep(call('read_note', { id: 'n1' })), textStep('ok')],
    });
    const { turn, thread } = await s.start('read n1');
    expect(turn.status).toBe('COMPLETED');
    expect(toolTexts(turn.messages)).toEqual(['Execution of read_note was denied: reads are off']);
    expect(s.tools.count('read_note')).toBe(0);
    await s.expectConsistent(thread.id);
  });
});

describe('a veto from a plugin module named in the config', () => {
  it('loads the module relative to the config file and applies its veto', async () => {
    s = await startScenario({
      tools: TOOLS,
      plugins: ['./protect-notes.mjs'],
      configFile: join(FIXTURES, 'config.json'),
      script: [callStep(call('edit_note', { id: 'protected' })), textStep('That note is protected.')],
    });
    const { turn, thread } = await s.start('edit the protected note');
    expect(turn.status).toBe('COMPLETED');
    expect(toolTexts(turn.messages)).toEqual([DENIED]);
    expect(s.tools.count('edit_note')).toBe(0);
    expect(toolMessageFor(s.model.requests[1]!.messages, 'call_edit_note')?.text).toBe(DENIED);
    await s.expectConsistent(thread.id);
  });

  it('in a step with an allowed call: only the allowed one is asked; after ACCEPT both answer in order', async () => {
    s = await startScenario({
      tools: TOOLS,
      plugins: ['./protect-notes.mjs'],
      configFile: join(FIXTURES, 'config.json'),
      script: [
        callStep(call('edit_note', { id: 'protected' }, 'c1'), call('edit_note', { id: 'n2' }, 'c2')),
        textStep('One edited, one protected.'),
      ],
    });
    const { turn, thread } = await s.start('edit both notes');
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations).toHaveLength(1);
    expect(turn.pendingElicitations[0].toolCall.arguments).toEqual({ id: 'n2' });
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n2' }]);
    expect(toolTexts(resolved.turn.messages)).toEqual([DENIED, 'edit_note ran with {"id":"n2"}']);
    await s.expectConsistent(thread.id);
  });
});

describe('listener order', () => {
  it('runs by descending priority across code, plugin and the confirmation listener (at 0, after code listeners of 0)', async () => {
    const order: string[] = [];
    const observe = (name: string, priority: number): ToolPreExecuteListener => ({
      priority,
      onToolPreExecute(event: ToolPreExecuteEvent) {
        order.push(`${name} vetoed=${event.isVetoed()} asked=${event.getElicitationRequest() !== null}`);
      },
    });
    s = await startScenario({
      tools: TOOLS,
      plugins: ['./protect-notes.mjs'],
      configFile: join(FIXTURES, 'config.json'),
      listeners: [observe('minus5', -5), observe('zero', 0), observe('fifty', 50), observe('twohundred', 200)],
      script: [
        callStep(call('edit_note', { id: 'protected' }, 'c1'), call('edit_note', { id: 'free' }, 'c2')),
        textStep('ok'),
      ],
    });
    await s.start('edit');
    expect(order).toEqual([
      // call 1: the plugin (100) vetoes between 200 and 50
      'twohundred vetoed=false asked=false',
      'fifty vetoed=true asked=false',
      'zero vetoed=true asked=false',
      'minus5 vetoed=true asked=false',
      // call 2: the confirmation listener (0, registered after code listeners) asks between zero and minus5
      'twohundred vetoed=false asked=false',
      'fifty vetoed=false asked=false',
      'zero vetoed=false asked=false',
      'minus5 vetoed=false asked=true',
    ]);
  });

  it('lets a listener ask with its own request, which the confirmation listener keeps', async () => {
    s = await startScenario({
      tools: TOOLS,
      agent: { requireToolConfirmation: false },
      listeners: [
        {
          priority: 10,
          onToolPreExecute(event) {
            event.setElicitationRequest({
              message: 'Reading is audited. Continue?',
              requestedSchema: { type: 'object', properties: {} },
              _meta: {},
            });
          },
        },
      ],
      script: [callStep(call('read_note', { id: 'n1' })), textStep('read')],
    });
    const { turn, thread } = await s.start('read n1');
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations[0].message).toBe('Reading is audited. Continue?');
    await s.expectConsistent(thread.id);
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(s.tools.count('read_note')).toBe(1);
    await s.expectConsistent(thread.id);
  });

  it('a listener that throws fails the turn but every call still gets its one TOOL message', async () => {
    s = await startScenario({
      tools: TOOLS,
      onError: () => {},
      listeners: [
        {
          onToolPreExecute() {
            throw new Error('listener bug');
          },
        },
      ],
      script: [callStep(call('read_note', { id: 'n1' })), textStep('never')],
    });
    const { turn, thread } = await s.start('read n1');
    expect(turn.status).toBe('FAILED');
    expect(turn.error).toBe('The turn failed because of an internal error.');
    expect(turn.error).not.toContain('listener bug');
    expect(s.tools.count('read_note')).toBe(0);
    const texts = toolTexts(turn.messages);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/^Execution of read_note failed: /);
    await s.expectConsistent(thread.id);
  });
});

describe("a listener's own confirmation request", () => {
  const PENDING = '{ pendingElicitations { totalCount edges { node { id message _meta mcpRequest } } } }';

  it('without _meta (optional in MCP): the turn pauses with it, _meta gains the call, and its answer runs the tool', async () => {
    const ask: ToolPreExecuteListener = {
      priority: 50,
      onToolPreExecute(event) {
        // A plugin is plain JavaScript: nothing makes it pass _meta.
        event.setElicitationRequest({
          message: 'A second pair of eyes, please.',
          requestedSchema: { type: 'object', properties: { reviewer: { type: 'string' } }, required: ['reviewer'] },
        } as never);
      },
    };
    s = await startScenario({
      tools: TOOLS,
      listeners: [ask],
      script: [callStep(call('edit_note', { id: 'n1' })), textStep('edited')],
    });
    const { turn } = await s.start('edit n1');
    expect(turn.status).toBe('PAUSED');
    const listed = dataOf(await s.h.gql(PENDING)).pendingElicitations;
    expect(listed.totalCount).toBe(1);
    const node = listed.edges[0].node;
    expect(node.message).toBe('A second pair of eyes, please.');
    expect(node._meta['toolgate.dev/tool_call']).toMatchObject({ name: 'edit_note', arguments: { id: 'n1' } });
    expect(ElicitRequestFormParamsSchema.safeParse(node.mcpRequest).success).toBe(true);
    const answered = await s.resolve(node.id, 'ACCEPT', { reviewer: 'bob' });
    expect(answered.userErrors).toEqual([]);
    expect(answered.turn.status).toBe('COMPLETED');
    expect(s.tools.count('edit_note')).toBe(1);
  });

  it.each([
    [
      'a nested property in requestedSchema',
      { message: 'ok?', requestedSchema: { type: 'object', properties: { a: { type: 'object' } } } },
      'requestedSchema.properties.a',
    ],
    ['no message', { requestedSchema: { type: 'object', properties: {} } }, 'message'],
    ['not an object', 'please confirm', 'expected an object'],
  ])(
    'that is not an MCP form elicitation (%s): the turn fails, nothing runs, the API still answers',
    async (_label, request, named) => {
      const errors: unknown[] = [];
      s = await startScenario({
        tools: TOOLS,
        onError: (error) => errors.push(error),
        listeners: [{ onToolPreExecute: (event) => event.setElicitationRequest(request as never) }],
        script: [callStep(call('edit_note', { id: 'n1' })), textStep('never')],
      });
      const { turn, thread } = await s.start('edit n1');
      expect(turn.status).toBe('FAILED');
      expect(turn.error).toBe('The turn failed because of an internal error.');
      expect(toolTexts(turn.messages)).toEqual([expect.stringMatching(/^Execution of edit_note failed: /)]);
      expect(s.tools.count('edit_note')).toBe(0);
      // The log names the tool and what is wrong; the API, polled by clients, keeps answering.
      expect(String(errors[0])).toContain(
        'The confirmation request a listener set for t:edit_note is not an MCP form elicitation',
      );
      expect(String(errors[0])).toContain(named);
      expect(dataOf(await s.h.gql(PENDING)).pendingElicitations.totalCount).toBe(0);
      await s.expectConsistent(thread.id);
    },
  );
});
