// Webhooks, the outbox: a change writes its events' rows in its own commit, for the endpoints subscribed to them, and
// a refused or unhooked write writes none; deliveries are claimed, retried, recorded and taken over per process, and
// retention deletes the delivered ones.
import { beforeEach, describe, expect } from 'vitest';
import type { ElicitationAnswer } from '../../../src/domain/records.js';
import { LeaseLostError, type Store } from '../../../src/domain/store.js';
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookDeliveryRecord,
  type WebhookSubscription,
} from '../../../src/domain/webhook-events.js';
import {
  at,
  ANN,
  AGENT,
  ACCEPT,
  DECLINE,
  CANCEL,
  lease,
  toolCall,
  askingStep,
  draftFor,
  startInput,
  runningTurn,
  pausedTurn,
  answer,
  ids,
  sorted,
  rejection,
} from './fixtures.js';
import type { StoreContext, StoreSpec } from './harness.js';

export function registerWebhooksSpec({ it }: StoreSpec): void {
  describe('webhooks: the outbox', () => {
    const EVERYTHING = 'http://127.0.0.1:9/everything';
    const TURNS = 'http://127.0.0.1:9/turns';
    const subscriptions: WebhookSubscription[] = [
      {
        url: EVERYTHING,
        events: [...WEBHOOK_EVENT_TYPES],
      },
      { url: TURNS, events: ['turn.completed', 'turn.failed'] },
    ];
    /** How often the store said it committed outbox rows. */
    let announced = 0;

    /** A store on the same database that writes the events of `subscriptions`. */
    async function hooked(second: StoreContext['second']): Promise<Store> {
      return second({
        webhooks: {
          subscriptions,
          written: () => {
            announced++;
          },
        },
      });
    }

    beforeEach(() => {
      announced = 0;
    });

    async function deliveries(s: Store): Promise<WebhookDeliveryRecord[]> {
      return (await s.listWebhookDeliveries({}, 200, null)).items;
    }
    const events = (list: WebhookDeliveryRecord[]) => list.map((d) => [d.endpoint, d.eventType]);
    const dataOf = (d: WebhookDeliveryRecord) => d.payload.data as Record<string, unknown>;

    it('retention: deleteDeliveredWebhooks deletes at most `limit` DELIVERED rows finished before `before`; PENDING and FAILED stay', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      const done = await runningTurn(s);
      await s.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(0) }); // turn.completed to both endpoints
      const other = await runningTurn(s);
      await s.unleasedTurnWriter(other.turn.id).finishTurn({ status: 'FAILED', error: 'boom', now: at(0) }); // turn.failed to both
      const third = await runningTurn(s);
      await s.unleasedTurnWriter(third.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(0) });
      const [d1, d2, f1, , d3, pending] = await store.claimWebhookDeliveries(
        'host:1:a',
        [EVERYTHING, TURNS],
        at(1),
        at(61),
        10,
      );
      const delivered = { kind: 'delivered', statusCode: 204 } as const;
      expect(await store.recordWebhookAttempt(d1!.id, 'host:1:a', delivered, at(10))).toBe(true);
      expect(await store.recordWebhookAttempt(d2!.id, 'host:1:a', delivered, at(20))).toBe(true);
      expect(await store.recordWebhookAttempt(d3!.id, 'host:1:a', delivered, at(30))).toBe(true);
      const failed = { kind: 'failed', error: 'HTTP 500', statusCode: 500 } as const;
      expect(await store.recordWebhookAttempt(f1!.id, 'host:1:a', failed, at(5))).toBe(true);
      expect(await store.deleteDeliveredWebhooks(at(25), 1)).toBe(1);
      expect(await store.deleteDeliveredWebhooks(at(25), 10)).toBe(1); // the other one finished before at(25)
      expect(await store.deleteDeliveredWebhooks(at(25), 10)).toBe(0);
      const left = await deliveries(store);
      expect(left.map((d) => d.id)).not.toContain(d1!.id);
      expect(left.map((d) => d.id)).not.toContain(d2!.id);
      expect(left.find((d) => d.id === d3!.id)).toMatchObject({ status: 'DELIVERED' });
      expect(left.find((d) => d.id === f1!.id)).toMatchObject({ status: 'FAILED' });
      expect(left.find((d) => d.id === pending!.id)).toMatchObject({ status: 'PENDING' });
    });

    it('a store opened without webhooks writes no outbox row on any path', async ({ store }) => {
      const paused = await pausedTurn(store, { elicitations: 2 });
      await answer(store, paused.elicitations[0]!.id, ACCEPT);
      await answer(store, paused.elicitations[1]!.id, CANCEL);
      const done = await runningTurn(store);
      await store.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(20) });
      await pausedTurn(store, { expiresAt: at(30) });
      await store.expireDueTurns(at(40), 10);
      expect(await deliveries(store)).toEqual([]);
      expect(await store.listWebhookDeliveries({}, 10, null)).toMatchObject({ totalCount: 0, hasNextPage: false });
    });

    it('a pause writes elicitation.requested per request, for the endpoints subscribed to it, with the change', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      const paused = await pausedTurn(s, { elicitations: 2, lease: lease('host:1:a') });
      const written = await deliveries(store);
      expect(events(written)).toEqual([
        [EVERYTHING, 'elicitation.requested'],
        [EVERYTHING, 'elicitation.requested'],
      ]);
      expect(announced).toBeGreaterThan(0);
      expect(new Set(written.map((d) => d.id)).size).toBe(2);
      const [first] = paused.elicitations;
      expect(written[0]).toMatchObject({
        status: 'PENDING',
        attempts: 0,
        nextAttemptAt: at(0),
        createdAt: at(0),
        lockedBy: null,
        finishedAt: null,
        lastError: null,
      });
      expect(written[0]!.payload).toEqual({
        type: 'elicitation.requested',
        timestamp: at(0),
        data: {
          elicitationId: first!.id,
          turnId: paused.turn.id,
          threadId: paused.thread.id,
          agentId: AGENT,
          ownerId: ANN,
          status: 'PENDING',
          resolution: null,
          message: first!.request.message,
          toolCall: {
            id: first!.toolCallId,
            name: first!.toolCall.name,
            toolId: first!.toolCall.toolId,
            arguments: first!.toolCall.arguments,
            annotations: first!.toolCall.annotations,
          },
          answer: null,
          answeredBy: null,
          answeredByIdentity: null,
          withdrawn: null,
          approval: null,
          escalatedAt: null,
          createdAt: at(0),
          expiresAt: paused.expiresAt,
          resolvedAt: null,
        },
      });
    });

    it('answers write elicitation.resolved (ANSWERED); the turn ending writes turn.completed or turn.failed', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      const paused = await pausedTurn(s, { elicitations: 2 });
      const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'not that one' } };
      // Answered by someone the identity provider named: the event says who, as they were then.
      const ann = { name: 'Ann Example', issuer: 'https://idp.example', subject: 'ann-1', roles: ['ops'] };
      await s.resolveElicitation({
        elicitationId: paused.elicitations[0]!.id,
        ownerId: ANN,
        answeredBy: ANN,
        answeredAs: ann,
        answer: declined,
        now: at(10),
      });
      await answer(s, paused.elicitations[1]!.id, ACCEPT, { now: at(11), lease: lease('host:1:a') });
      await s
        .turnWriter({ turnId: paused.turn.id, lease: { owner: 'host:1:a' } })
        .finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(12) });
      const failing = await runningTurn(s);
      await s
        .unleasedTurnWriter(failing.turn.id)
        .finishTurn({ status: 'FAILED', error: 'The model call failed: boom', now: at(13) });
      const cancelled = await runningTurn(s);
      await s.unleasedTurnWriter(cancelled.turn.id).finishTurn({ status: 'CANCELLED', now: at(14) });

      const written = await deliveries(store);
      expect(events(written.slice(2))).toEqual([
        [EVERYTHING, 'elicitation.resolved'],
        [EVERYTHING, 'elicitation.resolved'],
        [EVERYTHING, 'turn.completed'],
        [TURNS, 'turn.completed'],
        [EVERYTHING, 'turn.failed'],
        [TURNS, 'turn.failed'],
      ]);
      expect(dataOf(written[2]!)).toMatchObject({
        elicitationId: paused.elicitations[0]!.id,
        status: 'DECLINED',
        resolution: 'ANSWERED',
        answer: declined,
        answeredBy: ANN,
        answeredByIdentity: ann,
        resolvedAt: at(10),
      });
      expect(dataOf(written[3]!)).toMatchObject({ status: 'ACCEPTED', answer: ACCEPT, resolvedAt: at(11) });
      expect(written[4]!.payload).toEqual({
        type: 'turn.completed',
        timestamp: at(12),
        data: {
          turnId: paused.turn.id,
          threadId: paused.thread.id,
          agentId: AGENT,
          ownerId: ANN,
          status: 'COMPLETED',
          text: 'Done.',
          error: null,
          iterations: 1,
          createdAt: at(0),
          finishedAt: at(12),
        },
      });
      // One event, one id per endpoint.
      expect(written[4]!.id).not.toBe(written[5]!.id);
      expect(written[5]!.payload).toEqual(written[4]!.payload);
      expect(dataOf(written[6]!)).toMatchObject({
        status: 'FAILED',
        error: 'The model call failed: boom',
        text: null,
      });
    });

    it('CANCEL: the answered request is resolved ANSWERED, the others of its step resolved TURN_CANCELLED', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      const paused = await pausedTurn(s, { elicitations: 3 });
      await answer(s, paused.elicitations[0]!.id, ACCEPT, { now: at(5) });
      await answer(s, paused.elicitations[1]!.id, CANCEL, { now: at(6) });
      const closed = (await deliveries(store)).slice(3);
      expect(closed.map((d) => [d.eventType, dataOf(d).elicitationId, dataOf(d).status, dataOf(d).resolution])).toEqual(
        [
          ['elicitation.resolved', paused.elicitations[0]!.id, 'ACCEPTED', 'ANSWERED'],
          ['elicitation.resolved', paused.elicitations[1]!.id, 'CANCELLED', 'ANSWERED'],
          ['elicitation.resolved', paused.elicitations[2]!.id, 'CANCELLED', 'TURN_CANCELLED'],
        ],
      );
      expect(dataOf(closed[2]!)).toMatchObject({ answer: null, answeredBy: null, resolvedAt: at(6) });
      // Answering again changes nothing and writes nothing.
      await answer(s, paused.elicitations[1]!.id, CANCEL, { now: at(7) });
      expect(await deliveries(store)).toHaveLength(6);
    });

    it('expiry writes elicitation.expired per request that expired: the sweeper, a late answer, a late new message', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      const swept = await pausedTurn(s, { elicitations: 2, expiresAt: at(20) });
      await answer(s, swept.elicitations[0]!.id, DECLINE, { now: at(10) });
      const lateAnswer = await pausedTurn(s, { expiresAt: at(20) });
      const lateMessage = await pausedTurn(s, { expiresAt: at(20) });
      const superseded = await pausedTurn(s, { expiresAt: at(500) });
      const before = (await deliveries(store)).length;

      expect(await answer(s, lateAnswer.elicitations[0]!.id, ACCEPT, { now: at(21) })).toMatchObject({
        ok: false,
        code: 'EXPIRED',
        closed: { status: 'EXPIRED' },
      });
      await s.startTurn(startInput({ threadId: lateMessage.thread.id, now: at(22) }));
      await s.startTurn(startInput({ threadId: superseded.thread.id, now: at(23) }));
      expect(ids(await s.expireDueTurns(at(24), 10))).toEqual([swept.turn.id]);

      const closed = (await deliveries(store)).slice(before);
      expect(closed.map((d) => [d.eventType, dataOf(d).elicitationId, dataOf(d).status, dataOf(d).resolution])).toEqual(
        [
          ['elicitation.expired', lateAnswer.elicitations[0]!.id, 'EXPIRED', 'EXPIRED'],
          ['elicitation.expired', lateMessage.elicitations[0]!.id, 'EXPIRED', 'EXPIRED'],
          ['elicitation.resolved', superseded.elicitations[0]!.id, 'CANCELLED', 'SUPERSEDED'],
          ['elicitation.expired', swept.elicitations[1]!.id, 'EXPIRED', 'EXPIRED'],
        ],
      );
      expect(dataOf(closed[0]!)).toMatchObject({ answer: null, resolvedAt: at(21) });
    });

    it('a loop write refused for a lost lease writes no outbox row', async ({ store, second }) => {
      const s = await hooked(second);
      const { turn } = await runningTurn(s, { lease: lease('host:1:a') });
      expect(await s.claimTurn(turn.id, 'host:1:a', lease('host:2:b'), at(5))).not.toBeNull();
      const call = { ...toolCall('edit_note'), id: 'call-z' };
      const step = askingStep(call, 'elc-z');
      const refusedPause = s
        .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
        .pauseTurn({ step, elicitations: [draftFor(call, 'elc-z')], text: 'May I?', expiresAt: at(99), now: at(9) });
      expect(await rejection(refusedPause)).toBeInstanceOf(LeaseLostError);
      const refusedEnd = s
        .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
        .finishTurn({ status: 'COMPLETED', text: 'late', now: at(9) });
      expect(await rejection(refusedEnd)).toBeInstanceOf(LeaseLostError);
      expect(await deliveries(store)).toEqual([]);
      await s
        .turnWriter({ turnId: turn.id, lease: { owner: 'host:2:b' } })
        .finishTurn({ status: 'COMPLETED', text: 'on time', now: at(10) });
      expect(events(await deliveries(store))).toEqual([
        [EVERYTHING, 'turn.completed'],
        [TURNS, 'turn.completed'],
      ]);
    });

    /** `n` finished turns: 2n deliveries (n to each endpoint), created at at(0). */
    async function finishedTurns(s: Store, n: number): Promise<void> {
      for (let i = 0; i < n; i++) {
        const { turn } = await runningTurn(s);
        await s.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', text: `done ${i}`, now: at(0) });
      }
    }

    it("claims: due deliveries of the claimer's endpoints, oldest first, up to the limit; not one held by a live claim", async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      await finishedTurns(s, 3);
      const all = await deliveries(store);
      const claimed = await store.claimWebhookDeliveries('host:1:a', [TURNS], at(1), at(61), 2);
      expect(claimed.map((d) => d.id)).toEqual(
        all
          .filter((d) => d.endpoint === TURNS)
          .map((d) => d.id)
          .slice(0, 2),
      );
      expect(claimed.map((d) => dataOf(d).text)).toEqual(['done 0', 'done 1']);
      expect(claimed[0]).toMatchObject({ lockedBy: 'host:1:a', lockedUntil: at(61), status: 'PENDING' });
      const rest = await store.claimWebhookDeliveries('host:1:a', [TURNS, EVERYTHING], at(1), at(61), 10);
      expect(rest.map((d) => d.id)).toEqual(all.map((d) => d.id).filter((id) => !claimed.some((c) => c.id === id)));
      expect(await store.claimWebhookDeliveries('host:1:a', [TURNS, EVERYTHING], at(2), at(62), 10)).toEqual([]);
      expect(await store.claimWebhookDeliveries('host:1:a', [], at(2), at(62), 10)).toEqual([]);
    });

    it('outcomes: retry (due again later, counted), delivered, failed; released is not counted; only the holder records', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      await finishedTurns(s, 2);
      const [a, b, c, d] = await store.claimWebhookDeliveries('host:1:a', [EVERYTHING, TURNS], at(1), at(61), 10);
      const retry = { kind: 'retry', at: at(30), error: 'HTTP 503', statusCode: 503 } as const;
      expect(await store.recordWebhookAttempt(a!.id, 'host:2:b', retry, at(2))).toBe(false);
      expect(await store.recordWebhookAttempt(a!.id, 'host:1:a', retry, at(2))).toBe(true);
      expect(await store.recordWebhookAttempt(b!.id, 'host:1:a', { kind: 'delivered', statusCode: 204 }, at(3))).toBe(
        true,
      );
      const failed = { kind: 'failed', error: 'connection refused', statusCode: null } as const;
      expect(await store.recordWebhookAttempt(c!.id, 'host:1:a', failed, at(4))).toBe(true);
      expect(await store.recordWebhookAttempt(d!.id, 'host:1:a', { kind: 'released' }, at(5))).toBe(true);
      // Recorded once: the claim is gone.
      expect(await store.recordWebhookAttempt(b!.id, 'host:1:a', failed, at(6))).toBe(false);

      const byId = new Map((await deliveries(store)).map((row) => [row.id, row]));
      expect(byId.get(a!.id)).toMatchObject({
        status: 'PENDING',
        attempts: 1,
        nextAttemptAt: at(30),
        lastError: 'HTTP 503',
        lastStatusCode: 503,
        lockedBy: null,
        lockedUntil: null,
        finishedAt: null,
      });
      expect(byId.get(b!.id)).toMatchObject({
        status: 'DELIVERED',
        attempts: 1,
        lastError: null,
        lastStatusCode: 204,
        finishedAt: at(3),
      });
      expect(byId.get(c!.id)).toMatchObject({
        status: 'FAILED',
        attempts: 1,
        lastError: 'connection refused',
        lastStatusCode: null,
        finishedAt: at(4),
      });
      expect(byId.get(d!.id)).toMatchObject({ status: 'PENDING', attempts: 0, nextAttemptAt: at(5), lockedBy: null });

      // Due again: the released one now, the retried one at its time; ended ones never.
      expect(ids(await store.claimWebhookDeliveries('host:2:b', [EVERYTHING, TURNS], at(10), at(70), 10))).toEqual([
        d!.id,
      ]);
      expect(ids(await store.claimWebhookDeliveries('host:2:b', [EVERYTHING, TURNS], at(30), at(90), 10))).toEqual([
        a!.id,
      ]);

      // The admin list: by status, paged.
      const failedOnly = await store.listWebhookDeliveries({ status: 'FAILED' }, 10, null);
      expect(failedOnly).toMatchObject({ totalCount: 1, hasNextPage: false });
      expect(ids(failedOnly.items)).toEqual([c!.id]);
      const page1 = await store.listWebhookDeliveries({}, 3, null);
      expect(page1).toMatchObject({ totalCount: 4, hasNextPage: true });
      const page2 = await store.listWebhookDeliveries({}, 3, page1.endCursor);
      expect([...ids(page1.items), ...ids(page2.items)]).toEqual([a!.id, b!.id, c!.id, d!.id]);
      expect(page2).toMatchObject({ hasNextPage: false });
    });

    it('a claim that lapsed is taken over by another process; the first one can no longer record', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      await finishedTurns(s, 1);
      const other = await second();
      const [held] = await store.claimWebhookDeliveries('host:1:a', [TURNS], at(1), at(60), 10);
      expect(await other.claimWebhookDeliveries('host:2:b', [TURNS], at(59), at(120), 10)).toEqual([]);
      const taken = await other.claimWebhookDeliveries('host:2:b', [TURNS], at(60), at(120), 10);
      expect(ids(taken)).toEqual([held!.id]);
      expect(taken[0]).toMatchObject({ lockedBy: 'host:2:b', lockedUntil: at(120), attempts: 0 });
      const late = { kind: 'delivered', statusCode: 200 } as const;
      expect(await store.recordWebhookAttempt(held!.id, 'host:1:a', late, at(61))).toBe(false);
      expect(await other.recordWebhookAttempt(held!.id, 'host:2:b', late, at(62))).toBe(true);
    });

    it('two processes claiming at once never get the same delivery, and together get all of them', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      await finishedTurns(s, 10);
      const other = await second();
      const endpoints = [EVERYTHING, TURNS];
      const [mine, theirs] = await Promise.all([
        store.claimWebhookDeliveries('host:1:a', endpoints, at(1), at(60), 12),
        other.claimWebhookDeliveries('host:2:b', endpoints, at(1), at(60), 12),
      ]);
      const both = [...ids(mine), ...ids(theirs)];
      expect(new Set(both).size).toBe(both.length);
      const rest = [
        ...ids(await store.claimWebhookDeliveries('host:1:a', endpoints, at(1), at(60), 50)),
        ...ids(await other.claimWebhookDeliveries('host:2:b', endpoints, at(1), at(60), 50)),
      ];
      expect(sorted([...both, ...rest])).toEqual(sorted(ids(await deliveries(store))));
      expect(new Set([...both, ...rest]).size).toBe(20);
    });
  });
}
