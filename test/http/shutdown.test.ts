// server.close(): stop accepting, let in-flight requests finish (up to a bound), close WebSockets with 1001 and
// end SSE streams, and leave paused turns as they are on disk.
import { describe, expect, it } from 'vitest';
import { dataOf, START_TURN, startHarness } from '../support/harness.js';
import { connectWs, GatedModel, subscribeFetch, subscribeWs } from '../support/live.js';

const TURN_UPDATED = 'subscription Updated($turnId: ID!) { turnUpdated(turnId: $turnId) { id status } }';
const ELICITATION_REQUESTED = 'subscription { elicitationRequested(includePending: true) { id } }';

describe('graceful shutdown', () => {
  it('finishes the request in flight, closes WebSockets with 1001, completes SSE streams, keeps the pause', async () => {
    const model = new GatedModel();
    const h = await startHarness({ models: { demo: model } });
    // A paused turn, followed over WebSocket and over SSE.
    model.release();
    const paused = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } }))
      .startTurn.turn;
    expect(paused.status).toBe('PAUSED');
    let closeCode: number | undefined;
    const client = connectWs(h.url, undefined, {
      on: {
        closed: (event) => {
          closeCode = (event as { code: number }).code;
        },
      },
    });
    const wsUpdates = subscribeWs(client, TURN_UPDATED, { turnId: paused.id });
    await wsUpdates.waitFor((e) => e.data?.turnUpdated.status === 'PAUSED');
    const sse = await subscribeFetch(h.url, ELICITATION_REQUESTED);
    await sse.waitFor((e) => e.data?.elicitationRequested.id === paused.pendingElicitations[0].id);

    // A request in flight: its model call waits.
    const inFlight = h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 2' } });
    await model.started(2);

    const closing = h.close();
    // The socket is told "going away"; the SSE stream ends cleanly; no new connection is taken.
    const wsOutcome = await wsUpdates.done;
    expect(closeCode).toBe(1001);
    expect((wsOutcome as { code?: number } | undefined)?.code).toBe(1001);
    expect(await sse.done).toBeUndefined();
    await expect(fetch(h.url, { method: 'POST', body: '{}' })).rejects.toThrow();

    // The request in flight still gets its whole answer.
    model.release();
    const answered = dataOf(await inFlight).startTurn;
    expect(answered.turn.status).toBe('PAUSED');
    await closing;

    // A fresh server on the same file: both turns still PAUSED, their elicitations PENDING.
    const again = await startHarness({ database: h.database });
    try {
      for (const turn of [paused, answered.turn]) {
        const reread = dataOf(
          await again.gql('query($id: ID!) { turn(id: $id) { status pendingElicitations { id status } } }', {
            id: turn.id,
          }),
        ).turn;
        expect(reread).toEqual({
          status: 'PAUSED',
          pendingElicitations: [{ id: turn.pendingElicitations[0].id, status: 'PENDING' }],
        });
      }
    } finally {
      await again.close();
    }
  });

  it('does not wait past its bound for a request that does not finish', async () => {
    const model = new GatedModel(); // never released
    const h = await startHarness({ models: { demo: model }, shutdownGraceMs: 200 });
    const inFlight = h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 3' } }).then(
      () => 'answered',
      () => 'cut',
    );
    await model.started(1);
    await h.close();
    expect(await inFlight).toBe('cut');
  });
});
