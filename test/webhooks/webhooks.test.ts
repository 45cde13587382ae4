// Webhooks over the real HTTP API (docs/webhooks.md): a real server on 127.0.0.1 with a real store, and a real receiver
// (test/webhooks/receiver.ts) that checks every signature with the `standardwebhooks` library and fails on demand.
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook-events.js';
import { afterEach, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig, WebhookConfig } from '../../src/config/schema.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { LEVEL, memoryLog, type MemoryLog } from '../support/log.js';
import { onceRecorded, WebhookReceiver } from './receiver.js';

const ADMIN = { authorization: 'Bearer admin-token' };
const BOB = { authorization: 'Bearer bob-token' };

let harnesses: Harness[] = [];
/** The last server's log. */
let log: MemoryLog;
let receivers: WebhookReceiver[] = [];

afterEach(async () => {
  for (const harness of harnesses) await harness.close();
  for (const receiver of receivers) await receiver.close();
  harnesses = [];
  receivers = [];
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start();
  receivers.push(started);
  return started;
}

type Endpoint = Omit<WebhookConfig, 'url' | 'secret' | 'events'> & Partial<Pick<WebhookConfig, 'events'>>;

const ALL_EVENTS: WebhookConfig['events'] = [...WEBHOOK_EVENT_TYPES];

function configFor(endpoints: [WebhookReceiver, Endpoint][]): ToolgateConfig {
  return {
    ...demoConfig,
    auth: {
      tokens: [
        { token: 'admin-token', user: 'admin', admin: true },
        { token: 'bob-token', user: 'bob', admin: false },
      ],
    },
    webhooks: endpoints.map(([r, settings]) => ({
      url: r.url,
      secret: r.secret,
      events: ALL_EVENTS,
      initialBackoffSeconds: 0.2,
      ...settings,
    })),
  };
}

async function serve(
  endpoints: [WebhookReceiver, Endpoint][],
  options: { database?: string; clock?: () => Date } = {},
): Promise<Harness> {
  log = memoryLog('info');
  const harness = await startHarness({
    config: configFor(endpoints),
    logger: log.logger,
    webhookDelivery: { pollIntervalMs: 50 },
    ...options,
  });
  harnesses.push(harness);
  return harness;
}

const START = `mutation Start($message: String!) {
  startTurn(input: {agentId: "demo", message: $message}) {
    turn { id status pendingElicitations { id toolCall { arguments } } }
    thread { id }
    userErrors { code message }
  }
}`;
const RESOLVE = `mutation Resolve($id: ID!, $action: ElicitationAction!) {
  resolveElicitation(input: {elicitationId: $id, action: $action}) {
    turn { id status text }
    userErrors { code message }
  }
}`;
const DELIVERIES = `query Deliveries($status: WebhookDeliveryStatus, $first: Int, $after: String) {
  webhookDeliveries(status: $status, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id endpoint eventType status attempts nextAttemptAt lastError lastStatusCode createdAt finishedAt payload } }
  }
}`;

async function pause(harness: Harness, message = 'Delete entities 1, 2 and 3') {
  const started = dataOf(await harness.gql(START, { message }, ADMIN)).startTurn;
  expect(started.turn.status).toBe('PAUSED');
  return {
    turnId: started.turn.id as string,
    threadId: started.thread.id as string,
    elicitationId: started.turn.pendingElicitations[0].id as string,
  };
}

async function deliveries(harness: Harness, status?: string) {
  const page = dataOf(await harness.gql(DELIVERIES, { status, first: 200 }, ADMIN)).webhookDeliveries;
  return page.edges.map((e: { node: any }) => e.node) as any[];
}

describe('webhooks over the real API', () => {
  it('a pause sends elicitation.requested, signed; ACCEPT sends elicitation.resolved, then turn.completed', async () => {
    const hooks = await receiver();
    const harness = await serve([[hooks, {}]]);
    const { turnId, threadId, elicitationId } = await pause(harness);

    const requested = await hooks.waitFor('elicitation.requested', () => hooks.delivered()[0]);
    expect(requested.contentType).toBe('application/json');
    expect(Math.abs(Number(requested.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(requested.payload).toMatchObject({
      type: 'elicitation.requested',
      data: {
        elicitationId,
        turnId,
        threadId,
        agentId: 'demo',
        ownerId: 'admin',
        status: 'PENDING',
        resolution: null,
        toolCall: { name: 'delete_entities', toolId: 'demo:delete_entities', arguments: { ids: [1, 2, 3] } },
        answer: null,
      },
    });
    expect(requested.payload.data.message).toContain('Delete entities');

    const resolved = dataOf(await harness.gql(RESOLVE, { id: elicitationId, action: 'ACCEPT' }, ADMIN));
    expect(resolved.resolveElicitation.turn.status).toBe('COMPLETED');
    await hooks.waitFor('three deliveries', () => hooks.delivered().length === 3);
    expect(hooks.delivered().map((r) => r.eventType)).toEqual([
      'elicitation.requested',
      'elicitation.resolved',
      'turn.completed',
    ]);
    const [, answered, completed] = hooks.delivered();
    expect(answered!.payload.data).toMatchObject({
      elicitationId,
      status: 'ACCEPTED',
      resolution: 'ANSWERED',
      answer: { action: 'ACCEPT', content: null },
      answeredBy: 'admin',
    });
    expect(completed!.payload.data).toMatchObject({
      turnId,
      status: 'COMPLETED',
      text: 'Done. Deleted 3 entities (1, 2, 3).',
    });
    expect(hooks.rejected).toEqual([]);

    // The webhook-id is the outbox row's id; the admin query lists each as DELIVERED after one attempt.
    const listed = await onceRecorded(
      () => deliveries(harness),
      (rows) => rows.every((d) => d.status !== 'PENDING'),
    );
    expect(listed.map((d) => [d.id, d.eventType, d.status, d.attempts, d.lastStatusCode, d.nextAttemptAt])).toEqual(
      hooks.delivered().map((r) => [r.id, r.eventType, 'DELIVERED', 1, 204, null]),
    );
    expect(listed[0].payload).toEqual(requested.payload);
  });

  it('an endpoint gets only the events it subscribed to', async () => {
    const everything = await receiver();
    const turnsOnly = await receiver();
    const harness = await serve([
      [everything, {}],
      [turnsOnly, { events: ['turn.completed'] }],
    ]);
    const { elicitationId } = await pause(harness);
    await harness.gql(RESOLVE, { id: elicitationId, action: 'ACCEPT' }, ADMIN);
    await everything.waitFor('three deliveries', () => everything.delivered().length === 3);
    await turnsOnly.waitFor('turn.completed', () => turnsOnly.delivered().length === 1);
    expect(turnsOnly.delivered()[0]!.eventType).toBe('turn.completed');
    // One event, a webhook-id per endpoint.
    expect(turnsOnly.delivered()[0]!.id).not.toBe(everything.delivered()[2]!.id);
    expect(turnsOnly.delivered()[0]!.payload).toEqual(everything.delivered()[2]!.payload);
  });

  it('expiry sends elicitation.expired', async () => {
    const hooks = await receiver();
    let offsetMs = 0;
    const harness = await serve([[hooks, { events: ['elicitation.expired'] }]], {
      clock: () => new Date(Date.now() + offsetMs),
    });
    const { turnId, elicitationId } = await pause(harness);
    offsetMs = 3601_000; // past pauseTtlSeconds (3600)
    expect(await harness.server.sweep()).toMatchObject({ expiredTurns: 1 });
    const expired = await hooks.waitFor('elicitation.expired', () => hooks.delivered()[0]);
    expect(expired.payload).toMatchObject({
      type: 'elicitation.expired',
      data: { elicitationId, turnId, status: 'EXPIRED', resolution: 'EXPIRED', answer: null },
    });
    expect(hooks.delivered()).toHaveLength(1);
  });

  it('a failing receiver gets retries with growing gaps until it answers 2xx; one webhook-id throughout', async () => {
    const hooks = await receiver();
    hooks.failNext = 3;
    const harness = await serve([[hooks, { events: ['elicitation.requested'], maxAttempts: 6 }]]);
    await pause(harness);
    await hooks.waitFor('the delivery after three failures', () => hooks.delivered()[0]);
    expect(hooks.received.map((r) => r.answered)).toEqual([500, 500, 500, 204]);
    expect(new Set(hooks.received.map((r) => r.id)).size).toBe(1);
    const gaps = hooks.received.slice(1).map((r, i) => r.at - hooks.received[i]!.at);
    // Backoff 0.2 s, 0.4 s, 0.8 s, each ±20 %: each retry waits at least its backoff's least (160, 320, 640 ms, less
    // a timer's 10 ms). Only lower bounds: on a busy machine a retry may start late, so one gap can outlast the next.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(0.8 * 200 * 2 ** i - 10));
    const [listed] = await onceRecorded(
      () => deliveries(harness),
      (rows) => rows[0]?.status !== 'PENDING',
    );
    expect(listed).toMatchObject({ status: 'DELIVERED', attempts: 4, lastError: null, lastStatusCode: 204 });
  });

  it('after maxAttempts a delivery is FAILED, keeps its last error, and the admin query lists it; non-admins are refused', async () => {
    const hooks = await receiver();
    hooks.mode = 'fail';
    hooks.failStatus = 503;
    const harness = await serve([[hooks, { events: ['elicitation.requested'], maxAttempts: 3 }]]);
    await pause(harness);
    await hooks.waitFor('three attempts', () => hooks.received.length === 3);
    const listed = await onceRecorded(
      () => deliveries(harness, 'FAILED'),
      (rows) => rows.length > 0,
    );
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      eventType: 'elicitation.requested',
      status: 'FAILED',
      attempts: 3,
      lastError: 'HTTP 503',
      lastStatusCode: 503,
      nextAttemptAt: null,
      endpoint: hooks.url,
    });
    expect(listed[0].finishedAt).not.toBeNull();
    expect(await deliveries(harness, 'PENDING')).toEqual([]);
    // No fourth attempt.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(hooks.received).toHaveLength(3);
    // Each failed attempt is logged (warn, then error for the last), with the id and the error, never the payload.
    const logged = log.lines().filter((line) => line.event === 'webhookAttempt');
    expect(logged.map((line) => [line.level, line.attempt, line.error, line.webhookId])).toEqual([
      [LEVEL.warn, 1, 'HTTP 503', listed[0].id],
      [LEVEL.warn, 2, 'HTTP 503', listed[0].id],
      [LEVEL.error, 3, 'HTTP 503', listed[0].id],
    ]);
    expect(log.text()).not.toContain('delete_entities');

    const refused = await harness.gql(DELIVERIES, {}, BOB);
    expect(refused.data).toEqual({ webhookDeliveries: null });
    expect(refused.errors).toEqual([
      expect.objectContaining({
        message: 'Only administrators may list webhook deliveries.',
        extensions: { code: 'FORBIDDEN' },
      }),
    ]);
  });

  it('the admin query pages', async () => {
    const hooks = await receiver();
    const harness = await serve([[hooks, { events: ['elicitation.requested', 'elicitation.resolved'] }]]);
    for (let i = 0; i < 3; i++) {
      const { elicitationId } = await pause(harness, `Delete entities ${i + 1}`);
      await harness.gql(RESOLVE, { id: elicitationId, action: 'CANCEL' }, ADMIN);
    }
    await hooks.waitFor('six deliveries', () => hooks.delivered().length === 6);
    const first = dataOf(await harness.gql(DELIVERIES, { first: 4 }, ADMIN)).webhookDeliveries;
    expect(first).toMatchObject({ totalCount: 6, pageInfo: { hasNextPage: true } });
    const rest = dataOf(
      await harness.gql(DELIVERIES, { first: 4, after: first.pageInfo.endCursor }, ADMIN),
    ).webhookDeliveries;
    expect(rest.pageInfo.hasNextPage).toBe(false);
    const ids = [...first.edges, ...rest.edges].map((e: any) => e.node.id);
    expect(ids).toEqual(hooks.delivered().map((r) => r.id));
  });

  it('a hanging receiver does not slow requests; a closed socket is retried; shutdown leaves the delivery for the next server', async () => {
    const hooks = await receiver();
    hooks.mode = 'hang';
    const harness = await serve([[hooks, { events: ['elicitation.requested', 'turn.completed'], timeoutMs: 60_000 }]]);
    const { elicitationId } = await pause(harness);
    await hooks.waitFor('the hanging request', () => hooks.hanging === 1);
    // The receiver still hangs; mutations answer at their usual speed.
    const before = Date.now();
    const resolved = dataOf(await harness.gql(RESOLVE, { id: elicitationId, action: 'ACCEPT' }, ADMIN));
    expect(resolved.resolveElicitation.turn.status).toBe('COMPLETED');
    const second = await pause(harness, 'Delete entities 4');
    expect(second.elicitationId).toBeTruthy();
    expect(Date.now() - before).toBeLessThan(1000);
    expect(hooks.hanging).toBe(1);

    // Shutdown: the attempt in flight is cut and goes back to the queue, not counted.
    await harness.close();
    harnesses = [];
    const pending = hooks.received.length;
    expect(pending).toBe(1);

    // The next server on the same database sends everything: the cut one again (same webhook-id), then the rest.
    hooks.mode = 'close';
    hooks.failNext = 0;
    const next = await serve([[hooks, { events: ['elicitation.requested', 'turn.completed'], timeoutMs: 60_000 }]], {
      database: harness.database,
    });
    await hooks.waitFor('a request on a closed socket', () => hooks.received.some((r) => r.answered === 'close'));
    hooks.mode = 'ok';
    await hooks.waitFor('all three delivered', () => new Set(hooks.delivered().map((r) => r.id)).size === 3);
    expect(hooks.delivered().map((r) => r.eventType)).toEqual(
      expect.arrayContaining(['elicitation.requested', 'turn.completed', 'elicitation.requested']),
    );
    expect(hooks.delivered().map((r) => r.id)).toContain(hooks.received[0]!.id);
    const listed = await onceRecorded(
      () => deliveries(next),
      (rows) => rows.every((d) => d.status !== 'PENDING'),
    );
    expect(listed.every((d) => d.status === 'DELIVERED')).toBe(true);
    const closedOnce = listed.find((d) => d.id === hooks.received.find((r) => r.answered === 'close')!.id);
    expect(closedOnce.attempts).toBeGreaterThanOrEqual(2);
    expect(hooks.rejected).toEqual([]);
  });
});
