// Edit, then accept (docs/approvals.md), through the use case, no API in front: an ACCEPT with `arguments` runs the
// call with the user's arguments, checked against the tool's schema and the agent's allowEdit before anything is
// recorded, passed through the listeners and the argument rules again, told to the model, kept apart from the
// model's own in the audit; idempotent and race-safe like any answer; and an "edit" that changes nothing is a plain
// ACCEPT. test/graphql/edit-accept.test.ts keeps what the API adds: the payload, the userErrors and their paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation, type AnswerElicitationInput } from '../../src/app/answer-elicitation.js';
import type { ElicitationRecord, JsonObject } from '../../src/domain/records.js';
import { ALICE, callsWhatIsNamed, otherAgent, startApp, type AppScenario } from '../support/app.js';
import { expectConsistent, expectRefused, pausedOn, toolTextsOf } from '../support/app-turns.js';
import { askingListener, NOTE_SCHEMA, protectNotes } from '../support/notes.js';
import type { CountingTool } from '../support/tools.js';
import { toolMessageFor } from '../support/transcript.js';

const note = (name: string, more: Partial<CountingTool> = {}): CountingTool => ({
  name,
  inputSchema: NOTE_SCHEMA,
  ...more,
});
/** What the model calls each tool with. */
const MODEL_ARGUMENTS = { id: 'n1', text: 'model text' };

const edited = (name: string, args: JsonObject) =>
  `The user changed the arguments of ${name} before accepting; it ran with these arguments instead: ${JSON.stringify(args)}`;
const ran = (name: string, args: JsonObject) => `${name} ran with ${JSON.stringify(args)}`;

/** Every call the listeners saw, by call id. */
const seen = new Map<string, JsonObject[]>();

let s: AppScenario;

beforeAll(async () => {
  s = await startApp({
    tools: [
      note('edit_note'),
      note('locked_note'),
      note('strict_note'),
      note('slow_note', {
        run: async (args) => {
          await new Promise((r) => setTimeout(r, 10));
          return `edited ${String(args.id)}`;
        },
      }),
    ],
    script: [
      callsWhatIsNamed({
        edit_note: MODEL_ARGUMENTS,
        locked_note: MODEL_ARGUMENTS,
        strict_note: MODEL_ARGUMENTS,
        slow_note: { id: 'n1' },
      }),
    ],
    agent: {
      toolConfirmation: {
        't:locked_note': { mode: 'ALWAYS', allowEdit: false },
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
    // Editing off for the agent, on again for one tool.
    agents: [otherAgent({ allowEdit: false, toolConfirmation: { 't:edit_note': { allowEdit: true } } })],
    listeners: [
      protectNotes(seen),
      askingListener((call) => call.name === 'strict_note', 'Strict notes need a look every time.'),
    ],
  });
});
afterAll(() => s?.close());

/** Alice's new turn calling `tool` (of the test agent, or `agentId`'s): its one request. */
async function requestOf(tool = 'edit_note', agentId?: string): Promise<ElicitationRecord> {
  const [request] = await pausedOn(s, ALICE, `t_${tool}`, agentId);
  return request!;
}

const answer = (request: ElicitationRecord, more: Partial<AnswerElicitationInput> = {}) =>
  answerElicitation(s.app, ALICE, { elicitationId: request.id, action: 'ACCEPT', ...more });

async function answered(request: ElicitationRecord, more: Partial<AnswerElicitationInput> = {}) {
  const outcome = await answer(request, more);
  if (!outcome.ok) throw new Error(`refused: ${JSON.stringify(outcome)}`);
  return outcome;
}

/** The arguments each run of `tool` had, after the first `before` runs. */
const runsSince = (tool: string, before: number) => (s.tools.runs.get(tool) ?? []).slice(before);

/** What the model was sent for the request's call in its last request. */
const toldTheModel = (request: ElicitationRecord) =>
  toolMessageFor(s.model.requests.at(-1)!.messages, request.toolCallId)?.text;

describe('an edited ACCEPT', () => {
  it("runs the tool with the user's arguments, tells the model so, and keeps both in the audit", async () => {
    const request = await requestOf();
    const before = s.tools.count('edit_note');
    const args = { id: 'n1', text: 'user text', priority: 2 };
    const outcome = await answered(request, { arguments: args });
    expect(outcome.turn?.status).toBe('COMPLETED');
    expect(runsSince('edit_note', before)).toEqual([args]);
    const told = `${edited('edit_note', args)}\n\n${ran('edit_note', args)}`;
    expect(await toolTextsOf(s, request.turnId)).toEqual([told]);
    // The model reads it answering its own call, whose arguments stay the model's.
    expect(toldTheModel(request)).toBe(told);
    const assistant = (await s.app.store.listTurnMessages(request.turnId)).find((m) => m.toolCalls.length > 0);
    expect(assistant!.toolCalls[0]!.arguments).toEqual(MODEL_ARGUMENTS);
    // The audit: the model's call, and the user's arguments as the answer.
    for (const record of [outcome.elicitation, await s.app.store.getElicitation(request.id, ALICE.id)]) {
      expect(record).toMatchObject({
        status: 'ACCEPTED',
        toolCall: { arguments: MODEL_ARGUMENTS },
        response: { action: 'ACCEPT', content: null, arguments: args },
      });
    }
    await expectConsistent(s, request.threadId);
  });

  it("with the ACCEPT's instructions: the edit note first, then the result, then the instructions", async () => {
    const request = await requestOf();
    await answered(request, { arguments: { id: 'n2' }, content: { instructions: 'say nothing' } });
    expect(await toolTextsOf(s, request.turnId)).toEqual([
      `${edited('edit_note', { id: 'n2' })}\n\n${ran('edit_note', { id: 'n2' })}\n\nUser instructions for edit_note: say nothing`,
    ]);
  });

  it("a plain ACCEPT runs the model's arguments and records none of its own", async () => {
    const request = await requestOf();
    const before = s.tools.count('edit_note');
    const outcome = await answered(request);
    expect(runsSince('edit_note', before)).toEqual([MODEL_ARGUMENTS]);
    expect(await toolTextsOf(s, request.turnId)).toEqual([ran('edit_note', MODEL_ARGUMENTS)]);
    expect(outcome.elicitation.response).toEqual({ action: 'ACCEPT', content: null });
  });
});

describe('an edit is refused before anything is recorded, and the request stays open', () => {
  const invalid = (at: string[]) => ({
    code: 'INVALID_CONTENT',
    field: 'arguments',
    at,
    problem: expect.stringMatching(/^arguments/),
  });
  const cases: [string, string, Partial<AnswerElicitationInput>, object][] = [
    ['a property of the wrong type', 'edit_note', { arguments: { id: 'n1', priority: 'high' } }, invalid(['priority'])],
    ['a value the schema refuses', 'edit_note', { arguments: { id: '' } }, invalid(['id'])],
    ['a required property missing', 'edit_note', { arguments: { text: 'no id' } }, invalid(['id'])],
    ['a property the tool does not have', 'edit_note', { arguments: { id: 'n1', colour: 'red' } }, invalid(['colour'])],
    ['an array instead of an object', 'edit_note', { arguments: ['n1'] }, invalid([])],
    ['a string instead of an object', 'edit_note', { arguments: 'n1' }, invalid([])],
    ['text no backend can store', 'edit_note', { arguments: { id: 'n1', text: 'nul \u0000 inside' } }, invalid([])],
    [
      'with DECLINE',
      'edit_note',
      { action: 'DECLINE', arguments: { id: 'n2' } },
      { code: 'INVALID_INPUT', field: 'arguments', reason: 'ACCEPT_ONLY' },
    ],
    [
      'with CANCEL',
      'edit_note',
      { action: 'CANCEL', arguments: { id: 'n2' } },
      { code: 'INVALID_INPUT', field: 'arguments', reason: 'ACCEPT_ONLY' },
    ],
    [
      'where the agent turned editing off for the tool',
      'locked_note',
      { arguments: { id: 'n2' } },
      { code: 'FORBIDDEN', field: 'arguments', reason: 'EDIT_OFF', toolName: 'locked_note' },
    ],
  ];

  it.each(cases)('%s (t:%s)', async (_what, tool, input, refusal) => {
    const request = await requestOf(tool);
    await expectRefused(s, ALICE, { elicitationId: request.id, action: 'ACCEPT', ...input }, refusal);
    expect((await s.app.store.getElicitation(request.id, ALICE.id))?.status).toBe('PENDING');
    // Still open: a valid answer goes through.
    const before = s.tools.count(tool);
    const valid = tool === 'locked_note' ? {} : { arguments: { id: 'n9' } };
    expect((await answered(request, valid)).turn?.status).toBe('COMPLETED');
    expect(runsSince(tool, before)).toEqual([tool === 'locked_note' ? MODEL_ARGUMENTS : { id: 'n9' }]);
  });

  it('a pattern of the schema is matched in linear time: ^(a+)+$ refuses 30 "a"s and a "!" at once', async () => {
    const request = await requestOf();
    const started = performance.now();
    // V8's backtracking engine takes minutes on this string, and the server would answer nobody meanwhile.
    await expectRefused(
      s,
      ALICE,
      { elicitationId: request.id, action: 'ACCEPT', arguments: { id: 'n1', tag: `${'a'.repeat(30)}!` } },
      {
        code: 'INVALID_CONTENT',
        field: 'arguments',
        at: ['tag'],
        problem: 'arguments.tag must match pattern "^(a+)+$".',
      },
    );
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('editing off for the agent, on again for the tool: the tool setting wins', async () => {
    const request = await requestOf('edit_note', 'other');
    const before = s.tools.count('edit_note');
    await answered(request, { arguments: { id: 'n2' } });
    expect(runsSince('edit_note', before)).toEqual([{ id: 'n2' }]);
  });
});

describe('the edited call goes through the listeners and the argument rules again', () => {
  it("an edit to a value a listener vetoes: denied with the listener's reason, never run", async () => {
    const request = await requestOf();
    const before = s.tools.count('edit_note');
    const outcome = await answered(request, { arguments: { id: 'protected' } });
    expect([outcome.elicitation.status, outcome.turn?.status]).toEqual(['ACCEPTED', 'COMPLETED']);
    const denied = 'Execution of edit_note was denied: protected notes are read-only';
    expect(await toolTextsOf(s, request.turnId)).toEqual([denied]);
    expect(toldTheModel(request)).toBe(denied);
    expect(s.tools.count('edit_note')).toBe(before);
    expect(seen.get(request.toolCallId)).toEqual([MODEL_ARGUMENTS, { id: 'protected' }]);
    await expectConsistent(s, request.threadId);
  });

  it("an edit into what a DENY rule matches is vetoed with the rule's reason", async () => {
    const request = await requestOf();
    const before = s.tools.count('edit_note');
    await answered(request, { arguments: { id: 'root' } });
    expect(await toolTextsOf(s, request.turnId)).toEqual(['Execution of edit_note was denied: root is off limits']);
    expect(s.tools.count('edit_note')).toBe(before);
  });

  it('a listener asking about the edited call does not pause again: the user confirmed these arguments', async () => {
    const request = await requestOf('strict_note');
    const before = s.tools.count('strict_note');
    const outcome = await answered(request, { arguments: { id: 'n2', text: 'edited' } });
    expect([outcome.turn?.status, outcome.pausedWith]).toEqual(['COMPLETED', null]);
    expect(seen.get(request.toolCallId)).toEqual([MODEL_ARGUMENTS, { id: 'n2', text: 'edited' }]);
    expect(runsSince('strict_note', before)).toEqual([{ id: 'n2', text: 'edited' }]);
    expect(await s.app.store.listTurnElicitations(request.turnId)).toHaveLength(1);
    await expectConsistent(s, request.threadId);
  });
});

describe('an edited answer, answered again', () => {
  it('the same edit again (keys in another order): the recorded result, nothing runs twice', async () => {
    const request = await requestOf();
    const before = s.tools.count('edit_note');
    const first = await answered(request, { arguments: { id: 'n2', text: 'x', priority: 1 } });
    const messages = await s.app.store.listTurnMessages(request.turnId);
    const requests = s.model.requests.length;
    const again = await answered(request, { arguments: { priority: 1, text: 'x', id: 'n2' } });
    expect(again.elicitation).toEqual(first.elicitation);
    expect(again.turn?.status).toBe(first.turn?.status);
    expect(runsSince('edit_note', before)).toEqual([{ id: 'n2', text: 'x', priority: 1 }]);
    expect(s.model.requests.length).toBe(requests);
    expect(await s.app.store.listTurnMessages(request.turnId)).toEqual(messages);
  });

  it.each([
    ['another edit after an edit', { arguments: { id: 'n2' } }, { arguments: { id: 'n3' } }],
    ['a plain ACCEPT after an edit', { arguments: { id: 'n2' } }, {}],
    ['a DECLINE after an edit', { arguments: { id: 'n2' } }, { action: 'DECLINE' as const }],
    ['an edit after a plain ACCEPT', {}, { arguments: { id: 'n2' } }],
  ])('%s: ALREADY_RESOLVED, the first answer stands', async (_what, first, other) => {
    const request = await requestOf();
    await answered(request, first);
    await expectRefused(
      s,
      ALICE,
      { elicitationId: request.id, action: 'ACCEPT', ...other },
      { code: 'ALREADY_RESOLVED', field: 'elicitationId', status: 'ACCEPTED' },
    );
    const stored = await s.app.store.getElicitation(request.id, ALICE.id);
    expect(stored?.response?.arguments ?? null).toEqual('arguments' in first ? first.arguments : null);
  });

  const ROUNDS = 6;
  it(`an edited and a plain ACCEPT at once, ${ROUNDS} times: one is recorded, the tool runs once, with its arguments`, async () => {
    const winners: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const request = await requestOf('slow_note');
      const before = s.tools.count('slow_note');
      const edit = { arguments: { id: `edit-${round}` } };
      const plain = {};
      const [a, b] = round % 2 ? [edit, plain] : [plain, edit];
      const results = await Promise.all([answer(request, a), answer(request, b)]);
      expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.code)).toEqual(['ALREADY_RESOLVED']);
      const winner = results[0]!.ok ? a : b;
      winners.push(winner === edit ? 'edited' : 'plain');
      const stored = await s.app.store.getElicitation(request.id, ALICE.id);
      expect(stored?.response?.arguments ?? null).toEqual(winner === edit ? { id: `edit-${round}` } : null);
      await expect.poll(async () => (await s.app.store.loadTurn(request.turnId))?.status).toBe('COMPLETED');
      expect(runsSince('slow_note', before)).toEqual([winner === edit ? { id: `edit-${round}` } : { id: 'n1' }]);
      const texts = await toolTextsOf(s, request.turnId);
      expect(texts).toHaveLength(1);
      expect(texts[0]).toContain(winner === edit ? `edited edit-${round}` : 'edited n1');
    }
    expect(winners).toHaveLength(ROUNDS);
  });
});

describe("an ACCEPT whose arguments are the model's own (key order aside) is a plain ACCEPT", () => {
  /** The model's arguments, keys in another order. */
  const SAME = { text: 'model text', id: 'n1' };

  it('is recorded, run and told to the model as a plain ACCEPT', async () => {
    const request = await requestOf();
    const before = s.tools.count('edit_note');
    const outcome = await answered(request, { arguments: SAME });
    expect(outcome.elicitation.response).toEqual({ action: 'ACCEPT', content: null });
    expect((await s.app.store.getElicitation(request.id, ALICE.id))?.response).toEqual(outcome.elicitation.response);
    expect(runsSince('edit_note', before)).toEqual([MODEL_ARGUMENTS]);
    // No "The user changed the arguments" note, for the model or anyone reading the thread.
    expect(await toolTextsOf(s, request.turnId)).toEqual([ran('edit_note', MODEL_ARGUMENTS)]);
    expect(toldTheModel(request)).toBe(ran('edit_note', MODEL_ARGUMENTS));
  });

  it.each([
    ['the same again', { arguments: SAME }, { arguments: SAME }],
    ['then a plain ACCEPT', { arguments: SAME }, {}],
    ["then the model's arguments in their own order", { arguments: SAME }, { arguments: MODEL_ARGUMENTS }],
    ["a plain ACCEPT, then the model's arguments as an edit", {}, { arguments: SAME }],
  ])('%s: the same answer, nothing runs twice', async (_what, first, again) => {
    const request = await requestOf();
    const before = s.tools.count('edit_note');
    const one = await answered(request, first);
    const two = await answered(request, again);
    expect(two.elicitation).toEqual(one.elicitation);
    expect(s.tools.count('edit_note') - before).toBe(1);
  });

  it('is allowed where editing is turned off: it edits nothing', async () => {
    const request = await requestOf('locked_note');
    const before = s.tools.count('locked_note');
    const outcome = await answered(request, { arguments: SAME });
    expect(outcome.elicitation.response?.arguments ?? null).toBeNull();
    expect(runsSince('locked_note', before)).toEqual([MODEL_ARGUMENTS]);
  });

  it('one value changed is still an edit', async () => {
    const request = await requestOf();
    const changed = { text: 'model text ', id: 'n1' };
    const outcome = await answered(request, { arguments: changed });
    expect(outcome.elicitation.response?.arguments).toEqual(changed);
    expect((await toolTextsOf(s, request.turnId))[0]).toContain('The user changed the arguments of edit_note');
  });
});
