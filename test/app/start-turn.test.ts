// startTurn, called directly (no GraphQL): who may start a turn where, and what is refused before anything is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPendingElicitations } from '../../src/app/reads.js';
import { startTurn, type StartTurnInput } from '../../src/app/start-turn.js';
import { ALICE, BOB, callsWhatIsNamed, otherAgent, startApp, type AppScenario } from '../support/app.js';
import { AGENT_ID, deferred } from '../support/scenario.js';

const slow = deferred();
let s: AppScenario;

beforeAll(async () => {
  s = await startApp({
    tools: [
      { name: 'rw' },
      {
        name: 'slow',
        annotations: { readOnlyHint: true },
        run: async () => {
          await slow.promise;
          return 'slow done';
        },
      },
    ],
    script: [callsWhatIsNamed()],
    agents: [otherAgent()],
  });
});
afterAll(async () => {
  slow.resolve();
  await s?.close();
});

const input = (overrides: Partial<StartTurnInput> = {}): StartTurnInput => ({
  agentId: AGENT_ID,
  threadId: null,
  message: 'please t_rw',
  background: false,
  ...overrides,
});

describe('startTurn', () => {
  it("starts the viewer's turn and returns where it stopped: the pause, with its requests as created", async () => {
    const outcome = await startTurn(s.app, ALICE, input());
    if (!outcome.ok) throw new Error(`refused: ${outcome.code}`);
    expect(outcome.turn).toMatchObject({ status: 'PAUSED', ownerId: 'alice', threadId: outcome.thread.id });
    expect(outcome.thread.ownerId).toBe('alice');
    const pending = await listPendingElicitations(s.app, ALICE, { threadId: outcome.thread.id, agentId: null });
    expect(outcome.pausedWith?.map((e) => e.id)).toEqual(pending.items.map((e) => e.id));
    expect(s.tools.count('rw')).toBe(0);
  });

  it('refuses an unknown agent, on agentId, and stores nothing', async () => {
    const before = await s.snapshot();
    expect(await startTurn(s.app, ALICE, input({ agentId: 'nobody' }))).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      of: 'agent',
      field: 'agentId',
    });
    expect(await s.snapshot()).toEqual(before);
  });

  it("answers another user's thread as it answers an unknown one", async () => {
    const own = await startTurn(s.app, ALICE, input({ message: 'hello' }));
    if (!own.ok) throw new Error(`refused: ${own.code}`);
    const before = await s.snapshot();
    const refusal = { ok: false, code: 'NOT_FOUND', of: 'thread', field: 'threadId', reason: 'NO_SUCH_THREAD' };
    expect(await startTurn(s.app, BOB, input({ threadId: own.thread.id, message: 'hello' }))).toEqual(refusal);
    expect(await startTurn(s.app, BOB, input({ threadId: 'thr_unknown', message: 'hello' }))).toEqual(refusal);
    expect(await s.snapshot()).toEqual(before);
  });

  it("refuses the viewer's own thread with another agent", async () => {
    const own = await startTurn(s.app, ALICE, input({ message: 'hello' }));
    if (!own.ok) throw new Error(`refused: ${own.code}`);
    expect(await startTurn(s.app, ALICE, input({ agentId: 'other', threadId: own.thread.id }))).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      of: 'thread',
      field: 'threadId',
      reason: 'OTHER_AGENT',
    });
  });

  it('refuses a thread whose turn is running (THREAD_BUSY) and stores nothing', async () => {
    const running = await startTurn(s.app, ALICE, input({ message: 't_slow', background: true }));
    if (!running.ok) throw new Error(`refused: ${running.code}`);
    expect(running.turn.status).toBe('RUNNING');
    while (s.tools.count('slow') === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const before = await s.snapshot();
    expect(await startTurn(s.app, ALICE, input({ threadId: running.thread.id, message: 'are you done?' }))).toEqual({
      ok: false,
      code: 'THREAD_BUSY',
      field: 'threadId',
    });
    expect(await s.snapshot()).toEqual(before);
  });

  it('checks the message and the key before anything else, each on its own field', async () => {
    const max = s.app.limits.maxMessageLength;
    const cases: [Partial<StartTurnInput>, object][] = [
      [{ message: ' \n ' }, { field: 'message', reason: 'EMPTY' }],
      [{ message: 'a\u0000b' }, { field: 'message', reason: 'UNSTORABLE' }],
      [{ message: 'x'.repeat(max + 1) }, { field: 'message', reason: 'TOO_LONG', max }],
      [{ idempotencyKey: '' }, { field: 'idempotencyKey', reason: 'EMPTY' }],
      [{ idempotencyKey: 'k'.repeat(256) }, { field: 'idempotencyKey', reason: 'TOO_LONG', max: 255 }],
      // Checked before the agent is looked up: the unknown agent is not what is reported.
      [
        { agentId: 'nobody', message: '' },
        { field: 'message', reason: 'EMPTY' },
      ],
    ];
    const before = await s.snapshot();
    for (const [given, refusal] of cases) {
      expect(await startTurn(s.app, ALICE, input(given))).toEqual({ ok: false, code: 'INVALID_INPUT', ...refusal });
    }
    expect(await s.snapshot()).toEqual(before);
    // Characters as a user counts them: an emoji is one, though two UTF-16 units.
    expect((await startTurn(s.app, ALICE, input({ message: '😀'.repeat(max) }))).ok).toBe(true);
  });

  it('returns the first turn for a key sent again, and refuses the key for another message', async () => {
    const first = await startTurn(s.app, ALICE, input({ message: 'hello again', idempotencyKey: 'k-1' }));
    if (!first.ok) throw new Error(`refused: ${first.code}`);
    const again = await startTurn(s.app, ALICE, input({ message: 'hello again', idempotencyKey: 'k-1' }));
    expect(again.ok && again.turn.id).toBe(first.turn.id);
    expect(await startTurn(s.app, ALICE, input({ message: 'something else', idempotencyKey: 'k-1' }))).toEqual({
      ok: false,
      code: 'IDEMPOTENCY_KEY_REUSED',
      field: 'idempotencyKey',
    });
    // Keys are per user: Bob's k-1 is his own.
    const bobs = await startTurn(s.app, BOB, input({ message: 'something else', idempotencyKey: 'k-1' }));
    expect(bobs.ok && bobs.turn.id).not.toBe(first.turn.id);
  });
});
