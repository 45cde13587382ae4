// Escalation (docs/approvers.md "Escalation"): the sweeper's escalateDueElicitations marks the waiting requests whose
// escalation time has come, never one past its expiry, each exactly once (also with two stores marking at the same
// moment), and writes elicitation.escalated to the outbox in the same commit.
import { describe, expect } from 'vitest';
import type { ElicitationApproval } from '../../../src/domain/records.js';
import type { Store } from '../../../src/domain/store.js';
import type { WebhookDeliveryRecord, WebhookSubscription } from '../../../src/domain/webhook-events.js';
import { ACCEPT, ANN, approverAnswer, at, ids, pausedTurn, sorted } from './fixtures.js';
import type { StoreContext, StoreSpec } from './harness.js';

/** Four eyes, one reviewer; oncall from `escalateAt` on. */
const escalating = (escalateAt: string): ElicitationApproval => ({
  roles: ['reviewer'],
  required: 1,
  requester: 'EXCLUDED',
  escalation: { roles: ['oncall', 'admin'], at: escalateAt },
});

export function registerEscalationSpec({ it }: StoreSpec): void {
  describe('escalation', () => {
    const ESCALATED = 'http://127.0.0.1:9/escalated';
    const OTHERS = 'http://127.0.0.1:9/others';
    const subscriptions: WebhookSubscription[] = [
      { url: ESCALATED, events: ['elicitation.escalated'] },
      { url: OTHERS, events: ['elicitation.requested', 'elicitation.expired'] },
    ];
    /** A store on the same database that writes the events of `subscriptions`. */
    const hooked = (second: StoreContext['second']) => second({ webhooks: { subscriptions, written: () => {} } });
    const deliveries = async (s: Store): Promise<WebhookDeliveryRecord[]> =>
      (await s.listWebhookDeliveries({}, 500, null)).items;
    const escalations = async (s: Store) =>
      (await deliveries(s)).filter((d) => d.eventType === 'elicitation.escalated');

    it('marks the waiting requests whose escalation time has come, once; not before, not without one, not decided', async ({
      store,
    }) => {
      const due = await pausedTurn(store, { elicitations: 2, approval: escalating(at(900)) });
      const later = await pausedTurn(store, { approval: escalating(at(1800)) });
      const without = await pausedTurn(store, { approval: { ...escalating(at(900)), escalation: null } });
      const plain = await pausedTurn(store);
      const decided = await pausedTurn(store, { approval: escalating(at(900)) });
      await approverAnswer(store, decided.elicitations[0]!.id, 'rita', ACCEPT, { now: at(10) });

      expect(await store.escalateDueElicitations(at(899), 10)).toEqual([]);
      const escalated = await store.escalateDueElicitations(at(900), 10);
      expect(escalated).toEqual(due.elicitations.map((e) => ({ ...e, escalatedAt: at(900) })));
      // As stored, for every read; the request still waits.
      expect(await store.listTurnElicitations(due.turn.id)).toEqual(escalated);
      expect(await store.getElicitation(due.elicitations[0]!.id, ANN)).toEqual(escalated[0]);
      expect((await store.loadTurn(due.turn.id))!.status).toBe('PAUSED');
      // Once: a later sweep does not mark them again.
      expect(await store.escalateDueElicitations(at(901), 10)).toEqual([]);
      expect((await store.getElicitation(due.elicitations[1]!.id, ANN))!.escalatedAt).toBe(at(900));

      expect(ids(await store.escalateDueElicitations(at(1800), 10))).toEqual(ids(later.elicitations));
      for (const untouched of [without, plain, decided]) {
        for (const e of await store.listTurnElicitations(untouched.turn.id)) expect(e.escalatedAt).toBeNull();
      }
      expect(await store.escalateDueElicitations(at(3599), 10)).toEqual([]);
    });

    it('never overtakes the expiry: a request past its expiry is not escalated, and the sweeper expires it', async ({
      store,
    }) => {
      const lapsed = await pausedTurn(store, { approval: escalating(at(60)), expiresAt: at(120) });
      // The server was down past both times: the first sweep comes at at(500).
      expect(await store.escalateDueElicitations(at(500), 10)).toEqual([]);
      expect(ids(await store.expireDueTurns(at(500), 10))).toEqual([lapsed.turn.id]);
      expect(await store.escalateDueElicitations(at(501), 10)).toEqual([]);
      expect(await store.getElicitation(lapsed.elicitations[0]!.id, ANN)).toMatchObject({
        status: 'EXPIRED',
        escalatedAt: null,
      });
      // At its expiry exactly it is expired already (an answer then is too late).
      const edge = await pausedTurn(store, { approval: escalating(at(60)), expiresAt: at(120) });
      expect(await store.escalateDueElicitations(at(120), 10)).toEqual([]);
      expect(ids(await store.escalateDueElicitations(at(119), 10))).toEqual(ids(edge.elicitations));
    });

    it('an escalated request is answered as before; its escalation stays recorded', async ({ store }) => {
      const paused = await pausedTurn(store, { approval: escalating(at(900)) });
      const id = paused.elicitations[0]!.id;
      await store.escalateDueElicitations(at(900), 10);
      const answered = await approverAnswer(store, id, 'otto', ACCEPT, { now: at(901) });
      expect(answered.ok && answered.kind === 'resume' && answered.elicitation).toMatchObject({
        status: 'ACCEPTED',
        resolvedBy: 'otto',
        escalatedAt: at(900),
      });
    });

    it('marks at most `limit` per call, those due first; the next calls take the rest', async ({ store }) => {
      const paused = [];
      for (let i = 0; i < 5; i++) paused.push(await pausedTurn(store, { approval: escalating(at(900 - i)) }));
      const first = await store.escalateDueElicitations(at(1000), 2);
      expect(sorted(ids(first))).toEqual(sorted(ids([...paused[4]!.elicitations, ...paused[3]!.elicitations])));
      const rest = [
        ...(await store.escalateDueElicitations(at(1000), 2)),
        ...(await store.escalateDueElicitations(at(1000), 2)),
      ];
      expect(sorted(ids(rest))).toEqual(sorted(ids(paused.slice(0, 3).flatMap((p) => p.elicitations))));
      expect(await store.escalateDueElicitations(at(1000), 2)).toEqual([]);
    });

    it('writes elicitation.escalated to the outbox in its commit, for the endpoints subscribed to it', async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      const paused = await pausedTurn(s, { approval: escalating(at(900)) });
      const [request] = paused.elicitations;
      expect(await escalations(store)).toEqual([]);
      const [escalated] = await s.escalateDueElicitations(at(900), 10);
      const written = await escalations(store);
      expect(written.map((d) => d.endpoint)).toEqual([ESCALATED]);
      expect(written[0]).toMatchObject({ status: 'PENDING', createdAt: at(900), nextAttemptAt: at(900) });
      expect(written[0]!.payload).toMatchObject({
        type: 'elicitation.escalated',
        timestamp: at(900),
        data: {
          elicitationId: request!.id,
          turnId: paused.turn.id,
          ownerId: ANN,
          status: 'PENDING',
          resolution: null,
          answer: null,
          expiresAt: paused.expiresAt,
        },
      });
      expect(escalated!.escalatedAt).toBe(at(900));
      // A store without webhooks escalates without writing any.
      const quiet = await pausedTurn(store, { approval: escalating(at(950)) });
      expect(ids(await store.escalateDueElicitations(at(950), 10))).toEqual(ids(quiet.elicitations));
      expect(await escalations(store)).toHaveLength(1);
    });

    it("every elicitation event carries the request's policy and its escalation: requested, escalated, expired", async ({
      store,
      second,
    }) => {
      const s = await hooked(second);
      const policy = escalating(at(900));
      const paused = await pausedTurn(s, { approval: policy, expiresAt: at(1200) });
      await s.escalateDueElicitations(at(900), 10);
      await s.expireDueTurns(at(1200), 10);
      const data = (await deliveries(store)).map((d) => [d.eventType, d.payload.data]);
      const { id } = paused.elicitations[0]!;
      expect(data).toEqual([
        ['elicitation.requested', expect.objectContaining({ elicitationId: id, approval: policy, escalatedAt: null })],
        [
          'elicitation.escalated',
          expect.objectContaining({ elicitationId: id, approval: policy, escalatedAt: at(900) }),
        ],
        [
          'elicitation.expired',
          expect.objectContaining({ elicitationId: id, status: 'EXPIRED', approval: policy, escalatedAt: at(900) }),
        ],
      ]);
    });

    it('two stores escalating at the same moment: each request is marked once, with one event', async ({
      store,
      second,
    }) => {
      const [one, two] = [await hooked(second), await hooked(second)];
      const paused = [];
      for (let i = 0; i < 6; i++)
        paused.push(await pausedTurn(one, { elicitations: 2, approval: escalating(at(900)) }));
      const requests = paused.flatMap((p) => p.elicitations);
      const rounds = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? two : one).escalateDueElicitations(at(900 + (i % 3)), 5)),
      );
      const marked = rounds.flat();
      const left = await one.escalateDueElicitations(at(1000), 100);
      // Every request marked by exactly one call, at that call's time; the events match one to one.
      expect(sorted(ids([...marked, ...left]))).toEqual(sorted(ids(requests)));
      const events = await escalations(store);
      expect(sorted(events.map((d) => (d.payload.data as { elicitationId: string }).elicitationId))).toEqual(
        sorted(ids(requests)),
      );
      for (const e of [...marked, ...left]) {
        expect((await store.getElicitation(e.id, ANN))!.escalatedAt).toBe(e.escalatedAt);
        const event = events.find((d) => (d.payload.data as { elicitationId: string }).elicitationId === e.id)!;
        expect(event.payload.timestamp).toBe(e.escalatedAt);
      }
      expect(await two.escalateDueElicitations(at(2000), 100)).toEqual([]);
    });
  });
}
