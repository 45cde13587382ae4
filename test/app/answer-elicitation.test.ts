// answerElicitation, called directly (no GraphQL): whose request may be answered, and which answers are refused
// before anything is recorded: an edit the agent does not allow or the tool's schema refuses, a remember the gating
// refuses, content that does not match the request. Answers are idempotent by elicitation id: the same answer returns
// the recorded result, a different one is ALREADY_RESOLVED, and answers at once run the tool at most once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation, type AnswerElicitationInput } from '../../src/app/answer-elicitation.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { ElicitationAction, ElicitationRecord, JsonObject } from '../../src/domain/records.js';
import { ALICE, BOB, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { expectConsistent, expectRefused, pausedOn, toolTextsOf } from '../support/app-turns.js';

let s: AppScenario;

const slowly = (ms: number) => async (args: JsonObject) => {
  await new Promise((r) => setTimeout(r, ms));
  return `edited ${String(args.id)}`;
};

beforeAll(async () => {
  s = await startApp({
    tools: [
      {
        name: 'rw',
        inputSchema: {
          type: 'object',
          properties: { id: { type: 'string' } },
          required: ['id'],
          additionalProperties: false,
        },
      },
      { name: 'locked' },
      { name: 'always' },
      { name: 'slow', run: slowly(30) },
      { name: 'slow_a', run: slowly(10) },
      { name: 'slow_b', run: slowly(10) },
    ],
    script: [callsWhatIsNamed({ rw: { id: 'a' }, slow: { id: 'n1' }, slow_a: { id: 'n1' }, slow_b: { id: 'n2' } })],
    agent: { toolConfirmation: { 't:locked': { allowEdit: false }, 't:always': 'ALWAYS' } },
  });
});
afterAll(() => s?.close());

const paused = (viewer: Viewer, message: string) => pausedOn(s, viewer, message);

const answer = (
  elicitation: ElicitationRecord,
  rest: Partial<AnswerElicitationInput> = {},
): AnswerElicitationInput => ({
  elicitationId: elicitation.id,
  action: 'ACCEPT',
  ...rest,
});

describe('answerElicitation', () => {
  it("runs the viewer's accepted call with the edited arguments, and resumes the turn", async () => {
    const [request] = await paused(ALICE, 't_rw');
    const outcome = await answerElicitation(s.app, ALICE, answer(request!, { arguments: { id: 'b' } }));
    if (!outcome.ok) throw new Error(`refused: ${outcome.code}`);
    expect(outcome.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'alice' });
    expect(outcome.turn).toMatchObject({ status: 'COMPLETED', text: 'done' });
    expect(s.tools.runs.get('rw')).toEqual([{ id: 'b' }]);
  });

  it("answers another user's request as it answers an unknown one", async () => {
    const [request] = await paused(ALICE, 't_rw');
    const refusal = { code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' };
    await expectRefused(s, BOB, answer(request!), refusal);
    await expectRefused(s, ALICE, { elicitationId: 'elc_unknown', action: 'ACCEPT' }, refusal);
  });

  it("refuses an edit the tool's inputSchema refuses, naming the argument at fault", async () => {
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(s, ALICE, answer(request!, { arguments: { id: 5 } }), {
      code: 'INVALID_CONTENT',
      field: 'arguments',
      at: ['id'],
      problem: expect.any(String),
    });
    await expectRefused(s, ALICE, answer(request!, { arguments: { id: 'a', more: true } }), {
      code: 'INVALID_CONTENT',
      field: 'arguments',
      at: expect.any(Array),
      problem: expect.stringContaining('more'),
    });
  });

  it('refuses an edit where the agent turned editing off (FORBIDDEN), and edits and remember without ACCEPT', async () => {
    const [locked] = await paused(ALICE, 't_locked');
    await expectRefused(s, ALICE, answer(locked!, { arguments: { x: 1 } }), {
      code: 'FORBIDDEN',
      field: 'arguments',
      reason: 'EDIT_OFF',
      toolName: 'locked',
    });
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(s, ALICE, answer(request!, { action: 'DECLINE', arguments: { id: 'b' } }), {
      code: 'INVALID_INPUT',
      field: 'arguments',
      reason: 'ACCEPT_ONLY',
    });
    await expectRefused(
      s,
      ALICE,
      answer(request!, { action: 'DECLINE', remember: { scope: 'AGENT', ttlSeconds: 60 } }),
      {
        code: 'INVALID_INPUT',
        field: 'remember',
        reason: 'ACCEPT_ONLY',
      },
    );
  });

  it('refuses to remember a call that asks every time, and a ttl out of range', async () => {
    const [always] = await paused(ALICE, 't_always');
    await expectRefused(s, ALICE, answer(always!, { remember: { scope: 'AGENT', ttlSeconds: 60 } }), {
      code: 'INVALID_INPUT',
      field: 'remember',
      reason: 'NOT_REMEMBERABLE',
      toolName: 'always',
    });
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(s, ALICE, answer(request!, { remember: { scope: 'THREAD', ttlSeconds: 0 } }), {
      code: 'INVALID_INPUT',
      field: 'remember',
      at: ['ttlSeconds'],
      reason: 'OUT_OF_RANGE',
      max: 30 * 24 * 3600,
    });
    const remembered = await answerElicitation(
      s.app,
      ALICE,
      answer(request!, { remember: { scope: 'THREAD', ttlSeconds: 60 } }),
    );
    expect(remembered.ok && remembered.elicitation.grantId).toEqual(expect.stringMatching(/^grt_/));
  });

  it("checks content against the request's schema, and its size before anything else", async () => {
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(s, ALICE, answer(request!, { content: { nope: 'x' } }), {
      code: 'INVALID_CONTENT',
      field: 'content',
      at: ['nope'],
      problem: expect.stringContaining('nope'),
    });
    const maxBytes = s.app.limits.maxContentBytes;
    // Too large is the answer for any id, known or not.
    await expectRefused(s, BOB, answer(request!, { content: { instructions: 'x'.repeat(maxBytes) } }), {
      code: 'INVALID_INPUT',
      field: 'content',
      reason: 'TOO_LARGE',
      maxBytes,
    });
  });

  it('returns the recorded result for the same answer again, and refuses another one (ALREADY_RESOLVED)', async () => {
    const [request] = await paused(ALICE, 't_rw');
    const first = await answerElicitation(s.app, ALICE, answer(request!, { action: 'DECLINE' }));
    expect(first.ok && first.turn?.status).toBe('COMPLETED');
    const again = await answerElicitation(s.app, ALICE, answer(request!, { action: 'DECLINE' }));
    expect(again.ok && again.elicitation.id).toBe(request!.id);
    // An edit of an answered request is not judged: the store says it was answered.
    await expectRefused(s, ALICE, answer(request!, { arguments: { id: 5 } }), {
      code: 'ALREADY_RESOLVED',
      field: 'elicitationId',
      status: 'DECLINED',
    });
  });
});

describe('the same answer again', () => {
  it.each([
    ['ACCEPT', undefined],
    ['ACCEPT', { instructions: 'be brief' }],
    ['DECLINE', { instructions: 'no' }],
    ['CANCEL', undefined],
  ] as const)('%s %j: returns the recorded result and does nothing twice', async (action, content) => {
    const [request] = await paused(ALICE, 't_rw');
    const ran = s.tools.count('rw');
    const first = await answerElicitation(s.app, ALICE, answer(request!, { action, content }));
    if (!first.ok) throw new Error(`refused: ${first.code}`);
    const requests = s.model.requests.length;
    const messages = await s.app.store.listThreadMessages(request!.threadId);

    const second = await answerElicitation(s.app, ALICE, answer(request!, { action, content }));
    if (!second.ok) throw new Error(`refused: ${second.code}`);
    expect(second.elicitation).toEqual(first.elicitation);
    expect([second.turn?.status, second.turn?.text]).toEqual([first.turn?.status, first.turn?.text]);
    expect(s.tools.count('rw') - ran).toBe(action === 'ACCEPT' ? 1 : 0);
    expect(s.model.requests.length).toBe(requests);
    expect(await s.app.store.listThreadMessages(request!.threadId)).toEqual(messages);
    await expectConsistent(s, request!.threadId);
  });
});

describe('a different answer after the first', () => {
  it.each([
    ['ACCEPT', undefined, 'DECLINE', undefined],
    ['DECLINE', undefined, 'ACCEPT', undefined],
    ['ACCEPT', undefined, 'CANCEL', undefined],
    ['ACCEPT', { instructions: 'a' }, 'ACCEPT', { instructions: 'b' }],
    ['DECLINE', undefined, 'DECLINE', { instructions: 'now with a reason' }],
  ] as const)(
    '%s %j then %s %j: ALREADY_RESOLVED, the first answer stands',
    async (action, content, other, otherContent) => {
      const [request] = await paused(ALICE, 't_rw');
      const first = await answerElicitation(s.app, ALICE, answer(request!, { action, content }));
      if (!first.ok) throw new Error(`refused: ${first.code}`);
      await expectRefused(s, ALICE, answer(request!, { action: other, content: otherContent }), {
        code: 'ALREADY_RESOLVED',
        field: 'elicitationId',
        status: first.elicitation.status,
      });
    },
  );
});

describe('answers at once', () => {
  const N = 20;
  const answerAll = (request: ElicitationRecord, actions: ElicitationAction[]) =>
    Promise.all(actions.map((action) => answerElicitation(s.app, ALICE, answer(request, { action }))));

  it(`${N} identical ACCEPTs: the tool runs once and every answer reports the same recorded result`, async () => {
    const [request] = await paused(ALICE, 't_slow');
    const ran = s.tools.count('slow');
    const requests = s.model.requests.length;
    const results = await answerAll(request!, Array(N).fill('ACCEPT'));
    expect(s.tools.count('slow') - ran).toBe(1);
    for (const result of results) {
      if (!result.ok) throw new Error(`refused: ${result.code}`);
      expect(result.elicitation).toMatchObject({ status: 'ACCEPTED', response: { action: 'ACCEPT', content: null } });
      // Answers that arrive while the first is still running may see it RUNNING; none sees anything else.
      expect(['RUNNING', 'COMPLETED']).toContain(result.turn?.status);
      if (result.turn?.status === 'COMPLETED') expect(result.turn.text).toBe('done');
    }
    expect(results.filter((r) => r.ok && r.turn?.status === 'COMPLETED').length).toBeGreaterThan(0);
    await expect.poll(async () => (await s.app.store.loadTurn(request!.turnId))?.status).toBe('COMPLETED');
    expect(await toolTextsOf(s, request!.turnId)).toEqual(['edited n1']);
    expect(s.model.requests.length - requests).toBe(1);
    await expectConsistent(s, request!.threadId);
  });

  it(`${N} mixed ACCEPT/DECLINE: one answer wins, the same ones succeed, the others get ALREADY_RESOLVED`, async () => {
    const [request] = await paused(ALICE, 't_slow_a');
    const ran = s.tools.count('slow_a');
    const requests = s.model.requests.length;
    const actions = Array.from({ length: N }, (_, i): ElicitationAction => (i % 2 ? 'DECLINE' : 'ACCEPT'));
    const results = await answerAll(request!, actions);
    const winner = (await s.app.store.getElicitation(request!.id, ALICE.id))!.response!.action;
    results.forEach((result, i) => {
      if (actions[i] === winner) expect(result.ok && result.elicitation.response?.action).toBe(winner);
      else expect(result).toMatchObject({ ok: false, code: 'ALREADY_RESOLVED' });
    });
    expect(s.tools.count('slow_a') - ran).toBe(winner === 'ACCEPT' ? 1 : 0);
    await expect.poll(async () => (await s.app.store.loadTurn(request!.turnId))?.status).toBe('COMPLETED');
    expect(s.model.requests.length - requests).toBe(1);
    await expectConsistent(s, request!.threadId);
  });

  it('both requests of one step answered at once, many times: each tool runs once, the turn resumes once', async () => {
    const [a, b] = await paused(ALICE, 't_slow_a t_slow_b');
    const ran = [s.tools.count('slow_a'), s.tools.count('slow_b')];
    const requests = s.model.requests.length;
    await Promise.all([answerAll(a!, Array(N / 2).fill('ACCEPT')), answerAll(b!, Array(N / 2).fill('ACCEPT'))]);
    await expect.poll(async () => (await s.app.store.loadTurn(a!.turnId))?.status).toBe('COMPLETED');
    expect([s.tools.count('slow_a') - ran[0]!, s.tools.count('slow_b') - ran[1]!]).toEqual([1, 1]);
    expect(s.model.requests.length - requests).toBe(1);
    expect(await toolTextsOf(s, a!.turnId)).toEqual(['edited n1', 'edited n2']);
    await expectConsistent(s, a!.threadId);
  });
});
