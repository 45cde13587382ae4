// Webhooks across a SIGKILL (docs/webhooks.md): a real server process (test/fixtures/durability-server.ts) produces
// events while the receiver fails and then hangs, is killed with a request in flight, and a new process on the same
// database delivers everything: each event at least once, under exactly one webhook-id.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook-events.js';
import type { FixtureOptions } from '../fixtures/durability-server.js';
import { dataOf, RESOLVE, START_TURN, TEST_BACKEND } from '../support/harness.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { killAll, startFixture, type ServerProcess } from '../durability/processes.js';
import { onceRecorded, WebhookReceiver, type ReceivedWebhook } from './receiver.js';

let dir: string;
let receiver: WebhookReceiver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-webhook-crash-'));
  receiver = await WebhookReceiver.start();
});

afterEach(async () => {
  await killAll();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What an event is about: its type and the elicitation or turn it reports. */
const eventKey = (r: ReceivedWebhook) => `${r.eventType} ${r.payload.data.elicitationId ?? r.payload.data.turnId}`;

async function start(server: ServerProcess, agentId: string, message: string) {
  return dataOf(await server.gql(START_TURN, { input: { agentId, message } })).startTurn;
}

async function resolve(server: ServerProcess, elicitationId: string, action: string) {
  return dataOf(await server.gql(RESOLVE, { input: { elicitationId, action } })).resolveElicitation;
}

describe('webhooks across a SIGKILL of the server', () => {
  it('every event is delivered at least once, under one webhook-id, by the next process on the database', async () => {
    const options: FixtureOptions = {
      database: TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : join(dir, 'toolgate.db'),
      runsFile: join(dir, 'runs.log'),
      webhooks: [
        {
          url: receiver.url,
          secret: receiver.secret,
          events: [...WEBHOOK_EVENT_TYPES],
          initialBackoffSeconds: 0.3,
          maxBackoffSeconds: 1,
          timeoutMs: 1000,
          maxAttempts: 100,
        },
      ],
      // One delivery per claim: a claim cut by the kill lapses after 1 × timeoutMs + 5 s.
      webhookDelivery: { pollIntervalMs: 50, batchSize: 1 },
    };

    // The receiver is down (every request answered 500) while the first server produces 9 events.
    receiver.mode = 'fail';
    const first = await startFixture(options);
    const paused = [];
    for (const line of ['a', 'b', 'c']) paused.push(await start(first, 'confirm', `append ${line}`));
    expect(paused.map((p) => p.turn.status)).toEqual(['PAUSED', 'PAUSED', 'PAUSED']);
    const [a, b, c] = paused.map((p) => p.turn.pendingElicitations[0].id as string);
    expect((await resolve(first, a!, 'ACCEPT')).turn.status).toBe('COMPLETED');
    expect((await resolve(first, b!, 'ACCEPT')).turn.status).toBe('COMPLETED');
    expect((await resolve(first, c!, 'CANCEL')).turn.status).toBe('CANCELLED');
    const direct = await start(first, 'direct', 'append d');
    expect(direct.turn.status).toBe('COMPLETED');
    // 3 requested, 3 resolved, 3 completed: each attempted (and refused) at least once.
    await receiver.waitFor('every event attempted', () => new Set(receiver.received.map(eventKey)).size === 9);

    // Then slow: the next attempt hangs, and the server is killed with it in flight.
    receiver.mode = 'hang';
    await receiver.waitFor('a request in flight', () => receiver.hanging > 0);
    await first.kill();
    const beforeKill = { requests: receiver.received.length, delivered: receiver.delivered().length };
    expect(beforeKill.delivered).toBe(0);
    const cut = receiver.received.at(-1)!;
    expect(cut.answered).toBe('hang');

    // The receiver is back; a new process on the same database delivers everything.
    receiver.mode = 'ok';
    const second = await startFixture(options);
    await receiver.waitFor(
      'every event delivered',
      () => new Set(receiver.delivered().map(eventKey)).size === 9,
      30_000,
    );

    // Each event under exactly one webhook-id, delivered at least once; no signature ever failed.
    const idsByEvent = new Map<string, Set<string>>();
    for (const r of receiver.received)
      idsByEvent.set(eventKey(r), (idsByEvent.get(eventKey(r)) ?? new Set()).add(r.id));
    expect(idsByEvent.size).toBe(9);
    for (const [event, ids] of idsByEvent) expect([event, ids.size]).toEqual([event, 1]);
    const distinctIds = new Set(receiver.received.map((r) => r.id));
    expect(new Set(receiver.delivered().map((r) => r.id))).toEqual(distinctIds);
    // The request cut by the kill came again, under its id, from the new process.
    expect(receiver.delivered().some((r) => r.id === cut.id)).toBe(true);
    expect(receiver.rejected).toEqual([]);
    expect([...idsByEvent.keys()].sort()).toEqual(
      [
        ...[a, b, c].map((id) => `elicitation.requested ${id}`),
        ...[a, b, c].map((id) => `elicitation.resolved ${id}`),
        ...[paused[0], paused[1], direct].map((p) => `turn.completed ${p.turn.id}`),
      ].sort(),
    );

    // The outbox agrees: every delivery DELIVERED.
    const listed = await onceRecorded(
      async () =>
        dataOf(
          await second.gql('{ webhookDeliveries(first: 50) { totalCount edges { node { id status attempts } } } }'),
        ).webhookDeliveries,
      (page) => page.edges.every((e: { node: { status: string } }) => e.node.status !== 'PENDING'),
    );
    expect(listed.totalCount).toBe(9);
    expect(listed.edges.every((e: { node: { status: string } }) => e.node.status === 'DELIVERED')).toBe(true);

    const counts = {
      backend: TEST_BACKEND,
      events: idsByEvent.size,
      distinctWebhookIds: distinctIds.size,
      requestsReceived: receiver.received.length,
      requestsBeforeKill: beforeKill.requests,
      deliveries2xx: receiver.delivered().length,
      distinctIdsDelivered: new Set(receiver.delivered().map((r) => r.id)).size,
      recordedAttempts: listed.edges.reduce(
        (sum: number, e: { node: { attempts: number } }) => sum + e.node.attempts,
        0,
      ),
    };
    console.log(`webhook crash test: ${JSON.stringify(counts)}`);
    await second.kill();
  }, 60_000);
});
