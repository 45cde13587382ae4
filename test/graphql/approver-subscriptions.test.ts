// The approvers' subscriptions over a real graphql-ws client (docs/approvers.md, docs/live.md):
// elicitationRequested(scope: TO_ANSWER) delivers each request the viewer may answer now as an approver, and
// elicitationUpdated(elicitationId) a request now and then each change, to whoever may read it. Who gets nothing: the
// requester under four eyes, a user without the role, an escalation role before its time. On SQLite and PostgreSQL
// (TOOLGATE_TEST_BACKEND=postgres).
import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ElicitationRecord } from '../../src/domain/records.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import {
  APPROVER_AGENT,
  APPROVER_TOOLS,
  approverAuth,
  as,
  authorizationOf,
  type ApproverUser,
} from '../support/approvers.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { connectWs, observedPubSub, subscribeWs, type ObservedPubSub, type Received } from '../support/live.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

const CARD = 'id status requestedBy toolCall { toolId } answers { approver action counts }';
const TO_ANSWER = `subscription($includePending: Boolean) {
  elicitationRequested(scope: TO_ANSWER, includePending: $includePending) { ${CARD} }
}`;
const UPDATED = `subscription($id: ID!) { elicitationUpdated(elicitationId: $id) { ${CARD} resolvedBy } }`;
const START = `mutation($message: String!) {
  startTurn(input: { agentId: "${AGENT_ID}", message: $message }) {
    turn { id status pendingElicitations { id } }
    userErrors { code }
  }
}`;
const RESOLVE = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { elicitation { id status } userErrors { code } }
}`;

type Card = { id: string; status: string; requestedBy: string; answers: { approver: string; action: string }[] };
type Events<T> = Received<{ data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>;

let h: Harness;
let pubsub: ObservedPubSub;
let tools: CountingToolSource;
let offsetMs = 0;
/** One graphql-ws connection per user and test. */
const clients = new Map<ApproverUser, Client>();
const open: Events<unknown>[] = [];

beforeAll(async () => {
  pubsub = observedPubSub();
  tools = new CountingToolSource(SOURCE_ID, APPROVER_TOOLS);
  h = await startHarness({
    config: { ...testConfig(APPROVER_AGENT), auth: approverAuth },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
    toolSources: [tools],
    pubsub,
    clock: () => new Date(Date.now() + offsetMs),
  });
});
afterEach(async () => {
  for (const events of open.splice(0)) events.stop();
  await Promise.all([...clients.values()].map((client) => client.dispose()));
  clients.clear();
});
afterAll(() => h?.close());

function subscribe<T>(user: ApproverUser, query: string, variables: Record<string, unknown> = {}): Events<T> {
  let client = clients.get(user);
  if (!client) clients.set(user, (client = connectWs(h.url, authorizationOf(user))));
  const events = subscribeWs<T>(client, query, variables);
  open.push(events as Events<unknown>);
  return events;
}

/** `user`'s TO_ANSWER subscription, once it listens on each of the user's roles. */
async function toAnswer(user: ApproverUser, roles: string[], includePending = false) {
  const listening = Promise.all(roles.map((role) => pubsub.listening('approverElicitations', role)));
  const events = subscribe<{ elicitationRequested: Card }>(user, TO_ANSWER, { includePending });
  await listening;
  return events;
}

const idsOf = (events: Events<{ elicitationRequested: Card }>) =>
  events.events.map((event) => event.data?.elicitationRequested.id);

async function start(tool: string, user: ApproverUser = 'alice') {
  const started = dataOf(await h.gql(START, { message: `t_${tool}` }, as(user))).startTurn;
  expect(started.turn.status).toBe('PAUSED');
  return { turnId: started.turn.id as string, id: started.turn.pendingElicitations[0].id as string };
}

async function resolve(user: ApproverUser, elicitationId: string, action: string) {
  const answered = dataOf(await h.gql(RESOLVE, { input: { elicitationId, action } }, as(user))).resolveElicitation;
  expect(answered.userErrors).toEqual([]);
  return answered.elicitation as { id: string; status: string };
}

/** Time for what would wrongly arrive to arrive. */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('elicitationRequested(scope: TO_ANSWER)', () => {
  it('a reviewer gets the request live; the requester under four eyes, a user without the role, and an escalation role before its time get nothing', async () => {
    const bob = await toAnswer('bob', ['reviewer']);
    // Dave is a reviewer too, but he asks: four eyes keep him out.
    const dave = await toAnswer('dave', ['reviewer', 'ops']);
    const mallory = await toAnswer('mallory', ['ops']);
    const erin = await toAnswer('erin', ['oncall']);
    // Alice holds no role: she listens to nothing.
    const alice = subscribe<{ elicitationRequested: Card }>('alice', TO_ANSWER);

    const deploy = await start('deploy', 'dave');
    const restart = await start('restart');
    const got = await bob.waitFor((e) => e.data?.elicitationRequested.id === restart.id, 'the restart request');
    expect(got.data!.elicitationRequested).toMatchObject({ requestedBy: 'alice', status: 'PENDING', answers: [] });
    await quiet();
    expect(idsOf(bob)).toEqual([deploy.id, restart.id]);
    expect(bob.events[0]!.data!.elicitationRequested).toMatchObject({
      requestedBy: 'dave',
      toolCall: { toolId: 't:deploy' },
    });
    // Dave gets alice's restart (reviewer or ops, once although offered to both), not his own deploy.
    expect(idsOf(dave)).toEqual([restart.id]);
    expect(idsOf(mallory)).toEqual([restart.id]);
    expect(erin.events).toEqual([]);
    expect(alice.events).toEqual([]);

    await resolve('dave', deploy.id, 'CANCEL');
    await resolve('alice', restart.id, 'CANCEL');
  });

  it('includePending: what pendingElicitations(scope: TO_ANSWER) lists first, then each new one, each once', async () => {
    const answered = await start('deploy');
    const waiting = await start('deploy');
    await resolve('carol', answered.id, 'ACCEPT');
    const before = dataOf(
      await h.gql('{ pendingElicitations(scope: TO_ANSWER) { edges { node { id } } } }', {}, as('carol')),
    ).pendingElicitations.edges.map((e: { node: { id: string } }) => e.node.id);
    expect(before).toEqual([waiting.id]);

    const carol = await toAnswer('carol', ['reviewer'], true);
    await carol.waitFor((e) => e.data?.elicitationRequested.id === waiting.id, 'the pending request');
    const fresh = await start('deploy');
    await carol.waitFor((e) => e.data?.elicitationRequested.id === fresh.id, 'the new request');
    await quiet();
    // The one she answered is not hers to answer any more.
    expect(idsOf(carol)).toEqual([waiting.id, fresh.id]);

    for (const { id } of [answered, waiting, fresh]) await resolve('alice', id, 'CANCEL');
  });

  it('the sweep that escalates a request delivers it live to the escalation role, once', async () => {
    const erin = await toAnswer('erin', ['oncall']);
    const { id } = await start('restart');
    // Before the escalation time a sweep offers it to no one more.
    expect(await h.server.sweep()).toMatchObject({ escalatedElicitations: 0 });
    await quiet();
    expect(erin.events).toEqual([]);
    offsetMs = 61_000;
    try {
      expect(await h.server.sweep()).toMatchObject({ escalatedElicitations: 1 });
      await erin.waitFor((e) => e.data?.elicitationRequested.id === id, 'the escalated request');
      // Published again (another of her roles, another instance): still once.
      const record = (await h.server.services.store.loadElicitation(id)) as ElicitationRecord;
      pubsub.publish('approverElicitations', 'oncall', { ...record });
      expect(await h.server.sweep()).toMatchObject({ escalatedElicitations: 0 });
      await quiet();
      expect(idsOf(erin)).toEqual([id]);
    } finally {
      offsetMs = 0;
    }
    await resolve('alice', id, 'CANCEL');
  });
});

describe('elicitationUpdated(elicitationId)', () => {
  it('the requester and an approver get the request now, then the counted answer, then the decision', async () => {
    const before = tools.count('deploy');
    const { id } = await start('deploy');
    const alice = subscribe<{ elicitationUpdated: Card & { resolvedBy: string | null } }>('alice', UPDATED, { id });
    const carol = subscribe<{ elicitationUpdated: Card & { resolvedBy: string | null } }>('carol', UPDATED, { id });
    for (const events of [alice, carol]) await events.waitFor((e) => e.data?.elicitationUpdated.id === id, 'now');

    await resolve('bob', id, 'ACCEPT');
    for (const events of [alice, carol]) {
      await events.waitFor((e) => e.data?.elicitationUpdated.answers.length === 1, 'the counted answer');
    }
    await resolve('carol', id, 'ACCEPT');
    for (const events of [alice, carol]) {
      await events.waitFor((e) => e.data?.elicitationUpdated.status === 'ACCEPTED', 'the decision');
      expect(events.events.map((e) => e.data!.elicitationUpdated)).toEqual([
        expect.objectContaining({ status: 'PENDING', answers: [], resolvedBy: null }),
        expect.objectContaining({
          status: 'PENDING',
          answers: [{ approver: 'bob', action: 'ACCEPT', counts: true }],
          resolvedBy: null,
        }),
        expect.objectContaining({
          status: 'ACCEPTED',
          answers: [
            { approver: 'bob', action: 'ACCEPT', counts: true },
            { approver: 'carol', action: 'ACCEPT', counts: true },
          ],
          resolvedBy: 'carol',
        }),
      ]);
    }
    expect(tools.count('deploy')).toBe(before + 1);
  });

  it("the requester's turnUpdated shows each counted answer live", async () => {
    const { turnId, id } = await start('deploy');
    const turn = subscribe<{ turnUpdated: { status: string; elicitations: { answers: { approver: string }[] }[] } }>(
      'alice',
      `subscription($id: ID!) { turnUpdated(turnId: $id) { status elicitations { answers { approver } } } }`,
      { id: turnId },
    );
    await turn.waitFor((e) => e.data?.turnUpdated.status === 'PAUSED', 'the paused turn');
    await resolve('bob', id, 'ACCEPT');
    const counted = await turn.waitFor(
      (e) => e.data?.turnUpdated.elicitations[0]?.answers.length === 1,
      'the turn with the counted answer',
    );
    expect(counted.data!.turnUpdated).toEqual({ status: 'PAUSED', elicitations: [{ answers: [{ approver: 'bob' }] }] });
    await resolve('alice', id, 'CANCEL');
  });

  it('anyone else, and another user of a request without a policy: NOT_FOUND, and the connection stays', async () => {
    const { id } = await start('deploy');
    const wipe = await start('wipe');
    for (const [user, elicitationId] of [
      ['mallory', id],
      ['bob', wipe.id],
      ['bob', 'elc_unknown'],
    ] as const) {
      const events = subscribe<{ elicitationUpdated: Card }>(user, UPDATED, { id: elicitationId });
      const refused = await events.waitFor((e) => (e.errors?.length ?? 0) > 0, 'the refusal');
      expect(refused.errors).toEqual([
        expect.objectContaining({
          message: 'No elicitation with this id.',
          extensions: expect.objectContaining({ code: 'NOT_FOUND' }),
        }),
      ]);
      expect(refused.data ?? null).toBeNull();
      await events.done;
    }
    // Bob's own connection still serves him: the request he may read.
    const bob = subscribe<{ elicitationUpdated: Card }>('bob', UPDATED, { id });
    await bob.waitFor((e) => e.data?.elicitationUpdated.id === id, 'the request bob may read');
    await resolve('alice', id, 'CANCEL');
    await resolve('alice', wipe.id, 'CANCEL');
  });
});
