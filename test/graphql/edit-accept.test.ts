// Edit, then accept (docs/approvals.md) over the real HTTP API: an ACCEPT with `arguments` runs the call with the
// user's arguments, checked against the tool's schema before anything is recorded, passed through the listeners
// again, told to the model, kept apart from the model's own in the audit; idempotent and race-safe like any answer.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import { confirmationRequest, toolText } from '../../src/domain/gate/messages.js';
import type { JsonObject } from '../../src/domain/records.js';
import type { ModelRequest } from '../../src/models/model.js';
import { dataOf } from '../support/harness.js';
import { memoryLog } from '../support/log.js';
import {
  call,
  callStep,
  startScenario,
  testConfig,
  textStep,
  toolTexts,
  type Scenario,
  type ScenarioOptions,
} from '../support/scenario.js';
import type { CountingTool } from '../support/tools.js';
import { toolMessageFor } from '../support/transcript.js';
import { WebhookReceiver } from '../webhooks/receiver.js';

/** A tool with a real schema: an id (required), optional text, priority and tag (a pattern V8 backtracks on). */
const EDIT_NOTE: CountingTool = {
  name: 'edit_note',
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string', minLength: 1 },
      text: { type: 'string' },
      priority: { type: 'integer' },
      tag: { type: 'string', pattern: '^(a+)+$' },
    },
    required: ['id'],
    additionalProperties: false,
  },
};

const ANSWER = `mutation Answer($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    elicitation { id status toolCall { arguments } response { action content arguments remember { scope ttlSeconds } } }
    turn { id status text messages { role text toolCallId toolCalls { id arguments } } pendingElicitations { id } elicitations { id } }
    userErrors { code message field }
  }
}`;

const ELICITATION = `query Elicitation($id: ID!) {
  elicitation(id: $id) { id status toolCall { arguments } response { action content arguments } }
}`;

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

async function answer(input: Record<string, unknown>): Promise<any> {
  return dataOf(await s.h.gql(ANSWER, { input })).resolveElicitation;
}

async function elicitation(id: string): Promise<any> {
  return dataOf(await s.h.gql(ELICITATION, { id })).elicitation;
}

/** A turn paused on the model's call edit_note {id: 'n1'}. */
async function pausedOnEdit(options: ScenarioOptions = {}) {
  s = await startScenario({
    tools: [EDIT_NOTE],
    script: [callStep(call('edit_note', { id: 'n1', text: 'model text' })), textStep('Done.')],
    ...options,
  });
  const { turn, thread } = await s.start('edit n1');
  expect(turn.status).toBe('PAUSED');
  return { turn, thread, elicitationId: turn.pendingElicitations[0].id as string };
}

/** Everything an answer that is refused must leave as it was. */
async function snapshot(threadId: string, elicitationId: string) {
  return {
    thread: await s.thread(threadId),
    elicitation: await elicitation(elicitationId),
    runs: s.tools.count('edit_note'),
    requests: s.model.requests.length,
  };
}

describe('ACCEPT with edited arguments', () => {
  it("runs the tool with the user's arguments, tells the model so, and keeps both in the audit", async () => {
    const { turn, thread, elicitationId } = await pausedOnEdit();
    const edited = { id: 'n1', text: 'user text', priority: 2 };
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: edited });
    expect(result.userErrors).toEqual([]);
    expect(result.turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('edit_note')).toEqual([edited]);

    const toolMessage = `${toolText.edited('edit_note', edited)}\n\nedit_note ran with ${JSON.stringify(edited)}`;
    expect(toolTexts(result.turn.messages)).toEqual([toolMessage]);
    expect(toolMessage).toContain('The user changed the arguments of edit_note');
    expect(toolMessage).toContain(JSON.stringify(edited));
    // The model's next request holds it, answering the model's own call (whose arguments stay the model's).
    const next = s.model.requests[1] as ModelRequest;
    expect(toolMessageFor(next.messages, 'call_edit_note')?.text).toBe(toolMessage);
    const assistant = result.turn.messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length);
    expect(assistant.toolCalls[0].arguments).toEqual({ id: 'n1', text: 'model text' });

    const audit = { toolCall: { arguments: { id: 'n1', text: 'model text' } } };
    expect(result.elicitation).toMatchObject({
      ...audit,
      status: 'ACCEPTED',
      response: { action: 'ACCEPT', content: null, arguments: edited, remember: null },
    });
    expect(await elicitation(elicitationId)).toMatchObject({ ...audit, response: { arguments: edited } });
    expect(turn.pendingElicitations).toHaveLength(1);
    await s.expectConsistent(thread.id);
  });

  it("with the ACCEPT's instructions: the edit note first, then the result, then the instructions", async () => {
    const { elicitationId } = await pausedOnEdit();
    const edited = { id: 'n2' };
    const result = await answer({
      elicitationId,
      action: 'ACCEPT',
      arguments: edited,
      content: { instructions: 'say nothing' },
    });
    expect(result.userErrors).toEqual([]);
    expect(toolTexts(result.turn.messages)).toEqual([
      `${toolText.edited('edit_note', edited)}\n\nedit_note ran with {"id":"n2"}\n\n${toolText.acceptedInstructions('edit_note', 'say nothing')}`,
    ]);
    expect(s.tools.runs.get('edit_note')).toEqual([edited]);
  });

  it('a plain ACCEPT runs the model’s arguments and reads back without edited arguments', async () => {
    const { elicitationId } = await pausedOnEdit();
    const result = await answer({ elicitationId, action: 'ACCEPT' });
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1', text: 'model text' }]);
    expect(toolTexts(result.turn.messages)).toEqual(['edit_note ran with {"id":"n1","text":"model text"}']);
    expect(result.elicitation.response).toEqual({ action: 'ACCEPT', content: null, arguments: null, remember: null });
  });
});

describe('edited arguments are checked before anything is recorded', () => {
  it.each([
    ['a property of the wrong type', { id: 'n1', priority: 'high' }, ['priority']],
    ['a value the schema refuses', { id: '' }, ['id']],
    ['a required property missing', { text: 'no id' }, ['id']],
    ['a property the tool does not have', { id: 'n1', colour: 'red' }, ['colour']],
    ['an array instead of an object', ['n1'], []],
    ['a string instead of an object', 'n1', []],
    ['text no backend can store', { id: 'n1', text: 'nul \u0000 inside' }, []],
  ] as const)('%s: INVALID_CONTENT naming the field, still PENDING, nothing ran', async (_what, edited, path) => {
    const { thread, elicitationId } = await pausedOnEdit();
    const before = await snapshot(thread.id, elicitationId);
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: edited });
    expect(result.elicitation).toBeNull();
    expect(result.turn).toBeNull();
    expect(result.userErrors).toEqual([
      { code: 'INVALID_CONTENT', message: expect.stringMatching(/^arguments/), field: ['input', 'arguments', ...path] },
    ]);
    expect(await snapshot(thread.id, elicitationId)).toEqual(before);
    expect(before.elicitation.status).toBe('PENDING');
    expect(s.tools.count('edit_note')).toBe(0);

    // The request is still open: a valid answer goes through.
    const valid = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'n9' } });
    expect(valid.userErrors).toEqual([]);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n9' }]);
  });

  it('a pattern of the schema is matched in linear time: ^(a+)+$ refuses 30 "a"s and a "!" at once', async () => {
    const { thread, elicitationId } = await pausedOnEdit();
    const before = await snapshot(thread.id, elicitationId);
    const started = performance.now();
    // V8's backtracking engine takes minutes on this string, and the server would answer nobody meanwhile.
    const result = await answer({
      elicitationId,
      action: 'ACCEPT',
      arguments: { id: 'n1', tag: `${'a'.repeat(30)}!` },
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result.userErrors).toEqual([
      {
        code: 'INVALID_CONTENT',
        message: 'arguments.tag must match pattern "^(a+)+$".',
        field: ['input', 'arguments', 'tag'],
      },
    ]);
    expect(await snapshot(thread.id, elicitationId)).toEqual(before);
  });

  it.each(['DECLINE', 'CANCEL'] as const)(
    'arguments with %s: INVALID_INPUT on input.arguments, nothing changes',
    async (action) => {
      const { thread, elicitationId } = await pausedOnEdit();
      const before = await snapshot(thread.id, elicitationId);
      const result = await answer({ elicitationId, action, arguments: { id: 'n2' } });
      expect(result.userErrors).toEqual([
        { code: 'INVALID_INPUT', message: expect.stringContaining('ACCEPT'), field: ['input', 'arguments'] },
      ]);
      expect(await snapshot(thread.id, elicitationId)).toEqual(before);
      expect(before.elicitation.status).toBe('PENDING');
    },
  );
});

describe('the listeners see the edited call again', () => {
  /** Vetoes edits of the protected note; records every call it sees. */
  function protector(seen: JsonObject[]): ToolPreExecuteListener {
    return {
      priority: 100,
      onToolPreExecute(event) {
        seen.push(structuredClone(event.toolCall.arguments) as JsonObject);
        if (event.toolCall.arguments.id === 'protected') event.setVeto('protected notes are read-only');
      },
    };
  }

  it('an edit to a vetoed value: the TOOL message says denied with the listener’s reason, the tool never runs', async () => {
    const seen: JsonObject[] = [];
    const { thread, elicitationId } = await pausedOnEdit({ listeners: [protector(seen)] });
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'protected' } });
    expect(result.userErrors).toEqual([]);
    expect(result.elicitation.status).toBe('ACCEPTED');
    expect(result.turn.status).toBe('COMPLETED');
    expect(toolTexts(result.turn.messages)).toEqual([toolText.denied('edit_note', 'protected notes are read-only')]);
    expect(toolTexts(result.turn.messages)[0]).toBe('Execution of edit_note was denied: protected notes are read-only');
    expect(s.tools.count('edit_note')).toBe(0);
    expect(seen).toEqual([{ id: 'n1', text: 'model text' }, { id: 'protected' }]);
    expect(toolMessageFor((s.model.requests[1] as ModelRequest).messages, 'call_edit_note')?.text).toBe(
      toolText.denied('edit_note', 'protected notes are read-only'),
    );
    await s.expectConsistent(thread.id);
  });

  it('a listener asking for confirmation of the edited call does not pause again: the user confirmed these arguments', async () => {
    const asked: JsonObject[] = [];
    // Asks about every call, whatever the gating says (as a strict policy plugin would).
    const askAlways: ToolPreExecuteListener = {
      priority: 50,
      onToolPreExecute(event) {
        asked.push(structuredClone(event.toolCall.arguments) as JsonObject);
        event.setElicitationRequest(confirmationRequest(event.tool, event.toolCall));
      },
    };
    const { thread, elicitationId } = await pausedOnEdit({ listeners: [askAlways] });
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'n2', text: 'edited' } });
    expect(result.userErrors).toEqual([]);
    expect(result.turn.status).toBe('COMPLETED');
    expect(result.turn.pendingElicitations).toEqual([]);
    expect(result.turn.elicitations).toHaveLength(1);
    expect(asked).toEqual([
      { id: 'n1', text: 'model text' },
      { id: 'n2', text: 'edited' },
    ]);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n2', text: 'edited' }]);
    const pending = dataOf(await s.h.gql('{ pendingElicitations { totalCount } }')).pendingElicitations;
    expect(pending.totalCount).toBe(0);
    await s.expectConsistent(thread.id);
  });
});

describe('idempotency of edited answers', () => {
  it('the same edited ACCEPT twice (keys in another order): the second returns the recorded result, the tool ran once', async () => {
    const { thread, elicitationId } = await pausedOnEdit();
    const first = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'n2', text: 'x', priority: 1 } });
    expect(first.userErrors).toEqual([]);
    const messages = (await s.thread(thread.id)).messages;
    const requests = s.model.requests.length;
    const again = await answer({ elicitationId, action: 'ACCEPT', arguments: { priority: 1, text: 'x', id: 'n2' } });
    expect(again.userErrors).toEqual([]);
    expect(again.elicitation).toEqual(first.elicitation);
    expect(again.turn.status).toBe(first.turn.status);
    expect(again.turn.messages).toEqual(first.turn.messages);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n2', text: 'x', priority: 1 }]);
    expect(s.model.requests.length).toBe(requests);
    expect((await s.thread(thread.id)).messages).toEqual(messages);
  });

  it.each([
    ['another edit', { action: 'ACCEPT', arguments: { id: 'n3' } }],
    ['a plain ACCEPT', { action: 'ACCEPT' }],
    ['a DECLINE', { action: 'DECLINE' }],
  ] as const)('%s after an edited ACCEPT: ALREADY_RESOLVED, the first answer stands', async (_what, other) => {
    const { thread, elicitationId } = await pausedOnEdit();
    await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'n2' } });
    const before = await snapshot(thread.id, elicitationId);
    const result = await answer({ elicitationId, ...other });
    expect(result.elicitation).toBeNull();
    expect(result.userErrors).toEqual([
      expect.objectContaining({ code: 'ALREADY_RESOLVED', field: ['input', 'elicitationId'] }),
    ]);
    expect(await snapshot(thread.id, elicitationId)).toEqual(before);
    expect(before.elicitation.response.arguments).toEqual({ id: 'n2' });
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n2' }]);
  });

  it('an edited ACCEPT after a plain one: ALREADY_RESOLVED, the model’s arguments ran', async () => {
    const { elicitationId } = await pausedOnEdit();
    await answer({ elicitationId, action: 'ACCEPT' });
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'n2' } });
    expect(result.userErrors.map((e: any) => e.code)).toEqual(['ALREADY_RESOLVED']);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1', text: 'model text' }]);
  });
});

describe('an edited and a plain ACCEPT sent at once', () => {
  const ROUNDS = 6;

  it(`${ROUNDS} times: exactly one is recorded, the tool runs once, with the winner's arguments`, async () => {
    const slow: CountingTool = {
      ...EDIT_NOTE,
      run: async (args) => {
        await new Promise((r) => setTimeout(r, 10));
        return `edited ${String(args.id)}`;
      },
    };
    // Each thread: the model calls edit_note once, then answers.
    const model = (request: ModelRequest) =>
      request.messages.at(-1)?.role === 'USER' ? callStep(call('edit_note', { id: 'n1' })) : textStep('Done.');
    s = await startScenario({ tools: [slow], script: [model] });
    const winners: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { turn } = await s.start(`round ${round}`);
      expect(turn.status).toBe('PAUSED');
      const elicitationId = turn.pendingElicitations[0].id;
      const runsBefore = s.tools.runs.get('edit_note')?.length ?? 0;
      const edited = { elicitationId, action: 'ACCEPT', arguments: { id: `edit-${round}` } };
      const plain = { elicitationId, action: 'ACCEPT' };
      const [a, b] = round % 2 ? [edited, plain] : [plain, edited];
      const results = await Promise.all([answer(a), answer(b)]);

      const ok = results.filter((r) => r.userErrors.length === 0);
      expect(ok).toHaveLength(1);
      expect(results.filter((r) => r.userErrors.length > 0).map((r) => r.userErrors[0].code)).toEqual([
        'ALREADY_RESOLVED',
      ]);
      const winner = ok[0] === results[0] ? a : b;
      winners.push(winner === edited ? 'edited' : 'plain');
      const stored = await elicitation(elicitationId);
      expect(stored.response.arguments).toEqual(winner === edited ? { id: `edit-${round}` } : null);

      const final = await s.turn(turn.id);
      expect(final.status).toBe('COMPLETED');
      const runs = s.tools.runs.get('edit_note')!.slice(runsBefore);
      expect(runs).toEqual([winner === edited ? { id: `edit-${round}` } : { id: 'n1' }]);
      expect(toolTexts(final.messages)).toHaveLength(1);
      expect(toolTexts(final.messages)[0]).toContain(winner === edited ? `edited edit-${round}` : 'edited n1');
    }
    expect(winners).toHaveLength(ROUNDS);
  });
});

describe('allowEdit and argument rules on edited calls', () => {
  const CAN = `query Can($id: ID!) { elicitation(id: $id) { canEdit canRemember } }`;

  it('editing turned off for the tool: FORBIDDEN on input.arguments, nothing changes; canEdit says so first', async () => {
    const { thread, elicitationId } = await pausedOnEdit({
      agent: { toolConfirmation: { 't:edit_note': { mode: 'ALWAYS', allowEdit: false } } },
    });
    expect(dataOf(await s.h.gql(CAN, { id: elicitationId })).elicitation).toEqual({
      canEdit: false,
      canRemember: false, // ALWAYS: asks every time
    });
    const before = await snapshot(thread.id, elicitationId);
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'n2' } });
    expect(result.userErrors).toEqual([
      { code: 'FORBIDDEN', message: expect.stringContaining('allowEdit'), field: ['input', 'arguments'] },
    ]);
    expect(await snapshot(thread.id, elicitationId)).toEqual(before);
    // A plain ACCEPT still works.
    expect((await answer({ elicitationId, action: 'ACCEPT' })).turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1', text: 'model text' }]);
  });

  it('editing turned off for the agent, on again for the tool: the tool setting wins', async () => {
    const { elicitationId } = await pausedOnEdit({
      agent: { allowEdit: false, toolConfirmation: { 't:edit_note': { allowEdit: true } } },
    });
    expect(dataOf(await s.h.gql(CAN, { id: elicitationId })).elicitation).toEqual({ canEdit: true, canRemember: true });
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'n2' } });
    expect(result.userErrors).toEqual([]);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n2' }]);
  });

  it('an edit into what a DENY rule matches is vetoed with the rule’s reason; the tool never runs', async () => {
    const { elicitationId } = await pausedOnEdit({
      agent: {
        toolConfirmation: {
          't:edit_note': {
            rules: [
              {
                match: { properties: { id: { const: 'root' } }, required: ['id'] },
                mode: 'DENY',
                reason: 'root is off limits',
              },
            ],
          },
        },
      },
    });
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: { id: 'root' } });
    expect(result.userErrors).toEqual([]);
    expect(toolTexts(result.turn.messages)).toEqual([toolText.denied('edit_note', 'root is off limits')]);
    expect(s.tools.count('edit_note')).toBe(0);
  });
});

describe("an ACCEPT whose arguments are the model's own (key order aside) is a plain ACCEPT", () => {
  /** The model's arguments, keys in another order. */
  const SAME = { text: 'model text', id: 'n1' };
  const PLAIN_TOOL_MESSAGE = 'edit_note ran with {"id":"n1","text":"model text"}';

  it('is recorded, run, told to the model, reported and logged as a plain ACCEPT', async () => {
    const hooks = await WebhookReceiver.start();
    const log = memoryLog('info');
    try {
      const { thread, elicitationId } = await pausedOnEdit({
        config: {
          ...testConfig(),
          webhooks: [{ url: hooks.url, secret: hooks.secret, events: ['elicitation.resolved'] }],
        },
        webhookDelivery: { pollIntervalMs: 50 },
        logger: log.logger,
      });
      const result = await answer({ elicitationId, action: 'ACCEPT', arguments: SAME });
      expect(result.userErrors).toEqual([]);
      expect(result.turn.status).toBe('COMPLETED');
      expect(result.elicitation.response).toEqual({ action: 'ACCEPT', content: null, arguments: null, remember: null });
      expect((await elicitation(elicitationId)).response).toEqual({ action: 'ACCEPT', content: null, arguments: null });
      expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1', text: 'model text' }]);
      // No "The user changed the arguments" note, for the model or anyone reading the thread.
      expect(toolTexts(result.turn.messages)).toEqual([PLAIN_TOOL_MESSAGE]);
      expect(toolMessageFor((s.model.requests[1] as ModelRequest).messages, 'call_edit_note')?.text).toBe(
        PLAIN_TOOL_MESSAGE,
      );
      const resolved = await hooks.waitFor('elicitation.resolved', () => hooks.delivered()[0]);
      expect(resolved.payload.data.answer).toMatchObject({ action: 'ACCEPT', arguments: null });
      expect(log.find('tool started')).toHaveLength(1);
      expect(log.find('tool started')[0]).not.toHaveProperty('edited');
      await s.expectConsistent(thread.id);
    } finally {
      await hooks.close();
    }
  });

  it.each([
    ['the same again', { action: 'ACCEPT', arguments: SAME }],
    ['a plain ACCEPT', { action: 'ACCEPT' }],
    ["the model's arguments in their own order", { action: 'ACCEPT', arguments: { id: 'n1', text: 'model text' } }],
  ] as const)('then %s: the same answer, nothing runs twice', async (_what, again) => {
    const { elicitationId } = await pausedOnEdit();
    const first = await answer({ elicitationId, action: 'ACCEPT', arguments: SAME });
    const second = await answer({ elicitationId, ...again });
    expect(second.userErrors).toEqual([]);
    expect(second.elicitation).toEqual(first.elicitation);
    expect(s.tools.count('edit_note')).toBe(1);
  });

  it("after a plain ACCEPT, the model's arguments sent as an edit are the same answer, not ALREADY_RESOLVED", async () => {
    const { elicitationId } = await pausedOnEdit();
    const first = await answer({ elicitationId, action: 'ACCEPT' });
    const second = await answer({ elicitationId, action: 'ACCEPT', arguments: SAME });
    expect(second.userErrors).toEqual([]);
    expect(second.elicitation).toEqual(first.elicitation);
    expect(s.tools.count('edit_note')).toBe(1);
  });

  it('is allowed where editing is turned off: it edits nothing', async () => {
    const { elicitationId } = await pausedOnEdit({
      agent: { toolConfirmation: { 't:edit_note': { allowEdit: false } } },
    });
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: SAME });
    expect(result.userErrors).toEqual([]);
    expect(result.elicitation.response.arguments).toBeNull();
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1', text: 'model text' }]);
  });

  it('one value changed is still an edit', async () => {
    const { elicitationId } = await pausedOnEdit();
    const edited = { text: 'model text ', id: 'n1' };
    const result = await answer({ elicitationId, action: 'ACCEPT', arguments: edited });
    expect(result.elicitation.response.arguments).toEqual(edited);
    expect(toolTexts(result.turn.messages)[0]).toContain('The user changed the arguments of edit_note');
  });
});
