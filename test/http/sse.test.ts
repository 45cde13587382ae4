// Subscriptions over Server-Sent Events (Yoga's own, on /graphql): graphql-sse's client in distinct connections
// mode, and plain fetch with Accept: text/event-stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { connectSse, subscribeFetch, subscribeSse, testUsersAuthenticator } from '../support/live.js';

const ELICITATION_REQUESTED = `subscription Requested($threadId: ID, $agentId: ID, $includePending: Boolean) {
  elicitationRequested(threadId: $threadId, agentId: $agentId, includePending: $includePending) { id status toolCall { name arguments } turn { id status } }
}`;
const TURN_UPDATED =
  'subscription Updated($turnId: ID!) { turnUpdated(turnId: $turnId) { id status text messages { role text } } }';

const alice = { authorization: 'Bearer alice' };
const bob = { authorization: 'Bearer bob' };

describe('subscriptions over SSE', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ authenticator: testUsersAuthenticator });
  });
  afterAll(async () => {
    await h.close();
  });

  it('streams a turn from pause to completion to a graphql-sse client', async () => {
    const client = connectSse(h.url, alice.authorization);
    try {
      // graphql-sse's client does not tell when the stream is open: includePending covers a pause that comes first.
      const requested = subscribeSse(client, ELICITATION_REQUESTED, { agentId: 'demo', includePending: true });
      const started = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 2' } }, alice),
      ).startTurn;
      const [pending] = started.turn.pendingElicitations;
      const pause = await requested.waitFor((e) => e.data?.elicitationRequested.id === pending.id, 'the pause');
      expect(pause.data!.elicitationRequested).toMatchObject({
        status: 'PENDING',
        toolCall: { name: 'delete_entities', arguments: { ids: [2] } },
      });
      requested.stop();

      const updates = subscribeSse(client, TURN_UPDATED, { turnId: started.turn.id });
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'PAUSED', 'the current state');
      dataOf(await h.gql(RESOLVE, { input: { elicitationId: pending.id, action: 'ACCEPT' } }, alice));
      const completed = await updates.waitFor((e) => e.data?.turnUpdated.status === 'COMPLETED', 'COMPLETED');
      expect(completed.data!.turnUpdated.text).toContain('Deleted 1 entity (2)');
      updates.stop();
    } finally {
      client.dispose();
    }
  });

  it('sees the pause of a turn started once the stream is open (fetch, text/event-stream)', async () => {
    const requested = await subscribeFetch(h.url, ELICITATION_REQUESTED, {}, alice);
    try {
      // The response headers are the server's acknowledgement: the subscription is listening by then.
      expect(requested.status).toBe(200);
      expect(requested.contentType).toMatch(/^text\/event-stream/);
      const started = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 3' } }, alice),
      ).startTurn;
      const id = started.turn.pendingElicitations[0].id;
      await requested.waitFor((e) => e.data?.elicitationRequested.id === id, 'the pause');
      dataOf(await h.gql(RESOLVE, { input: { elicitationId: id, action: 'DECLINE' } }, alice));
    } finally {
      requested.stop();
    }
  });

  it('streams only new requests by default; with includePending: true the pending ones first, each once', async () => {
    const dave = { authorization: 'Bearer dave' };
    const pending = dataOf(
      await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 21' } }, dave),
    ).startTurn;
    const pendingId = pending.turn.pendingElicitations[0].id;
    // Once the headers are in, each stream listens.
    const newOnly = await subscribeFetch(h.url, ELICITATION_REQUESTED, {}, dave);
    const withPending = await subscribeFetch(h.url, ELICITATION_REQUESTED, { includePending: true }, dave);
    try {
      await withPending.waitFor((e) => e.data?.elicitationRequested.id === pendingId, 'the pending request');
      const fresh = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 22' } }, dave),
      ).startTurn;
      const freshId = fresh.turn.pendingElicitations[0].id;
      await newOnly.waitFor((e) => e.data?.elicitationRequested.id === freshId, 'the new request');
      await withPending.waitFor((e) => e.data?.elicitationRequested.id === freshId, 'the new request');
      expect(newOnly.events.map((e) => e.data?.elicitationRequested.id)).toEqual([freshId]);
      expect(withPending.events.map((e) => e.data?.elicitationRequested.id)).toEqual([pendingId, freshId]);
      expect(newOnly.events[0]!.data!.elicitationRequested).toMatchObject({
        status: 'PENDING',
        toolCall: { name: 'delete_entities', arguments: { ids: [22] } },
        turn: { id: fresh.turn.id, status: 'PAUSED' },
      });
    } finally {
      newOnly.stop();
      withPending.stop();
    }
  });

  it("never streams another user's events", async () => {
    const bobRequests = await subscribeFetch(h.url, ELICITATION_REQUESTED, {}, bob);
    try {
      const alicesTurn = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 4' } }, alice),
      ).startTurn.turn;
      // Following alice's turn: the same answer as an unknown id, and the stream ends.
      const spying = await subscribeFetch(h.url, TURN_UPDATED, { turnId: alicesTurn.id }, bob);
      const unknown = await subscribeFetch(h.url, TURN_UPDATED, { turnId: 'trn_unknown' }, bob);
      await spying.done;
      await unknown.done;
      expect(spying.events).toEqual(unknown.events);
      expect(spying.events).toHaveLength(1);
      expect(spying.events[0]!.errors![0]).toMatchObject({
        message: 'No turn with this id.',
        extensions: { code: 'NOT_FOUND' },
      });

      const bobsTurn = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 5' } }, bob),
      ).startTurn.turn;
      await bobRequests.waitFor((e) => e.data?.elicitationRequested.turn.id === bobsTurn.id, "bob's own pause");
      expect(bobRequests.events.map((e) => e.data?.elicitationRequested.turn.id)).toEqual([bobsTurn.id]);
    } finally {
      bobRequests.stop();
    }
  });
});
