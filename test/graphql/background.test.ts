// startTurn(input: {background: true}): the mutation returns with the turn RUNNING; the loop goes on in the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { connectWs, GatedModel, subscribeWs } from '../support/live.js';

const TURN =
  'query Turn($id: ID!) { turn(id: $id) { id status iterations text messages { role } pendingElicitations { id } } }';
const TURN_UPDATED =
  'subscription Updated($turnId: ID!) { turnUpdated(turnId: $turnId) { id status iterations messages { role } } }';

async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('background turns', () => {
  let h: Harness;
  let model: GatedModel;
  beforeAll(async () => {
    model = new GatedModel();
    h = await startHarness({ models: { demo: model } });
  });
  afterAll(async () => {
    for (let i = 0; i < 10; i++) model.release();
    await h.close();
  });

  it('returns RUNNING at once, refuses a second turn with THREAD_BUSY, and goes on to the pause', async () => {
    // The model does not answer until the test says so: the mutation must return anyway.
    const started = dataOf(
      await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1 and 2', background: true } }),
    ).startTurn;
    expect(started.userErrors).toEqual([]);
    expect(started.turn).toMatchObject({ status: 'RUNNING', iterations: 0, pendingElicitations: [] });
    expect(started.turn.messages.map((m: any) => m.role)).toEqual(['USER']);
    const turnId = started.turn.id;
    const threadId = started.thread.id;
    await model.started(1);

    const client = connectWs(h.url);
    try {
      const updates = subscribeWs(client, TURN_UPDATED, { turnId });
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'RUNNING', 'the current state');

      // Polling shows it RUNNING; another message on the thread is refused, and changes nothing.
      expect(dataOf(await h.gql(TURN, { id: turnId })).turn.status).toBe('RUNNING');
      for (const background of [false, true]) {
        const busy = dataOf(
          await h.gql(START_TURN, { input: { agentId: 'demo', threadId, message: 'list entities', background } }),
        ).startTurn;
        expect(busy).toMatchObject({ turn: null, userErrors: [{ code: 'THREAD_BUSY', field: ['input', 'threadId'] }] });
      }
      expect(model.calls).toBe(1);

      model.release();
      const paused = await pollUntil(
        async () => dataOf(await h.gql(TURN, { id: turnId })).turn,
        (turn) => turn.status === 'PAUSED',
        'PAUSED',
      );
      expect(paused).toMatchObject({ iterations: 1, pendingElicitations: [{ id: expect.any(String) }] });
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'PAUSED', 'PAUSED pushed');

      // The answer resumes it; the model waits again, so the turn is RUNNING (and busy) until released.
      const resolving = h.gql(RESOLVE, {
        input: { elicitationId: paused.pendingElicitations[0].id, action: 'ACCEPT' },
      });
      await model.started(2);
      expect(dataOf(await h.gql(TURN, { id: turnId })).turn.status).toBe('RUNNING');
      const busy = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', threadId, message: 'list entities', background: true } }),
      ).startTurn;
      expect(busy.userErrors[0].code).toBe('THREAD_BUSY');
      model.release();
      expect(dataOf(await resolving).resolveElicitation.turn.status).toBe('COMPLETED');
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'COMPLETED', 'COMPLETED pushed');
      expect(updates.events.map((e) => e.data!.turnUpdated.status).filter((s, i, all) => s !== all[i - 1])).toEqual([
        'RUNNING',
        'PAUSED',
        'RUNNING',
        'COMPLETED',
      ]);

      // Once it stopped, the thread takes a new turn.
      // (Two model calls: the read-only list tool runs without asking, then the model sums up.)
      model.release();
      model.release();
      const next = h.gql(START_TURN, { input: { agentId: 'demo', threadId, message: 'list entities' } });
      expect(dataOf(await next).startTurn.turn.status).toBe('COMPLETED');
    } finally {
      await client.dispose();
    }
  });
});
