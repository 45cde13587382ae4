// Two users (and an admin) with real bearer tokens against every query, mutation and subscription: another
// user's ids answer exactly as unknown ids do, nothing of theirs leaks, and nothing of theirs changes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { schema } from '../../src/graphql/schema.js';
import { DbObserver } from '../support/db-snapshot.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { connectWs, subscribeFetch, subscribeWs } from '../support/live.js';

const TOKENS = {
  alice: 'alice-token-4c1d2e3f4a5b6c7d',
  bob: 'bob-token-9e8d7c6b5a4f3e2d',
  root: 'root-token-0f1e2d3c4b5a6978',
};
const as = (user: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[user]}` });
const unknownId = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

const ELICITATION_FIELDS = `id status message requestedSchema _meta mcpRequest toolCall { name toolId arguments } response { action content }
  resolvedBy resolvedAt resolution createdAt expiresAt turn { id status thread { id messages { id text } } }`;
const TURN_FIELDS = `id status text error iterations messages { id role text } elicitations { id status } pendingElicitations { id }
  thread { id turns { id } messages { id } agent { id } }`;
const THREAD_FIELDS = `id createdAt agent { id } messages { id role text } turns { id status elicitations { id } }`;

/** Every root query with the arguments that could name another user's objects; `ids` fills them. */
/** Root queries only administrators may run (tested below on their own). */
const ADMIN_ONLY_QUERIES = ['webhookDeliveries'];

const QUERIES: Record<
  string,
  (ids: { thread: string; turn: string; elicitation: string }) => { query: string; variables?: Record<string, unknown> }
> = {
  node: (ids) => ({
    query: `query($t: ID!, $u: ID!, $e: ID!) {
      t: node(id: $t) { id ... on Thread { ${THREAD_FIELDS} } }
      u: node(id: $u) { id ... on Turn { ${TURN_FIELDS} } }
      e: node(id: $e) { id ... on Elicitation { ${ELICITATION_FIELDS} } }
    }`,
    variables: { t: ids.thread, u: ids.turn, e: ids.elicitation },
  }),
  thread: (ids) => ({
    query: `query($id: ID!) { thread(id: $id) { ${THREAD_FIELDS} } }`,
    variables: { id: ids.thread },
  }),
  turn: (ids) => ({ query: `query($id: ID!) { turn(id: $id) { ${TURN_FIELDS} } }`, variables: { id: ids.turn } }),
  elicitation: (ids) => ({
    query: `query($id: ID!) { elicitation(id: $id) { ${ELICITATION_FIELDS} } }`,
    variables: { id: ids.elicitation },
  }),
  threads: () => ({
    query: `{ threads(first: 100) { edges { node { ${THREAD_FIELDS} } } pageInfo { hasNextPage } } }`,
  }),
  pendingElicitations: (ids) => ({
    query: `query($t: ID) {
      all: pendingElicitations(first: 200) { totalCount edges { node { ${ELICITATION_FIELDS} } } }
      ofThread: pendingElicitations(threadId: $t) { totalCount edges { node { id } } }
      ofAgent: pendingElicitations(agentId: "demo") { totalCount edges { node { id } } }
    }`,
    variables: { t: ids.thread },
  }),
  elicitations: (ids) => ({
    query: `query($t: ID) {
      all: elicitations(first: 200) { totalCount edges { node { ${ELICITATION_FIELDS} } } }
      ofThread: elicitations(threadId: $t) { totalCount edges { node { id } } }
      answered: elicitations(status: [ACCEPTED, DECLINED, CANCELLED, EXPIRED]) { totalCount edges { node { id resolvedBy } } }
    }`,
    variables: { t: ids.thread },
  }),
  viewer: () => ({ query: '{ viewer { id isAdmin } }' }),
  agents: () => ({
    query:
      '{ agents { id name requireToolConfirmation pauseTtlSeconds tools { toolId confirmation requiresConfirmation } } }',
  }),
  agent: () => ({ query: '{ agent(id: "demo") { id name requireToolConfirmation } }' }),
  approvalGrants: (ids) => ({
    query: `query($t: ID) {
      active: approvalGrants { edges { node { id scope toolId state thread { id } elicitation { id } uses { toolCallId } } } }
      all: approvalGrants(includeInactive: true, agentId: "demo") { edges { node { id } } }
      ofThread: approvalGrants(threadId: $t, includeInactive: true) { edges { node { id } } }
    }`,
    variables: { t: ids.thread },
  }),
};

describe('isolation between users', () => {
  let h: Harness;
  let db: DbObserver;
  /** Alice's objects: a paused turn with its pending elicitation, and an answered one. */
  const alice = {
    thread: '',
    turn: '',
    elicitation: '',
    answered: '',
    otherThread: '',
    grantThread: '',
    accepted: '',
    grant: '',
  };
  let bobThread = '';

  const gql = (user: keyof typeof TOKENS, query: string, variables?: Record<string, unknown>) =>
    h.gql(query, variables, as(user));
  const unknown = () => ({ thread: unknownId('thr'), turn: unknownId('trn'), elicitation: unknownId('elc') });

  beforeAll(async () => {
    h = await startHarness({
      config: {
        ...demoConfig,
        auth: {
          tokens: [
            { token: TOKENS.alice, user: 'alice', admin: false },
            { token: TOKENS.bob, user: 'bob', admin: false },
            { token: TOKENS.root, user: 'root', admin: true },
          ],
        },
      },
    });
    db = new DbObserver(h.database);
    // An answered elicitation first (for the audit fields), then a paused turn in its own thread.
    const declined = dataOf(
      await gql('alice', START_TURN, { input: { agentId: 'demo', message: 'delete entities 5' } }),
    ).startTurn;
    alice.otherThread = declined.thread.id;
    alice.answered = declined.turn.pendingElicitations[0].id;
    expect(
      dataOf(
        await gql('alice', RESOLVE, {
          input: { elicitationId: alice.answered, action: 'DECLINE', content: { instructions: 'keep it' } },
        }),
      ).resolveElicitation.userErrors,
    ).toEqual([]);
    const paused = dataOf(
      await gql('alice', START_TURN, { input: { agentId: 'demo', message: 'delete entities 1, 2 and 3' } }),
    ).startTurn;
    expect(paused.turn.status).toBe('PAUSED');
    Object.assign(alice, {
      thread: paused.thread.id,
      turn: paused.turn.id,
      elicitation: paused.turn.pendingElicitations[0].id,
    });
    // A remembered approval of Alice's (approvalGrants): none of it may reach Bob.
    const remembered = dataOf(
      await gql('alice', START_TURN, { input: { agentId: 'demo', message: 'delete entities 7' } }),
    ).startTurn;
    const grantAnswer = `mutation($input: ResolveElicitationInput!) {
      resolveElicitation(input: $input) { elicitation { grant { id } } userErrors { code } } }`;
    const granted = dataOf(
      await gql('alice', grantAnswer, {
        input: {
          elicitationId: remembered.turn.pendingElicitations[0].id,
          action: 'ACCEPT',
          remember: { scope: 'THREAD', ttlSeconds: 3600 },
        },
      }),
    ).resolveElicitation;
    expect(granted.userErrors).toEqual([]);
    expect(granted.elicitation.grant.id).toMatch(/^grt_/);
    Object.assign(alice, {
      grantThread: remembered.thread.id,
      accepted: remembered.turn.pendingElicitations[0].id,
      grant: granted.elicitation.grant.id,
    });
    bobThread = dataOf(await gql('bob', START_TURN, { input: { agentId: 'demo', message: 'list entities' } })).startTurn
      .thread.id;
  });
  afterAll(async () => {
    await db.close();
    await h.close();
  });

  it('covers every root query of the schema', () => {
    expect([...Object.keys(QUERIES), ...ADMIN_ONLY_QUERIES].sort()).toEqual(
      Object.keys(schema.getQueryType()!.getFields()).sort(),
    );
  });

  // Webhooks (docs/webhooks.md): the outbox is for administrators only; it names no user's objects to anyone else.
  it('webhookDeliveries: FORBIDDEN for alice and bob, with no data; an admin may', async () => {
    const before = await db.snapshot();
    const query = '{ webhookDeliveries { totalCount edges { node { id payload } } } }';
    for (const user of ['alice', 'bob'] as const) {
      const refused = await gql(user, query);
      expect(refused.data).toEqual({ webhookDeliveries: null });
      expect(refused.errors).toEqual([
        expect.objectContaining({
          message: 'Only administrators may list webhook deliveries.',
          extensions: { code: 'FORBIDDEN' },
        }),
      ]);
    }
    expect(await db.snapshot()).toEqual(before);
    expect(dataOf(await gql('root', query)).webhookDeliveries).toEqual({ totalCount: 0, edges: [] });
  });

  it.each(Object.keys(QUERIES))(
    "%s: bob gets for alice's ids exactly what he gets for unknown ids, and nothing of hers",
    async (name) => {
      const before = await db.snapshot();
      const forAlice = await gql('bob', QUERIES[name]!(alice).query, QUERIES[name]!(alice).variables);
      const forUnknown = await gql('bob', QUERIES[name]!(unknown()).query, QUERIES[name]!(unknown()).variables);
      expect(forAlice.errors).toBeUndefined();
      expect(forAlice).toEqual(forUnknown);
      const text = JSON.stringify(forAlice);
      for (const id of [alice.thread, alice.turn, alice.elicitation, alice.answered, alice.otherThread])
        expect(text).not.toContain(id);
      expect(text).not.toContain('alice');
      expect(await db.snapshot()).toEqual(before);
    },
  );

  it('alice sees her own through the same queries (the queries above can find things)', async () => {
    const own = dataOf(await gql('alice', QUERIES.node!(alice).query, QUERIES.node!(alice).variables));
    expect(own.t.id).toBe(alice.thread);
    expect(own.u).toMatchObject({ id: alice.turn, status: 'PAUSED', thread: { id: alice.thread } });
    expect(own.e).toMatchObject({ id: alice.elicitation, status: 'PENDING', turn: { id: alice.turn } });
    const pending = dataOf(
      await gql('alice', QUERIES.pendingElicitations!(alice).query, QUERIES.pendingElicitations!(alice).variables),
    );
    expect(pending.ofThread.edges.map((e: any) => e.node.id)).toEqual([alice.elicitation]);
    const audit = dataOf(
      await gql('alice', QUERIES.elicitations!(alice).query, QUERIES.elicitations!(alice).variables),
    );
    expect(audit.answered.edges).toEqual([
      { node: { id: alice.answered, resolvedBy: 'alice' } },
      { node: { id: alice.accepted, resolvedBy: 'alice' } },
    ]);
    const threads = dataOf(await gql('alice', QUERIES.threads!(alice).query)).threads.edges.map((e: any) => e.node.id);
    expect(threads.sort()).toEqual([alice.thread, alice.otherThread, alice.grantThread].sort());
    const grants = dataOf(await gql('alice', QUERIES.approvalGrants!(alice).query, { t: alice.grantThread }));
    expect(grants.active.edges).toEqual([
      {
        node: {
          id: alice.grant,
          scope: 'THREAD',
          toolId: 'demo:delete_entities',
          state: 'ACTIVE',
          thread: { id: alice.grantThread },
          elicitation: { id: alice.accepted },
          uses: [],
        },
      },
    ]);
    expect(grants.ofThread.edges).toEqual([{ node: { id: alice.grant } }]);
    expect(threads).not.toContain(bobThread);
  });

  describe('mutations', () => {
    it("startTurn on alice's thread: NOT_FOUND exactly as for an unknown thread; her paused turn is not superseded", async () => {
      const before = await db.snapshot();
      const mutate = (threadId: string) =>
        gql('bob', START_TURN, { input: { agentId: 'demo', threadId, message: 'delete entities 4' } });
      const forAlice = dataOf(await mutate(alice.thread)).startTurn;
      const forUnknown = dataOf(await mutate(unknownId('thr'))).startTurn;
      expect(forAlice).toEqual(forUnknown);
      expect(forAlice).toEqual({
        turn: null,
        thread: null,
        userErrors: [{ code: 'NOT_FOUND', message: 'No thread with this id.', field: ['input', 'threadId'] }],
      });
      expect(await db.snapshot()).toEqual(before);
      expect(
        dataOf(await gql('alice', 'query($id: ID!) { turn(id: $id) { status } }', { id: alice.turn })).turn.status,
      ).toBe('PAUSED');
    });

    it.each(['ACCEPT', 'DECLINE', 'CANCEL'])(
      "resolveElicitation %s of alice's: NOT_FOUND exactly as for an unknown id; nothing runs",
      async (action) => {
        const before = await db.snapshot();
        const mutate = (elicitationId: string) => gql('bob', RESOLVE, { input: { elicitationId, action } });
        const forAlice = dataOf(await mutate(alice.elicitation)).resolveElicitation;
        const forUnknown = dataOf(await mutate(unknownId('elc'))).resolveElicitation;
        expect(forAlice).toEqual(forUnknown);
        expect(forAlice).toEqual({
          elicitation: null,
          turn: null,
          userErrors: [
            { code: 'NOT_FOUND', message: 'No elicitation with this id.', field: ['input', 'elicitationId'] },
          ],
        });
        // Nothing ran: the entities are still there, the elicitation still waits for alice.
        expect(await db.snapshot()).toEqual(before);
        expect(
          dataOf(
            await gql('alice', 'query($id: ID!) { elicitation(id: $id) { status resolvedBy } }', {
              id: alice.elicitation,
            }),
          ).elicitation,
        ).toEqual({ status: 'PENDING', resolvedBy: null });
      },
    );

    it("resolveElicitation of alice's answered one: NOT_FOUND for bob, not ALREADY_RESOLVED", async () => {
      const result = dataOf(
        await gql('bob', RESOLVE, { input: { elicitationId: alice.answered, action: 'ACCEPT' } }),
      ).resolveElicitation;
      expect(result.userErrors).toEqual([
        { code: 'NOT_FOUND', message: 'No elicitation with this id.', field: ['input', 'elicitationId'] },
      ]);
    });

    it('updateAgent: FORBIDDEN for alice and bob, whatever the agent; an admin may', async () => {
      const before = await db.snapshot();
      for (const user of ['alice', 'bob'] as const) {
        for (const agentId of ['demo', 'no-such-agent']) {
          const result = dataOf(
            await gql(
              user,
              `mutation($input: UpdateAgentInput!) { updateAgent(input: $input) { agent { id } userErrors { code message field } } }`,
              { input: { agentId, requireToolConfirmation: false } },
            ),
          ).updateAgent;
          expect(result).toEqual({
            agent: null,
            userErrors: [{ code: 'FORBIDDEN', message: 'Only administrators may change agents.', field: null }],
          });
        }
      }
      expect(await db.snapshot()).toEqual(before);
      const byAdmin = dataOf(
        await gql(
          'root',
          `mutation { updateAgent(input: {agentId: "demo", pauseTtlSeconds: 7200}) { agent { pauseTtlSeconds } userErrors { code } } }`,
        ),
      ).updateAgent;
      expect(byAdmin).toEqual({ agent: { pauseTtlSeconds: 7200 }, userErrors: [] });
      expect((await db.snapshot()).digest).not.toBe(before.digest);
    });

    it("the payloads of bob's own turns hold only his objects", async () => {
      const started = dataOf(
        await gql('bob', START_TURN, { input: { agentId: 'demo', threadId: bobThread, message: 'delete entities 4' } }),
      ).startTurn;
      expect(started.turn.status).toBe('PAUSED');
      const text = JSON.stringify(started);
      for (const id of [alice.thread, alice.turn, alice.elicitation]) expect(text).not.toContain(id);
      const resolved = dataOf(
        await gql('bob', RESOLVE, {
          input: { elicitationId: started.turn.pendingElicitations[0].id, action: 'DECLINE' },
        }),
      ).resolveElicitation;
      expect(resolved.userErrors).toEqual([]);
      expect(resolved.elicitation.resolvedBy).toBe('bob');
      expect(JSON.stringify(resolved)).not.toContain(alice.elicitation);
    });
  });

  describe('subscriptions', () => {
    const TURN_UPDATED = `subscription($id: ID!) { turnUpdated(turnId: $id) { ${TURN_FIELDS} } }`;
    const REQUESTED = `subscription($t: ID, $a: ID, $p: Boolean) { elicitationRequested(threadId: $t, agentId: $a, includePending: $p) { ${ELICITATION_FIELDS} } }`;

    it("turnUpdated on alice's turn: the same NOT_FOUND error as an unknown turn, over SSE and WebSocket", async () => {
      const sse = async (id: string) => {
        const received = await subscribeFetch(h.url, TURN_UPDATED, { id }, as('bob'));
        await received.done;
        return received.events;
      };
      const forAlice = await sse(alice.turn);
      expect(forAlice).toEqual(await sse(unknownId('trn')));
      expect(forAlice).toEqual([
        { errors: [expect.objectContaining({ message: 'No turn with this id.', extensions: { code: 'NOT_FOUND' } })] },
      ]);

      const client = connectWs(h.url, as('bob').authorization);
      try {
        const ws = async (id: string) => {
          const received = subscribeWs(client, TURN_UPDATED, { id });
          const ended = await received.done;
          return { events: received.events, ended };
        };
        const wsAlice = await ws(alice.turn);
        expect(wsAlice).toEqual(await ws(unknownId('trn')));
        expect(JSON.stringify(wsAlice)).toContain('No turn with this id.');
        expect(JSON.stringify(wsAlice)).not.toContain(alice.thread);
      } finally {
        await client.dispose();
      }
    });

    it("elicitationRequested: bob never receives alice's requests, pending or new, even filtered on her thread", async () => {
      // With includePending: the catch-up of what is pending (alice has a pending request) is scoped too.
      const client = connectWs(h.url, as('bob').authorization);
      const bobAll = subscribeWs(client, REQUESTED, { p: true });
      const bobOnHerThread = subscribeWs(client, REQUESTED, { t: alice.thread, p: true });
      const bobSse = await subscribeFetch(h.url, REQUESTED, { p: true }, as('bob'));
      const aliceClient = connectWs(h.url, as('alice').authorization);
      const aliceAll = subscribeWs(aliceClient, REQUESTED, { t: alice.otherThread, p: true });
      try {
        // A new pause of alice's, then one of bob's: if alice's leaked, bob would see it first.
        const hers = dataOf(
          await gql('alice', START_TURN, {
            input: { agentId: 'demo', threadId: alice.otherThread, message: 'delete entities 4' },
          }),
        ).startTurn;
        const herId = hers.turn.pendingElicitations[0].id;
        await aliceAll.waitFor((e) => e.data?.elicitationRequested.id === herId, "alice's own request");
        const his = dataOf(
          await gql('bob', START_TURN, {
            input: { agentId: 'demo', threadId: bobThread, message: 'delete entities 5' },
          }),
        ).startTurn;
        const hisId = his.turn.pendingElicitations[0].id;
        await bobAll.waitFor((e) => e.data?.elicitationRequested.id === hisId, "bob's own request");
        await bobSse.waitFor((e) => e.data?.elicitationRequested.id === hisId, "bob's own request over SSE");
        expect(bobAll.events.map((e) => e.data?.elicitationRequested.id)).toEqual([hisId]);
        expect(bobSse.events.map((e) => e.data?.elicitationRequested.id)).toEqual([hisId]);
        expect(bobOnHerThread.events).toEqual([]);
        for (const events of [bobAll.events, bobSse.events]) {
          const text = JSON.stringify(events);
          for (const id of [herId, alice.thread, alice.otherThread, alice.turn, alice.elicitation])
            expect(text).not.toContain(id);
        }
      } finally {
        bobSse.stop();
        await client.dispose();
        await aliceClient.dispose();
      }
    });
  });
});
