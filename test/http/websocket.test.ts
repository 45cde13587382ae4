// graphql-ws (graphql-transport-ws) on /graphql of the same HTTP server, with a real client over a real socket.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { ScriptedModel } from '../../src/models/scripted.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { CountingToolSource } from '../support/tools.js';
import { connectWs, observedPubSub, subscribeWs, testUsersAuthenticator, wsUrl } from '../support/live.js';
import { LEVEL, memoryLog } from '../support/log.js';

const ELICITATION_REQUESTED = `subscription Requested($threadId: ID, $agentId: ID, $includePending: Boolean) {
  elicitationRequested(threadId: $threadId, agentId: $agentId, includePending: $includePending) {
    id status message toolCall { name arguments } turn { id status }
  }
}`;
const TURN_UPDATED = `subscription Updated($turnId: ID!) {
  turnUpdated(turnId: $turnId) {
    id status text
    messages { role text toolCallId }
    elicitations { id status }
    pendingElicitations { id }
  }
}`;

const alice = { authorization: 'Bearer alice' };
const bob = { authorization: 'Bearer bob' };

describe('graphql-ws on /graphql', () => {
  let h: Harness;
  const pubsub = observedPubSub();
  beforeAll(async () => {
    h = await startHarness({ authenticator: testUsersAuthenticator, pubsub });
  });
  afterAll(async () => {
    await h.close();
  });

  it('runs queries and mutations as the viewer of connectionParams.authorization, through the same plugins', async () => {
    const client = connectWs(h.url, alice.authorization);
    try {
      const viewer = await client.iterate({ query: '{ viewer { id isAdmin } }' }).next();
      expect(viewer.value).toEqual({ data: { viewer: { id: 'alice', isAdmin: false } } });

      // A mutation over the socket: the turn belongs to alice, as over HTTP.
      const started = await client
        .iterate({ query: START_TURN, variables: { input: { agentId: 'demo', message: 'list entities' } } })
        .next();
      const turnId = (started.value as any).data.startTurn.turn.id;
      expect(
        (await h.gql('query($id: ID!) { turn(id: $id) { status } }', { id: turnId }, alice)).data.turn.status,
      ).toBe('COMPLETED');
      expect((await h.gql('query($id: ID!) { turn(id: $id) { status } }', { id: turnId }, bob)).data.turn).toBeNull();

      // Validation is Yoga's: an unknown field is an error of the operation, and the connection stays up.
      const invalid = await client
        .iterate({ query: '{ viewer { nope } }' })
        .next()
        .catch((errors: { message: string }[]) => errors);
      expect((invalid as { message: string }[])[0]!.message).toContain('Cannot query field "nope"');
      // graphql-armor's limits apply as over HTTP: 16 aliases on a subscription are one too many.
      const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: turnUpdated(turnId: "x") { id }`).join(' ');
      const tooMany = await client
        .iterate({ query: `subscription { ${aliases} }` })
        .next()
        .catch((errors: { message: string }[]) => errors);
      expect((tooMany as { message: string }[])[0]!.message).toMatch(/aliases/i);
      const unparsable = await client
        .iterate({ query: '{ viewer { id }' })
        .next()
        .catch((errors: { message: string }[]) => errors);
      expect((unparsable as { message: string }[])[0]!.message).toMatch(/^Syntax Error/);
      expect((await client.iterate({ query: '{ viewer { id } }' }).next()).value).toEqual({
        data: { viewer: { id: 'alice' } },
      });
    } finally {
      await client.dispose();
    }
  });

  it('refuses a connection without valid credentials with close code 4401', async () => {
    for (const authorization of [undefined, 'Bearer', 'Basic alice']) {
      const client = connectWs(h.url, authorization);
      const outcome = await client
        .iterate({ query: '{ viewer { id } }' })
        .next()
        .then(
          () => 'answered',
          (error: { code?: number }) => error.code,
        );
      expect(outcome).toBe(4401);
      await client.dispose();
    }
  });

  it('with includePending, pushes the pause of a turn started right after subscribing, every time', async () => {
    const client = connectWs(h.url, alice.authorization);
    try {
      // No waiting for any acknowledgement: the startTurn request races the subscription to the server, and the
      // catch-up of what is pending covers a subscription that arrives after the pause.
      for (let round = 0; round < 15; round++) {
        const requested = subscribeWs(client, ELICITATION_REQUESTED, { agentId: 'demo', includePending: true });
        const started = dataOf(
          await h.gql(START_TURN, { input: { agentId: 'demo', message: `delete entities ${round + 10}` } }, alice),
        ).startTurn;
        expect(started.turn.status).toBe('PAUSED');
        const [pending] = started.turn.pendingElicitations;
        const event = await requested.waitFor(
          (e) => e.data?.elicitationRequested.id === pending.id,
          `the pause of round ${round}`,
        );
        expect(event.data!.elicitationRequested).toMatchObject({
          status: 'PENDING',
          toolCall: { name: 'delete_entities', arguments: { ids: [round + 10] } },
          turn: { id: started.turn.id, status: 'PAUSED' },
        });
        // Delivered once, even when it was both pending at subscription time and published after it.
        expect(requested.events.filter((e) => e.data?.elicitationRequested.id === pending.id)).toHaveLength(1);
        requested.stop();
        // Answer it, so that the next round's catch-up list does not hold it.
        dataOf(await h.gql(RESOLVE, { input: { elicitationId: pending.id, action: 'DECLINE' } }, alice));
      }
    } finally {
      await client.dispose();
    }
  });

  it('filters elicitationRequested by thread and agent', async () => {
    const client = connectWs(h.url, 'Bearer carol');
    try {
      const first = dataOf(
        await h.gql(
          START_TURN,
          { input: { agentId: 'demo', message: 'list entities' } },
          { authorization: 'Bearer carol' },
        ),
      ).startTurn;
      const threadId = first.thread.id;
      // With includePending (nothing of carol's is pending yet): the turns below may start before these listen.
      const ofThread = subscribeWs(client, ELICITATION_REQUESTED, { threadId, includePending: true });
      const ofOtherAgent = subscribeWs(client, ELICITATION_REQUESTED, {
        agentId: 'no-such-agent',
        includePending: true,
      });
      const all = subscribeWs(client, ELICITATION_REQUESTED, { includePending: true });
      // A pause in another thread first, then one in the watched thread.
      const elsewhere = dataOf(
        await h.gql(
          START_TURN,
          { input: { agentId: 'demo', message: 'delete entities 7' } },
          { authorization: 'Bearer carol' },
        ),
      ).startTurn;
      const here = dataOf(
        await h.gql(
          START_TURN,
          { input: { agentId: 'demo', message: 'delete entities 8', threadId } },
          { authorization: 'Bearer carol' },
        ),
      ).startTurn;
      const hereId = here.turn.pendingElicitations[0].id;
      const elsewhereId = elsewhere.turn.pendingElicitations[0].id;
      await ofThread.waitFor((e) => e.data?.elicitationRequested.id === hereId);
      await all.waitFor((e) => e.data?.elicitationRequested.id === hereId);
      expect(all.events.map((e) => e.data?.elicitationRequested.id)).toEqual([elsewhereId, hereId]);
      expect(ofThread.events.map((e) => e.data?.elicitationRequested.id)).toEqual([hereId]);
      expect(ofOtherAgent.events).toEqual([]);

      // A subscription that starts later with includePending gets what is still pending first, filtered the same
      // way (a reconnecting client misses nothing).
      const late = subscribeWs(client, ELICITATION_REQUESTED, { includePending: true });
      const lateOfThread = subscribeWs(client, ELICITATION_REQUESTED, { threadId, includePending: true });
      await late.waitFor((e) => e.data?.elicitationRequested.id === hereId, 'the catch-up');
      await lateOfThread.waitFor((e) => e.data?.elicitationRequested.id === hereId, 'the catch-up of the thread');
      expect(late.events.map((e) => e.data?.elicitationRequested.id)).toEqual([elsewhereId, hereId]);
      expect(lateOfThread.events.map((e) => e.data?.elicitationRequested.id)).toEqual([hereId]);
    } finally {
      await client.dispose();
    }
  });

  it('delivers only new requests by default; with includePending: true the pending ones first, each once', async () => {
    const dave = { authorization: 'Bearer dave' };
    const client = connectWs(h.url, dave.authorization);
    try {
      const pending = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 21' } }, dave),
      ).startTurn;
      const pendingId = pending.turn.pendingElicitations[0].id;
      // graphql-ws does not acknowledge a subscription: wait until the server listens for all three.
      const listening = pubsub.listening('elicitations', 'dave', 3);
      const newOnly = subscribeWs(client, ELICITATION_REQUESTED);
      const notPending = subscribeWs(client, ELICITATION_REQUESTED, { includePending: false });
      const withPending = subscribeWs(client, ELICITATION_REQUESTED, { includePending: true });
      await listening;
      await withPending.waitFor((e) => e.data?.elicitationRequested.id === pendingId, 'the pending request');

      const fresh = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 22' } }, dave),
      ).startTurn;
      const freshId = fresh.turn.pendingElicitations[0].id;
      for (const received of [newOnly, notPending, withPending]) {
        await received.waitFor((e) => e.data?.elicitationRequested.id === freshId, 'the new request');
      }
      expect(newOnly.events.map((e) => e.data?.elicitationRequested.id)).toEqual([freshId]);
      expect(notPending.events.map((e) => e.data?.elicitationRequested.id)).toEqual([freshId]);
      expect(withPending.events.map((e) => e.data?.elicitationRequested.id)).toEqual([pendingId, freshId]);
      expect(withPending.events[0]!.data!.elicitationRequested).toMatchObject({
        status: 'PENDING',
        toolCall: { name: 'delete_entities', arguments: { ids: [21] } },
        turn: { id: pending.turn.id, status: 'PAUSED' },
      });
      for (const received of [newOnly, notPending, withPending]) received.stop();
    } finally {
      await client.dispose();
    }
  });

  it('pushes the turn on every status change, new message and answer', async () => {
    const model = new ScriptedModel([
      {
        text: null,
        toolCalls: [
          { id: 'a', name: 'delete_entities', arguments: { ids: [1] } },
          { id: 'b', name: 'delete_entities', arguments: { ids: [2] } },
        ],
      },
      { text: 'Both handled.', toolCalls: [] },
    ]);
    // The second run of the tool waits for the test, so the step is seen between its two TOOL messages.
    let finishSecond!: () => void;
    const secondMayFinish = new Promise<void>((resolve) => {
      finishSecond = resolve;
    });
    const tools = new CountingToolSource('demo', [
      {
        name: 'delete_entities',
        run: async (args) => {
          if ((args.ids as number[])[0] === 2) await secondMayFinish;
          return `deleted ${JSON.stringify(args.ids)}`;
        },
      },
    ]);
    const own = await startHarness({
      authenticator: testUsersAuthenticator,
      models: { demo: model },
      toolSources: [tools],
    });
    const client = connectWs(own.url, alice.authorization);
    try {
      const started = dataOf(
        await own.gql(START_TURN, { input: { agentId: 'demo', message: 'delete two' } }, alice),
      ).startTurn;
      expect(started.turn.status).toBe('PAUSED');
      const [first, second] = started.turn.pendingElicitations;
      const updates = subscribeWs(client, TURN_UPDATED, { turnId: started.turn.id });
      // The current state first.
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'PAUSED', 'the current state');

      // One answer of two: still PAUSED, but the elicitation changed.
      dataOf(await own.gql(RESOLVE, { input: { elicitationId: first.id, action: 'ACCEPT' } }, alice));
      const afterFirst = await updates.waitFor(
        (e) => e.data?.turnUpdated.elicitations.some((x: any) => x.id === first.id && x.status === 'ACCEPTED'),
        'the first answer',
      );
      expect(afterFirst.data!.turnUpdated).toMatchObject({
        status: 'PAUSED',
        pendingElicitations: [{ id: second.id }],
      });

      // The last answer resumes the turn (the mutation returns when it stops; do not wait for it here).
      const resolved = own.gql(RESOLVE, { input: { elicitationId: second.id, action: 'ACCEPT' } }, alice);
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'RUNNING', 'RUNNING');
      const oneToolMessage = await updates.waitFor(
        (e) => e.data?.turnUpdated.messages.filter((m: any) => m.role === 'TOOL').length === 1,
        'the first TOOL message',
      );
      expect(oneToolMessage.data!.turnUpdated.messages.at(-1)).toMatchObject({
        role: 'TOOL',
        toolCallId: 'a',
        text: 'deleted [1]',
      });
      finishSecond();
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'COMPLETED', 'COMPLETED');
      expect(dataOf(await resolved).resolveElicitation.turn.status).toBe('COMPLETED');

      const turns = updates.events.map((e) => e.data!.turnUpdated);
      const statuses = turns.map((t) => t.status).filter((s, i, all) => s !== all[i - 1]);
      expect(statuses).toEqual(['PAUSED', 'RUNNING', 'COMPLETED']);
      expect(turns.at(-1)).toMatchObject({ text: 'Both handled.', pendingElicitations: [] });
      expect(
        turns
          .at(-1)
          .messages.filter((m: any) => m.role === 'TOOL')
          .map((m: any) => m.text),
      ).toEqual(['deleted [1]', 'deleted [2]']);
    } finally {
      await client.dispose();
      await own.close();
    }
  });

  it("never sends a subscriber another user's events", async () => {
    const aliceClient = connectWs(h.url, alice.authorization);
    const bobClient = connectWs(h.url, bob.authorization);
    try {
      // With includePending: the turns below may start before these listen.
      const aliceRequests = subscribeWs(aliceClient, ELICITATION_REQUESTED, { includePending: true });
      const bobRequests = subscribeWs(bobClient, ELICITATION_REQUESTED, { includePending: true });
      const alicesTurn = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 4', background: true } }, alice),
      ).startTurn.turn;

      // Bob cannot follow alice's turn: the answer is the one an unknown id gets, and his connection stays.
      const spying = subscribeWs(bobClient, TURN_UPDATED, { turnId: alicesTurn.id });
      const unknown = subscribeWs(bobClient, TURN_UPDATED, { turnId: 'trn_doesnotexist' });
      await spying.done;
      await unknown.done;
      expect(spying.events).toHaveLength(1);
      expect(spying.events[0]!.data ?? null).toBeNull();
      expect(spying.events[0]!.errors!.map((e: any) => [e.message, e.extensions?.code])).toEqual(
        unknown.events[0]!.errors!.map((e: any) => [e.message, e.extensions?.code]),
      );
      expect(spying.events[0]!.errors![0].extensions.code).toBe('NOT_FOUND');

      const alicePause = await aliceRequests.waitFor((e) => e.data?.elicitationRequested.turn.id === alicesTurn.id);
      // Then a pause of bob's own: events reach each socket in publish order, so a leak of alice's would be here first.
      const bobsTurn = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 5' } }, bob),
      ).startTurn.turn;
      await bobRequests.waitFor((e) => e.data?.elicitationRequested.turn.id === bobsTurn.id);
      expect(bobRequests.events.map((e) => e.data?.elicitationRequested.turn.id)).toEqual([bobsTurn.id]);
      expect(aliceRequests.events.map((e) => e.data?.elicitationRequested.id)).not.toContain(
        bobsTurn.pendingElicitations[0].id,
      );
      expect(alicePause.data!.elicitationRequested.toolCall.arguments).toEqual({ ids: [4] });

      // And bob's answer to alice's elicitation is NOT_FOUND; nothing changed.
      const answered = dataOf(
        await h.gql(
          RESOLVE,
          { input: { elicitationId: alicePause.data!.elicitationRequested.id, action: 'ACCEPT' } },
          bob,
        ),
      );
      expect(answered.resolveElicitation.userErrors[0].code).toBe('NOT_FOUND');
    } finally {
      await aliceClient.dispose();
      await bobClient.dispose();
    }
  });

  it('closes a socket that sends a message larger than the limit with 1009, and logs one line for it, not a stack on stderr', async () => {
    const log = memoryLog('info');
    const stderr = vi.spyOn(process.stderr, 'write');
    const consoleError = vi.spyOn(console, 'error');
    const small = await startHarness({ authenticator: testUsersAuthenticator, maxBodyBytes: 4096, logger: log.logger });
    const client = connectWs(small.url, alice.authorization);
    try {
      const outcome = await client
        .iterate({ query: `{ viewer { id } } # ${'x'.repeat(8192)}` })
        .next()
        .then(
          () => 'answered',
          (error: { code?: number }) => error.code,
        );
      expect(outcome).toBe(1009);
      await log.waitFor('websocket closed', { viewerId: 'alice' });

      // Before connection_init is answered the socket has no user yet.
      const socket = new WebSocket(wsUrl(small.url), 'graphql-transport-ws');
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(8192) } }));
      expect(await closed).toBe(1009);
      await log.waitFor('websocket closed', { viewerId: null });

      expect(log.find('websocket message too large')).toEqual([
        expect.objectContaining({ level: LEVEL.warn, viewerId: 'alice', maxBytes: 4096 }),
        expect.objectContaining({ level: LEVEL.warn, viewerId: null, maxBytes: 4096 }),
      ]);
      expect(log.lines().filter((line) => line.level >= LEVEL.error)).toEqual([]);
      expect(consoleError).not.toHaveBeenCalled();
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
      consoleError.mockRestore();
      await client.dispose();
      await small.close();
    }
  });

  it('pings connected clients (keep-alive) and answers only on /graphql', async () => {
    // graphql-ws ends a socket whose pong is later than one interval: 50 ms was missed on a busy run.
    const pinging = await startHarness({ authenticator: testUsersAuthenticator, webSocketKeepAliveMs: 400 });
    try {
      const socket = new WebSocket(wsUrl(pinging.url), 'graphql-transport-ws');
      let pings = 0;
      socket.on('ping', () => {
        pings++;
      });
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      socket.send(JSON.stringify({ type: 'connection_init', payload: alice }));
      // Two pings, or the socket closed (then the count says how many came before).
      await new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (pings >= 2 || socket.readyState !== WebSocket.OPEN) {
            clearInterval(check);
            resolve();
          }
        }, 10);
      });
      expect(pings).toBeGreaterThanOrEqual(2);
      expect(socket.readyState).toBe(WebSocket.OPEN);
      socket.close();

      const elsewhere = new WebSocket(wsUrl(pinging.url).replace('/graphql', '/other'), 'graphql-transport-ws');
      const refused = await new Promise<string>((resolve) => {
        elsewhere.once('open', () => resolve('opened'));
        elsewhere.once('error', (error) => resolve(error.message));
      });
      expect(refused).toMatch(/Unexpected server response: 400/);
    } finally {
      await pinging.close();
    }
  });
});
