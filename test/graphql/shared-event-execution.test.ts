// Subscription events executed once per (event, operation, variables, viewer) and shared by the subscribers over
// WebSocket (src/graphql/shared-event-execution.ts): each subscriber still gets exactly its own result, its own
// replay and its own lifetime. Real server, real graphql-ws clients over real sockets.
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import type { ElicitationRecord } from '../../src/domain/records.js';
import type { Viewer } from '../../src/graphql/builder.js';
import { createInProcessPubSub } from '../../src/events/pubsub.js';
import { useSharedEventExecution } from '../../src/graphql/shared-event-execution.js';
import { attachWebSocket, webSocketShareKey, webSocketViewer } from '../../src/http/websocket.js';
import { dataOf, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { connectWs, observedPubSub, subscribeWs, testUsersAuthenticator, type Received } from '../support/live.js';
import { LEVEL, memoryLog } from '../support/log.js';

const alice = { authorization: 'Bearer alice' };

// With includePending: what is pending first, so that a test knows a subscription is live once its replay arrived.
const ID_STATUS = 'subscription { elicitationRequested(includePending: true) { id status } }';
const DETAILS =
  'subscription Details { elicitationRequested(includePending: true) { id message toolCall { name arguments } turn { id status } } }';
const BY_AGENT =
  'subscription ByAgent($agentId: ID) { elicitationRequested(agentId: $agentId, includePending: true) { id } }';
const BY_THREAD =
  'subscription ByThread($threadId: ID) { elicitationRequested(threadId: $threadId, includePending: true) { first: id } }';
const REQUESTED =
  'subscription Requested($includePending: Boolean) { elicitationRequested(includePending: $includePending) { id status } }';

type Events = Received<{ data?: any; errors?: any[] }>;
const ids = (received: Events, field = 'id') => received.events.map((e) => e.data?.elicitationRequested?.[field]);

describe('shared execution of subscription events over WebSocket', () => {
  let h: Harness;
  let clockCalls = 0;
  const pubsub = observedPubSub();
  // The server's warnings and errors, in memory instead of on stderr: a test that provokes one asserts it and marks
  // it seen; any other fails the test that caused it.
  const log = memoryLog('warn');
  let seenLogLines = 0;
  const clients: Client[] = [];
  const connect = (authorization = alice.authorization) => {
    const client = connectWs(h.url, authorization);
    clients.push(client);
    return client;
  };
  /** Starts a turn of alice's (or of `as`) that pauses on one elicitation; its id. */
  const pause = async (message: string, threadId?: string, as = alice) => {
    const started = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message, threadId } }, as)).startTurn;
    expect(started.turn.status).toBe('PAUSED');
    return {
      id: started.turn.pendingElicitations[0].id as string,
      turnId: started.turn.id as string,
      threadId: started.thread.id as string,
    };
  };
  /** Publishes a copy of a stored elicitation of alice's (or of `owner`) under a new id, as the runner publishes a new one. */
  const publishCopy = async (of: string, changes: Partial<ElicitationRecord> & { id: string }, owner = 'alice') => {
    const record = await h.server.services.store.getElicitation(of, owner);
    h.server.services.pubsub.publish('elicitations', owner, { ...record!, ...changes });
  };

  beforeAll(async () => {
    h = await startHarness({
      authenticator: testUsersAuthenticator,
      pubsub,
      logger: log.logger,
      clock: () => {
        clockCalls++;
        return new Date();
      },
    });
  });
  // Each test's sockets close after it, so that its subscriptions do not take (and execute) the next test's events.
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.dispose()));
    const unseen = log.lines().slice(seenLogLines);
    seenLogLines += unseen.length;
    expect(unseen).toEqual([]);
  });
  afterAll(async () => {
    await h.close();
  });

  it('gives each of many subscribers of one viewer exactly the result of its own selection and variables', async () => {
    const [a, b, c] = [connect(), connect(), connect()];
    // A thread to filter on, from a turn that completes.
    const threadId = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: 'list entities' } }, alice))
      .startTurn.thread.id;
    const idStatus = [subscribeWs(a, ID_STATUS), subscribeWs(b, ID_STATUS), subscribeWs(c, ID_STATUS)];
    const details = [subscribeWs(a, DETAILS), subscribeWs(b, DETAILS)];
    const ofDemo = subscribeWs(c, BY_AGENT, { agentId: 'demo' });
    const ofOtherAgent = subscribeWs(c, BY_AGENT, { agentId: 'no-such-agent' });
    const ofThread = subscribeWs(b, BY_THREAD, { threadId });
    const ofOtherThread = subscribeWs(a, BY_THREAD, { threadId: 'thr_none' });

    const elsewhere = await pause('delete entities 31');
    const here = await pause('delete entities 32', threadId);
    for (const received of [...idStatus, ...details, ofDemo])
      await received.waitFor((e) => e.data?.elicitationRequested.id === here.id);
    await ofThread.waitFor((e) => e.data?.elicitationRequested.first === here.id);

    for (const received of idStatus) {
      expect(received.events).toEqual([
        { data: { elicitationRequested: { id: elsewhere.id, status: 'PENDING' } } },
        { data: { elicitationRequested: { id: here.id, status: 'PENDING' } } },
      ]);
    }
    for (const received of details) {
      expect(received.events).toEqual(
        [elsewhere, here].map((p, i) => ({
          data: {
            elicitationRequested: {
              id: p.id,
              message: expect.stringContaining('Delete entities'),
              toolCall: { name: 'delete_entities', arguments: { ids: [31 + i] } },
              turn: { id: p.turnId, status: 'PAUSED' },
            },
          },
        })),
      );
    }
    expect(ofDemo.events).toEqual([
      { data: { elicitationRequested: { id: elsewhere.id } } },
      { data: { elicitationRequested: { id: here.id } } },
    ]);
    expect(ofThread.events).toEqual([{ data: { elicitationRequested: { first: here.id } } }]);
    expect(ofOtherAgent.events).toEqual([]);
    expect(ofOtherThread.events).toEqual([]);
    for (const received of [...idStatus, ...details, ofDemo, ofOtherAgent, ofThread, ofOtherThread]) received.stop();
  });

  it('executes an event once for all subscribers of the same operation and variables, once more per other operation', async () => {
    const sockets = [connect(), connect(), connect(), connect()];
    const pending = await pause('delete entities 41');
    const same = Array.from({ length: 20 }, (_, i) => subscribeWs(sockets[i % 4]!, ID_STATUS));
    const other = Array.from({ length: 6 }, (_, i) =>
      subscribeWs(sockets[i % 4]!, 'subscription { elicitationRequested(includePending: true) { id status message } }'),
    );
    const all = [...same, ...other];
    // The replay of what is pending: every subscription is live on the server once it arrived.
    for (const received of all)
      await received.waitFor((e) => e.data?.elicitationRequested.id === pending.id, 'the replay');

    clockCalls = 0;
    await publishCopy(pending.id, { id: 'el_shared_once' });
    for (const received of all) await received.waitFor((e) => e.data?.elicitationRequested.id === 'el_shared_once');
    // Elicitation.status reads the clock once per execution: one per operation, not one per subscriber.
    expect(clockCalls).toBe(2);
    for (const received of same)
      expect(received.events.at(-1)).toEqual({
        data: { elicitationRequested: { id: 'el_shared_once', status: 'PENDING' } },
      });
    for (const received of other)
      expect(received.events.at(-1)!.data.elicitationRequested).toMatchObject({
        id: 'el_shared_once',
        message: expect.any(String),
      });
    for (const received of all) received.stop();
  });

  it('replays what is pending to a subscriber that joins later, then the shared events, each once', async () => {
    const [a, b] = [connect(), connect()];
    const early = [subscribeWs(a, ID_STATUS), subscribeWs(b, ID_STATUS), subscribeWs(b, DETAILS)];
    const first = await pause('delete entities 51');
    for (const received of early) await received.waitFor((e) => e.data?.elicitationRequested.id === first.id);

    const late = [subscribeWs(a, ID_STATUS), subscribeWs(b, DETAILS)];
    for (const received of late)
      await received.waitFor((e) => e.data?.elicitationRequested.id === first.id, 'the replay');
    const second = await pause('delete entities 52');
    for (const received of [...early, ...late])
      await received.waitFor((e) => e.data?.elicitationRequested.id === second.id);

    for (const received of [...early, ...late]) {
      // Everything pending was replayed to the late ones (earlier tests' pauses too); each id once, in order.
      const got = ids(received);
      expect(new Set(got).size).toBe(got.length);
      expect(got.slice(-2)).toEqual([first.id, second.id]);
    }
    expect(late[1]!.events.at(-2)!.data.elicitationRequested).toMatchObject({
      id: first.id,
      toolCall: { arguments: { ids: [51] } },
    });
    for (const received of [...early, ...late]) received.stop();
  });

  it('ends only the subscription that is stopped or whose socket closes, not the others of its operation', async () => {
    const [a, b] = [connect(), connect()];
    const pending = await pause('delete entities 61');
    const [onA1, onA2, onB] = [subscribeWs(a, ID_STATUS), subscribeWs(a, ID_STATUS), subscribeWs(b, ID_STATUS)];
    for (const received of [onA1, onA2, onB])
      await received.waitFor((e) => e.data?.elicitationRequested.id === pending.id, 'the replay');

    onA1.stop();
    await publishCopy(pending.id, { id: 'el_after_stop' });
    await onA2.waitFor((e) => e.data?.elicitationRequested.id === 'el_after_stop');
    await onB.waitFor((e) => e.data?.elicitationRequested.id === 'el_after_stop');
    expect(ids(onA1)).not.toContain('el_after_stop');

    await b.dispose();
    await onB.done;
    await publishCopy(pending.id, { id: 'el_after_close' });
    await onA2.waitFor((e) => e.data?.elicitationRequested.id === 'el_after_close');
    expect(ids(onB)).not.toContain('el_after_close');
    onA2.stop();
  });

  it('replays what is pending only to the subscriptions that differ in includePending: true, then shares the new events', async () => {
    const erin = { authorization: 'Bearer erin' };
    const [a, b] = [connect(erin.authorization), connect(erin.authorization)];
    const pending = await pause('delete entities 81', undefined, erin);
    // The same document; only the variable differs. Without includePending nothing tells that a subscription is
    // live (graphql-ws has no acknowledgement): wait until the server listens for all four.
    const listening = pubsub.listening('elicitations', 'erin', 4);
    const withPending = [
      subscribeWs(a, REQUESTED, { includePending: true }),
      subscribeWs(b, REQUESTED, { includePending: true }),
    ];
    const newOnly = [
      subscribeWs(a, REQUESTED, { includePending: false }),
      subscribeWs(b, REQUESTED, { includePending: false }),
    ];
    await listening;
    for (const received of withPending)
      await received.waitFor((e) => e.data?.elicitationRequested.id === pending.id, 'the replay');

    const fresh = await pause('delete entities 82', undefined, erin);
    for (const received of [...withPending, ...newOnly])
      await received.waitFor((e) => e.data?.elicitationRequested.id === fresh.id);
    for (const received of withPending) expect(ids(received)).toEqual([pending.id, fresh.id]);
    for (const received of newOnly) expect(ids(received)).toEqual([fresh.id]);

    // One execution per variables: the subscriptions that differ in includePending do not share, the others do.
    clockCalls = 0;
    await publishCopy(pending.id, { id: 'el_erin_shared' }, 'erin');
    for (const received of [...withPending, ...newOnly]) {
      expect(await received.waitFor((e) => e.data?.elicitationRequested.id === 'el_erin_shared')).toEqual({
        data: { elicitationRequested: { id: 'el_erin_shared', status: 'PENDING' } },
      });
    }
    expect(clockCalls).toBe(2);
    for (const received of withPending) expect(ids(received)).toEqual([pending.id, fresh.id, 'el_erin_shared']);
    for (const received of newOnly) expect(ids(received)).toEqual([fresh.id, 'el_erin_shared']);
    for (const received of [...withPending, ...newOnly]) received.stop();
  });

  it('masks a fault of a shared execution for every subscriber that selected the failing field, and only for them', async () => {
    const [a, b] = [connect(), connect()];
    const pending = await pause('delete entities 71');
    const WITH_MESSAGE = 'subscription { elicitationRequested(includePending: true) { id message } }';
    const withMessage = [subscribeWs(a, WITH_MESSAGE), subscribeWs(b, WITH_MESSAGE)];
    const idsOnly = [subscribeWs(a, ID_STATUS), subscribeWs(b, ID_STATUS)];
    for (const received of [...withMessage, ...idsOnly])
      await received.waitFor((e) => e.data?.elicitationRequested.id === pending.id, 'the replay');

    // A record whose request is missing: Elicitation.message throws a TypeError, a fault, not a GraphQL error.
    await publishCopy(pending.id, { id: 'el_broken', request: null as never });
    for (const received of withMessage) {
      const event = await received.waitFor((e) => e.data === null || e.errors !== undefined, 'the failed event');
      expect(event).toEqual({
        data: null,
        errors: [expect.objectContaining({ message: 'Unexpected error.', path: ['elicitationRequested', 'message'] })],
      });
      expect(JSON.stringify(event)).not.toContain('TypeError');
    }
    // Logged once for all of them, with the fault: the event was executed once.
    const faults = log.lines().slice(seenLogLines);
    expect(faults).toEqual([
      expect.objectContaining({
        level: LEVEL.error,
        msg: 'internal error, masked to the client as "Unexpected error."',
        path: ['elicitationRequested', 'message'],
        err: expect.objectContaining({ type: 'TypeError' }),
      }),
    ]);
    seenLogLines += faults.length;
    for (const received of idsOnly) {
      expect(await received.waitFor((e) => e.data?.elicitationRequested.id === 'el_broken')).toEqual({
        data: { elicitationRequested: { id: 'el_broken', status: 'PENDING' } },
      });
    }
    // The subscriptions go on.
    await publishCopy(pending.id, { id: 'el_after_fault' });
    for (const received of [...withMessage, ...idsOnly])
      await received.waitFor((e) => e.data?.elicitationRequested.id === 'el_after_fault');
    for (const received of [...withMessage, ...idsOnly]) received.stop();
  });
});

describe('useSharedEventExecution', () => {
  it('never shares a result between viewers or variables, even for the same event object and document', async () => {
    // One channel for everyone, and a field that depends on the viewer: only the share key keeps results apart.
    const pubsub = createInProcessPubSub();
    let executions = 0;
    const schema = createSchema<{ viewer: Viewer }>({
      typeDefs:
        'type Query { ok: Boolean } type Event { id: ID! seenBy: String! label(prefix: String!): String! } type Subscription { events: Event! }',
      resolvers: {
        Subscription: {
          events: { subscribe: () => pubsub.subscribe('turn', 'everyone'), resolve: (event: unknown) => event },
        },
        Event: {
          seenBy: (_event: unknown, _args: unknown, context: { viewer: Viewer }) => {
            executions++;
            return context.viewer.id;
          },
          label: (event: { id: string }, args: { prefix: string }) => `${args.prefix}${event.id}`,
        },
      },
    });
    const yoga = createYoga({
      schema,
      maskedErrors: true,
      // Served over WebSocket only here: the viewer is always the one of connection_init.
      context: (initial) => ({ viewer: webSocketViewer(initial)! }),
      plugins: [useSharedEventExecution({ shareKey: webSocketShareKey })],
    });
    const httpServer = createHttpServer(yoga);
    const webSockets = attachWebSocket({
      httpServer,
      yoga: yoga as never,
      authenticator: testUsersAuthenticator,
      path: '/graphql',
      maxPayload: 65_536,
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/graphql`;
    const viewers = ['alice', 'bob', 'admin'];
    const clients = viewers.flatMap((name) => [connectWs(url, `Bearer ${name}`), connectWs(url, `Bearer ${name}`)]);
    try {
      const subscriptions = clients.map((client) => subscribeWs(client, 'subscription { events { id seenBy } }'));
      const LABELLED = 'subscription Labelled($prefix: String!) { events { label(prefix: $prefix) } }';
      const labelled = ['x:', 'y:'].map((prefix) => subscribeWs(clients[0]!, LABELLED, { prefix }));
      // No replay here: publish until every subscription has received one event (each is then live).
      for (let n = 0; [...subscriptions, ...labelled].some((s) => s.events.length === 0) && n < 100; n++) {
        pubsub.publish('turn', 'everyone', { id: `warm-${n}` } as never);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      executions = 0;
      pubsub.publish('turn', 'everyone', { id: 'evt_1' } as never);
      for (const [i, received] of subscriptions.entries()) {
        const event = await received.waitFor((e) => e.data?.events.id === 'evt_1');
        expect(event).toEqual({ data: { events: { id: 'evt_1', seenBy: viewers[Math.floor(i / 2)] } } });
      }
      // Two connections per viewer, one execution per viewer.
      expect(executions).toBe(viewers.length);
      expect(await labelled[0]!.waitFor((e) => e.data?.events.label.endsWith('evt_1'))).toEqual({
        data: { events: { label: 'x:evt_1' } },
      });
      expect(await labelled[1]!.waitFor((e) => e.data?.events.label.endsWith('evt_1'))).toEqual({
        data: { events: { label: 'y:evt_1' } },
      });
      for (const received of [...subscriptions, ...labelled]) received.stop();
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
      await webSockets.close(1_000);
      await new Promise((resolve) => httpServer.close(resolve));
    }
  });
});
