// Escalation over the real API (docs/approvers.md "Escalation"): a requester, a reviewer and a member of the escalation
// role with their own bearer tokens; the server's clock is moved by the test and the sweeper run by hand. Before the
// escalation time the escalation role is refused; the sweep past it marks the request escalated once, the webhook
// endpoint (a real receiver on 127.0.0.1) gets elicitation.escalated once, the escalated request is published to the
// escalation role and on its own topic, and the escalation role answers it. A request whose server was down past its
// escalation and its expiry expires and is never escalated. On SQLite and PostgreSQL (TOOLGATE_TEST_BACKEND=postgres).
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentConfig, ToolgateConfig } from '../../src/config/schema.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook-events.js';
import type { ElicitationRecord } from '../../src/domain/records.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';
import { WebhookReceiver } from '../webhooks/receiver.js';

const USERS = {
  alice: { roles: [] as string[] },
  bob: { roles: ['reviewer'] },
  oscar: { roles: ['admin'] },
};
type User = keyof typeof USERS;
const tokenOf = (user: User) => `${user}-token-8d1e2f3a4b5c`;
const as = (user: User) => ({ authorization: `Bearer ${tokenOf(user)}` });
const auth: NonNullable<ToolgateConfig['auth']> = {
  tokens: Object.entries(USERS).map(([user, spec]) => ({
    token: tokenOf(user as User),
    user,
    admin: false,
    roles: spec.roles,
  })),
};

/** Four eyes, one reviewer; the role `admin` as well after a minute; the request expires after two. */
const AGENT: Partial<AgentConfig> = {
  pauseTtlSeconds: 120,
  toolConfirmation: {
    't:restart': {
      approvers: {
        roles: ['reviewer'],
        required: 1,
        requester: 'EXCLUDED',
        escalate: { afterSeconds: 60, roles: ['admin'] },
      },
    },
  },
};

const START = `mutation($message: String!) {
  startTurn(input: { agentId: "${AGENT_ID}", message: $message }) {
    turn { id status pendingElicitations { id approval { escalation { roles at escalatedAt } } } }
    userErrors { code message }
  }
}`;
const RESOLVE = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    elicitation { id status resolvedBy }
    userErrors { code message field }
  }
}`;
const TO_ANSWER = `{ pendingElicitations(scope: TO_ANSWER) { edges { node { id } } } }`;
const ESCALATION = `query($id: ID!) { elicitation(id: $id) { status approval { escalation { roles at escalatedAt } } } }`;

let harnesses: Harness[] = [];
let receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const harness of harnesses) await harness.close();
  for (const receiver of receivers) await receiver.close();
  harnesses = [];
  receivers = [];
});

/** A server with the test agent, its tokens and a webhook endpoint for every event, on the clock `now`. */
async function serve(hooks: WebhookReceiver, now: () => Date, database?: string, sweepBatchSize?: number) {
  const tools = new CountingToolSource(SOURCE_ID, [{ name: 'restart' }]);
  const h = await startHarness({
    config: {
      ...testConfig(AGENT),
      auth,
      webhooks: [{ url: hooks.url, secret: hooks.secret, events: [...WEBHOOK_EVENT_TYPES] }],
    },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
    toolSources: [tools],
    webhookDelivery: { pollIntervalMs: 50 },
    clock: now,
    sweepBatchSize,
    ...(database !== undefined && { database }),
  });
  harnesses.push(h);
  return { h, tools };
}

async function receiver(): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start();
  receivers.push(started);
  return started;
}

const gql = (h: Harness, user: User, query: string, variables: Record<string, unknown> = {}) =>
  h.gql(query, variables, as(user));
const resolve = async (h: Harness, user: User, elicitationId: string, action = 'ACCEPT') =>
  dataOf(await gql(h, user, RESOLVE, { input: { elicitationId, action } })).resolveElicitation;
const toAnswer = async (h: Harness, user: User) =>
  dataOf(await gql(h, user, TO_ANSWER)).pendingElicitations.edges.map((e: { node: { id: string } }) => e.node.id);

/** Alice's new turn calling t:restart: its turn and its one request. */
async function restartRequest(h: Harness) {
  const started = dataOf(await gql(h, 'alice', START, { message: 't_restart' })).startTurn;
  expect(started.userErrors).toEqual([]);
  expect(started.turn.status).toBe('PAUSED');
  return { turnId: started.turn.id as string, request: started.turn.pendingElicitations[0] };
}

describe('escalation by the sweeper', () => {
  it('before its time the escalation role is refused; the sweep past it escalates once, tells everyone, and it answers', async () => {
    const hooks = await receiver();
    let offsetMs = 0;
    const { h, tools } = await serve(hooks, () => new Date(Date.now() + offsetMs));
    const { turnId, request } = await restartRequest(h);
    expect(request.approval.escalation).toEqual({ roles: ['admin'], at: expect.any(String), escalatedAt: null });
    const escalatesAt: string = request.approval.escalation.at;

    // Before the escalation time: oscar (role admin) may not answer yet, and a sweep escalates nothing.
    expect((await resolve(h, 'oscar', request.id)).userErrors).toEqual([
      {
        code: 'FORBIDDEN',
        message: `This request is offered to your role only from ${escalatesAt}, if nobody answered it by then.`,
        field: ['input', 'action'],
      },
    ]);
    expect(await toAnswer(h, 'oscar')).toEqual([]);
    expect(await h.server.sweep()).toMatchObject({ expiredTurns: 0, escalatedElicitations: 0 });
    await hooks.waitFor('elicitation.requested', () => hooks.delivered().length === 1);

    // Listening to the two topics an escalation is published on, as a subscription would.
    const { pubsub } = h.server.services;
    const toAdmins = pubsub.subscribe('approverElicitations', 'admin');
    const toReviewers = pubsub.subscribe('approverElicitations', 'reviewer');
    const ofRequest = pubsub.subscribe('elicitation', request.id);
    await Promise.all([toAdmins.listening, toReviewers.listening, ofRequest.listening]);

    // Past the escalation time (and before the expiry): the sweep marks it escalated, once.
    offsetMs += 61_000;
    expect(await h.server.sweep()).toMatchObject({ expiredTurns: 0, escalatedElicitations: 1 });
    expect(await h.server.sweep()).toMatchObject({ escalatedElicitations: 0 });

    const published = (await toAdmins.next()).value as ElicitationRecord;
    expect(published).toMatchObject({ id: request.id, status: 'PENDING', escalatedAt: expect.any(String) });
    expect(Date.parse(published.escalatedAt!)).toBeGreaterThanOrEqual(Date.parse(escalatesAt));
    expect((await ofRequest.next()).value).toEqual(published);
    // Only to the escalation roles: the policy's own roles had it from the start.
    expect(await Promise.race([toReviewers.next(), Promise.resolve('nothing')])).toBe('nothing');
    await Promise.all([toAdmins.return(), toReviewers.return(), ofRequest.return()]);

    const escalated = await hooks.waitFor('elicitation.escalated', () =>
      hooks.delivered().find((r) => r.eventType === 'elicitation.escalated'),
    );
    expect(escalated.payload).toMatchObject({
      type: 'elicitation.escalated',
      timestamp: published.escalatedAt,
      data: {
        elicitationId: request.id,
        turnId,
        ownerId: 'alice',
        status: 'PENDING',
        answer: null,
        approval: {
          roles: ['reviewer'],
          required: 1,
          requester: 'EXCLUDED',
          escalation: { roles: ['admin'], at: escalatesAt },
        },
        escalatedAt: published.escalatedAt,
      },
    });

    // The API shows it escalated, to the requester and to the escalation role alike.
    for (const user of ['alice', 'oscar'] as const) {
      expect(dataOf(await gql(h, user, ESCALATION, { id: request.id })).elicitation).toEqual({
        status: 'PENDING',
        approval: { escalation: { roles: ['admin'], at: escalatesAt, escalatedAt: published.escalatedAt } },
      });
    }

    // The escalation role answers now; the tool runs once and the turn completes.
    expect(await toAnswer(h, 'oscar')).toEqual([request.id]);
    const answered = await resolve(h, 'oscar', request.id);
    expect(answered.userErrors).toEqual([]);
    expect(answered.elicitation).toEqual({ id: request.id, status: 'ACCEPTED', resolvedBy: 'oscar' });
    expect(tools.count('restart')).toBe(1);
    const turn = dataOf(await gql(h, 'alice', `query($id: ID!) { turn(id: $id) { status } }`, { id: turnId })).turn;
    expect(turn.status).toBe('COMPLETED');

    // The receiver gets the events in order, elicitation.escalated exactly once; the next sweeps add none.
    expect(await h.server.sweep()).toMatchObject({ escalatedElicitations: 0 });
    await hooks.waitFor('turn.completed', () => hooks.delivered().some((r) => r.eventType === 'turn.completed'));
    expect(hooks.delivered().map((r) => r.eventType)).toEqual([
      'elicitation.requested',
      'elicitation.escalated',
      'elicitation.resolved',
      'turn.completed',
    ]);
    expect(hooks.rejected).toEqual([]);
  });

  it('escalates in batches of sweeper.batchSize, all that are due in one sweep', async () => {
    const hooks = await receiver();
    let offsetMs = 0;
    const { h } = await serve(hooks, () => new Date(Date.now() + offsetMs), undefined, 2);
    const requests = [];
    for (let i = 0; i < 5; i++) requests.push((await restartRequest(h)).request.id as string);
    offsetMs += 61_000;
    const report = await h.server.sweep();
    expect(report).toMatchObject({ expiredTurns: 0, escalatedElicitations: 5 });
    await hooks.waitFor('five escalations', () =>
      hooks.delivered().filter((r) => r.eventType === 'elicitation.escalated').length === 5 ? true : undefined,
    );
    const escalated = hooks.delivered().filter((r) => r.eventType === 'elicitation.escalated');
    expect(escalated.map((r) => r.payload.data.elicitationId).sort()).toEqual([...requests].sort());
    expect(await toAnswer(h, 'oscar')).toEqual(requests);
  });

  it('a request whose server was down past its escalation and its expiry expires, and is never escalated', async () => {
    const hooks = await receiver();
    let offsetMs = 0;
    const clock = () => new Date(Date.now() + offsetMs);
    const before = await serve(hooks, clock);
    const { turnId, request } = await restartRequest(before.h);
    await hooks.waitFor('elicitation.requested', () => hooks.delivered().length === 1);
    await before.h.close();
    harnesses = [];

    // Down for longer than both the escalation (60 s) and the expiry (120 s).
    offsetMs += 200_000;
    const after = await serve(hooks, clock, before.h.database);
    expect(await after.h.server.sweep()).toMatchObject({ expiredTurns: 1, escalatedElicitations: 0 });
    expect(await after.h.server.sweep()).toMatchObject({ expiredTurns: 0, escalatedElicitations: 0 });
    await hooks.waitFor('elicitation.expired', () =>
      hooks.delivered().find((r) => r.eventType === 'elicitation.expired'),
    );
    // Each event once (by webhook-id: a delivery cut by the shutdown may come again): never an escalation.
    const events = new Map(hooks.delivered().map((r) => [r.id, r]));
    expect([...events.values()].map((r) => r.eventType)).toEqual(['elicitation.requested', 'elicitation.expired']);
    expect([...events.values()][1]!.payload.data).toMatchObject({
      elicitationId: request.id,
      status: 'EXPIRED',
      escalatedAt: null,
    });
    expect((await resolve(after.h, 'oscar', request.id)).userErrors).toEqual([
      expect.objectContaining({ code: 'EXPIRED' }),
    ]);
    const turn = dataOf(
      await gql(after.h, 'alice', `query($id: ID!) { turn(id: $id) { status } }`, { id: turnId }),
    ).turn;
    expect(turn.status).toBe('EXPIRED');
    expect(after.tools.count('restart')).toBe(0);
  });
});
