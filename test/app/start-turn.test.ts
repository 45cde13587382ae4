// startTurn, called directly (no GraphQL): who may start a turn where, and what is refused before anything is stored;
// a start sent again with its idempotency key gets the turn the first one started, as it is now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation } from '../../src/app/answer-elicitation.js';
import { listPendingElicitations, listThreads } from '../../src/app/reads.js';
import { startTurn, type StartTurnInput } from '../../src/app/start-turn.js';
import type { Viewer } from '../../src/app/viewer.js';
import { ALICE, BOB, callsWhatIsNamed, otherAgent, startApp, type AppScenario } from '../support/app.js';
import { AGENT_ID, deferred } from '../support/scenario.js';

const slow = deferred();
/** Holds the turns that call it until a test releases it. */
let held = deferred();
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
      {
        name: 'held',
        annotations: { readOnlyHint: true },
        run: async () => {
          await held.promise;
          return 'held done';
        },
      },
    ],
    script: [callsWhatIsNamed()],
    agents: [otherAgent()],
  });
});
afterAll(async () => {
  slow.resolve();
  held.resolve();
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

describe('startTurn with an idempotency key', () => {
  let users = 0;
  /** A user of the test's own: what they started is all the test's. */
  const someone = (): Viewer => ({ id: `keyed-${++users}`, isAdmin: false, roles: [] });
  const keyed = (viewer: Viewer, idempotencyKey: string, overrides: Partial<StartTurnInput> = {}) =>
    startTurn(s.app, viewer, input({ message: 'hello', idempotencyKey, ...overrides }));

  /** The viewer's threads, each with its turns and its USER messages: what the starts made. */
  async function everything(viewer: Viewer) {
    const threads = (await listThreads(s.app, viewer, { agentId: null, first: 100 })).items;
    return Promise.all(
      threads.map(async (thread) => ({
        thread: thread.id,
        turns: (await s.app.store.listTurns(thread.id)).map((t) => t.id),
        users: (await s.app.store.listThreadMessages(thread.id)).filter((m) => m.role === 'USER').map((m) => m.text),
      })),
    );
  }

  it('ten starts with one key at once: one turn, and every one reports it', async () => {
    const viewer = someone();
    const requests = s.model.requests.length;
    const results = await Promise.all(Array.from({ length: 10 }, () => keyed(viewer, 'req-1')));
    const [first] = results;
    if (!first?.ok) throw new Error(JSON.stringify(first));
    for (const result of results) {
      expect(result.ok && [result.turn.id, result.thread.id]).toEqual([first.turn.id, first.thread.id]);
    }
    expect(await everything(viewer)).toEqual([{ thread: first.thread.id, turns: [first.turn.id], users: ['hello'] }]);
    expect(s.model.requests.length - requests).toBe(1);
  });

  it('a paused first turn: the start again returns it as it is now, PAUSED on the same request, then answered', async () => {
    const viewer = someone();
    const ran = s.tools.count('rw');
    const first = await keyed(viewer, 'req-1', { message: 't_rw' });
    if (!first.ok) throw new Error(JSON.stringify(first));
    expect(first.turn.status).toBe('PAUSED');
    const again = await keyed(viewer, 'req-1', { message: 't_rw' });
    expect(again.ok && [again.turn.id, again.turn.status]).toEqual([first.turn.id, 'PAUSED']);
    const pending = await listPendingElicitations(s.app, viewer, { threadId: first.thread.id, agentId: null });
    expect(pending.items.map((e) => e.id)).toEqual(first.pausedWith?.map((e) => e.id));
    await answerElicitation(s.app, viewer, { elicitationId: first.pausedWith![0]!.id, action: 'ACCEPT' });
    const later = await keyed(viewer, 'req-1', { message: 't_rw' });
    expect(later.ok && [later.turn.id, later.turn.status]).toEqual([first.turn.id, 'COMPLETED']);
    expect(s.tools.count('rw') - ran).toBe(1);
    expect((await everything(viewer))[0]!.users).toEqual(['t_rw']);
  });

  it('in the background: the start again returns the turn RUNNING as it is now, without waiting', async () => {
    const viewer = someone();
    held = deferred();
    const ran = s.tools.count('held');
    const first = await keyed(viewer, 'req-1', { message: 't_held', background: true });
    if (!first.ok) throw new Error(JSON.stringify(first));
    expect(first.turn.status).toBe('RUNNING');
    const again = await keyed(viewer, 'req-1', { message: 't_held', background: true });
    expect(again.ok && [again.turn.id, again.turn.status]).toEqual([first.turn.id, 'RUNNING']);
    held.resolve();
    await expect.poll(async () => (await s.app.store.loadTurn(first.turn.id))?.status).toBe('COMPLETED');
    expect(s.tools.count('held') - ran).toBe(1);
  });

  it('the same key with another message, agent or thread: IDEMPOTENCY_KEY_REUSED, and nothing is written', async () => {
    const viewer = someone();
    const first = await keyed(viewer, 'req-1');
    if (!first.ok) throw new Error(JSON.stringify(first));
    const before = await s.snapshot();
    for (const other of [{ message: 'something else' }, { threadId: first.thread.id }, { agentId: 'other' }]) {
      expect(await keyed(viewer, 'req-1', other)).toEqual({
        ok: false,
        code: 'IDEMPOTENCY_KEY_REUSED',
        field: 'idempotencyKey',
      });
    }
    expect(await s.snapshot()).toEqual(before);
  });

  it("keys are per user: another user's same key starts that user's own turn and sees nothing of the first", async () => {
    const [ann, ben] = [someone(), someone()];
    const ofAnn = await keyed(ann, 'req-1');
    const ofBen = await keyed(ben, 'req-1');
    if (!ofAnn.ok || !ofBen.ok) throw new Error(JSON.stringify([ofAnn, ofBen]));
    expect([ofBen.turn.id, ofBen.thread.id]).not.toEqual([ofAnn.turn.id, ofAnn.thread.id]);
    for (const [viewer, own] of [
      [ann, ofAnn],
      [ben, ofBen],
    ] as const) {
      const again = await keyed(viewer, 'req-1');
      expect(again.ok && again.turn.id).toBe(own.turn.id);
      expect((await everything(viewer)).map((t) => t.thread)).toEqual([own.thread.id]);
    }
  });

  it('a key that is not text is refused like an empty one; 255 characters (not UTF-16 units) are the longest', async () => {
    const viewer = someone();
    expect(await keyed(viewer, 'a\u0000b')).toEqual({
      ok: false,
      code: 'INVALID_INPUT',
      field: 'idempotencyKey',
      reason: 'UNSTORABLE',
    });
    expect(await everything(viewer)).toEqual([]);
    expect((await keyed(viewer, '🔑'.repeat(255))).ok).toBe(true);
  });
});
