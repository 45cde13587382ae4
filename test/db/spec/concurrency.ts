// Two stores on one database (two processes) racing the same change with Promise.all: every race has one winner, or
// ends as some serial order would have, never with both outcomes. On PostgreSQL these run truly in parallel.
import { describe, expect } from 'vitest';
import type { ApprovalGrantRecord } from '../../../src/domain/records.js';
import { GrantLapsedError, LeaseLostError } from '../../../src/domain/store.js';
import {
  at,
  ANN,
  ACCEPT,
  CANCEL,
  lease,
  assistantMessage,
  outcome,
  startInput,
  runningTurn,
  pausedTurn,
  answer,
  toolAnswers,
  closing,
  ids,
  sorted,
  statusesOf,
  rejection,
  grantOf,
  turnWithCall,
  type Paused,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerConcurrencySpec({ it }: StoreSpec): void {
  describe('concurrency: two stores on one database', () => {
    it('(a) the two elicitations of a turn answered at the same instant from two stores: exactly one resumes', async ({
      store,
      second,
    }) => {
      const other = await second();
      const paused = await pausedTurn(store, { elicitations: 2 });
      const [e1, e2] = paused.elicitations;
      const results = await Promise.all([
        answer(store, e1!.id, ACCEPT, { now: at(10), lease: lease('host:1:a') }),
        answer(other, e2!.id, ACCEPT, { now: at(10), lease: lease('host:2:b') }),
      ]);
      expect(results.map(outcome).sort()).toEqual(['recorded', 'resume']);
      const winner = outcome(results[0]!) === 'resume' ? 'host:1:a' : 'host:2:b';
      expect(await store.loadTurn(paused.turn.id)).toMatchObject({ status: 'RUNNING' });
      expect(await statusesOf(store, paused.turn.id)).toEqual([
        [e1!.id, 'ACCEPTED'],
        [e2!.id, 'ACCEPTED'],
      ]);
      expect(await store.listRunningLeases()).toEqual([
        { turnId: paused.turn.id, owner: winner, expiresAt: at(600), recoveries: 0 },
      ]);
    });

    it('(b) the same elicitation ACCEPTed 10 times at once across both stores: one resume, never two', async ({
      store,
      second,
    }) => {
      const other = await second();
      const paused = await pausedTurn(store);
      const id = paused.elicitations[0]!.id;
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          answer(i % 2 ? other : store, id, ACCEPT, { now: at(10), lease: lease(`host:${i}:x`) }),
        ),
      );
      const resumes = results.flatMap((r, i) => (outcome(r) === 'resume' ? [i] : []));
      expect(resumes).toHaveLength(1);
      for (const r of results) expect(['resume', 'duplicate', 'recorded']).toContain(outcome(r));
      expect(await store.holdsLease(paused.turn.id, `host:${resumes[0]}:x`)).toBe(true);
      expect(await store.listRunningLeases()).toHaveLength(1);
      expect(await store.getElicitation(id, ANN)).toMatchObject({ status: 'ACCEPTED', response: ACCEPT });
    });

    it('(c) two turns started at once on a thread with no active turn: one starts, the other is THREAD_BUSY', async ({
      store,
      second,
    }) => {
      const other = await second();
      const { thread, turn } = await runningTurn(store);
      await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
      const results = await Promise.all([
        store.startTurn(startInput({ threadId: thread.id, turnId: 'turn-a', now: at(5) })),
        other.startTurn(startInput({ threadId: thread.id, turnId: 'turn-b', now: at(5) })),
      ]);
      const started = results.filter((r) => r.ok);
      expect(started).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, code: 'THREAD_BUSY' }]);
      const turns = await store.listTurns(thread.id);
      expect(turns.filter((t) => t.status === 'RUNNING' || t.status === 'PAUSED')).toHaveLength(1);
      expect(turns).toHaveLength(2);
      const users = (await store.listThreadMessages(thread.id)).filter((m) => m.role === 'USER');
      expect(users).toHaveLength(2);
    });

    it('(c′) two turns started at once on a thread with a PAUSED turn: one supersedes it, once', async ({
      store,
      second,
    }) => {
      const other = await second();
      const paused = await pausedTurn(store, { elicitations: 2, mixed: true });
      const results = await Promise.all([
        store.startTurn(startInput({ threadId: paused.thread.id, turnId: 'turn-a', now: at(5) })),
        other.startTurn(startInput({ threadId: paused.thread.id, turnId: 'turn-b', now: at(5) })),
      ]);
      const started = results.filter((r) => r.ok);
      expect(started).toHaveLength(1);
      expect(started[0]!.ok && started[0]!.superseded).toMatchObject({ id: paused.turn.id, status: 'CANCELLED' });
      expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, code: 'THREAD_BUSY' }]);
      expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'superseded'));
      const active = (await store.listTurns(paused.thread.id)).filter((t) => t.status === 'RUNNING');
      expect(active).toHaveLength(1);
    });

    it.for([
      ['a new thread', false],
      ['an existing thread', true],
    ] as const)(
      '(c″) ten starts with one idempotency key at once across both stores, on %s: one turn, all get it',
      async ([, existing], { store, second }) => {
        const other = await second();
        let threadId: string | null = null;
        if (existing) {
          const { thread, turn } = await runningTurn(store);
          await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
          threadId = thread.id;
        }
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? other : store).startTurn(
              startInput({ threadId, idempotencyKey: 'key-1', now: at(5), lease: lease(`host:${i}:x`) }),
            ),
          ),
        );
        const turnIds = results.map((r) => (r.ok ? r.turn.id : r.code));
        expect(new Set(turnIds).size).toBe(1);
        expect(results.filter((r) => r.ok && !r.replayed)).toHaveLength(1);
        const [result] = results;
        if (!result?.ok) throw new Error('refused');
        const turns = await store.listTurns(result.thread.id);
        expect(ids(turns).filter((id) => id === result.turn.id)).toHaveLength(1);
        expect(turns.filter((t) => t.status === 'RUNNING')).toHaveLength(1);
        expect((await store.listThreads(ANN, null, 10, null)).items).toHaveLength(1);
        const users = (await store.listThreadMessages(result.thread.id)).filter((m) => m.turnId === result.turn.id);
        expect(users).toHaveLength(1);
      },
    );

    it('(d) two stores expiring the same due turns at once: each turn expired exactly once', async ({
      store,
      second,
    }) => {
      const other = await second();
      const due: Paused[] = [];
      for (let i = 0; i < 6; i++)
        due.push(await pausedTurn(store, { elicitations: 2, mixed: i % 2 === 0, expiresAt: at(10) }));
      const [mine, theirs] = await Promise.all([store.expireDueTurns(at(20), 100), other.expireDueTurns(at(20), 100)]);
      const expired = ids([...mine, ...theirs]);
      expect(expired).toHaveLength(due.length);
      expect(sorted(expired)).toEqual(sorted(ids(due.map((p) => p.turn))));
      for (const p of due) {
        expect(await store.loadTurn(p.turn.id)).toMatchObject({ status: 'EXPIRED' });
        expect(await toolAnswers(store, p.turn.id)).toEqual(closing(p.step, 'expired'));
        expect(await statusesOf(store, p.turn.id)).toEqual(p.elicitations.map((e) => [e.id, 'EXPIRED']));
      }
    });

    it('(e) claimTurn from both stores with the same expected owner at once: exactly one wins', async ({
      store,
      second,
    }) => {
      const other = await second();
      const { turn } = await runningTurn(store, { lease: lease('host:1:dead') });
      const claims = await Promise.all([
        store.claimTurn(turn.id, 'host:1:dead', lease('host:2:a'), at(40)),
        other.claimTurn(turn.id, 'host:1:dead', lease('host:3:b'), at(40)),
        store.claimTurn(turn.id, 'host:1:dead', lease('host:4:c'), at(40)),
        other.claimTurn(turn.id, 'host:1:dead', lease('host:5:d'), at(40)),
      ]);
      const winners = claims.flatMap((c, i) => (c ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(claims[winners[0]!]!.recoveries).toBe(1);
      const owner = `host:${winners[0]! + 2}:${'abcd'[winners[0]!]}`;
      expect(await store.listRunningLeases()).toEqual([{ turnId: turn.id, owner, expiresAt: at(600), recoveries: 1 }]);
    });

    describe.each([
      ['the takeover is asked for first', true],
      ['the old holder writes first', false],
    ])('(f) a lease taken over while its old holder writes (%s)', (_title, claimFirst) => {
      it('each old write committed before the takeover, or threw LeaseLostError and stored nothing; none after it', async ({
        store,
        second,
      }) => {
        const other = await second();
        const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
        // A writes one step after another, each setting the iteration count to its number: the turn the claim
        // returns (as of its commit) tells how many of A's writes committed before the takeover.
        const outcomes: boolean[] = [];
        const writesOfA = async () => {
          for (let i = 1; i <= 4; i++) {
            try {
              await store
                .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
                .appendAssistantMessage({ message: assistantMessage(`A${i}`), iterations: i, now: at(10) });
              outcomes.push(true);
            } catch (error) {
              expect(error).toBeInstanceOf(LeaseLostError);
              outcomes.push(false);
            }
          }
        };
        const claim = () => other.claimTurn(turn.id, 'host:1:a', lease('host:2:b'), at(10));
        let claimed: Awaited<ReturnType<typeof claim>>;
        if (claimFirst) [claimed] = await Promise.all([claim(), writesOfA()]);
        else [, claimed] = await Promise.all([writesOfA(), claim()]);

        expect(claimed).toMatchObject({ recoveries: 1 });
        const before = claimed!.turn.iterations;
        expect(outcomes).toEqual([1, 2, 3, 4].map((i) => i <= before));
        expect(await store.loadTurn(turn.id)).toMatchObject({ status: 'RUNNING', iterations: before });

        // After the takeover: the new holder writes, the old one cannot.
        await other
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:2:b' } })
          .appendAssistantMessage({ message: assistantMessage('B'), iterations: 10, now: at(11) });
        expect(
          await rejection(
            store
              .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
              .setIterations({ iterations: 99, now: at(12) }),
          ),
        ).toBeInstanceOf(LeaseLostError);
        const texts = (await store.listTurnMessages(turn.id)).filter((m) => m.role === 'ASSISTANT').map((m) => m.text);
        expect(texts).toEqual([...outcomes.flatMap((ok, i) => (ok ? [`A${i + 1}`] : [])), 'B']);
        expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 10 });
        expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(true);
      });
    });

    it('(g) a CANCEL and the sweeper racing on one turn: it closes once, CANCELLED or EXPIRED', async ({
      store,
      second,
    }) => {
      const other = await second();
      const paused = await pausedTurn(store, { elicitations: 2, expiresAt: at(60) });
      const [answered, swept] = await Promise.all([
        answer(store, paused.elicitations[0]!.id, CANCEL, { now: at(59) }),
        other.expireDueTurns(at(61), 10),
      ]);
      const turn = await store.loadTurn(paused.turn.id);
      if (answered.ok && answered.kind === 'cancelled') {
        expect(swept).toEqual([]);
        expect(turn).toMatchObject({ status: 'CANCELLED' });
        expect(await toolAnswers(store, paused.turn.id)).toEqual(
          closing(paused.step, 'cancelled', { [paused.elicitations[0]!.id]: CANCEL }),
        );
      } else {
        expect(answered).toMatchObject({ ok: false, code: 'EXPIRED', closed: null });
        expect(ids(swept)).toEqual([paused.turn.id]);
        expect(turn).toMatchObject({ status: 'EXPIRED' });
        expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'expired'));
      }
    });

    it('(h) the last answer and a new message racing on one thread: the turn resumes or is superseded, not both', async ({
      store,
      second,
    }) => {
      const other = await second();
      const paused = await pausedTurn(store);
      const [answered, started] = await Promise.all([
        answer(store, paused.elicitations[0]!.id, ACCEPT, { now: at(10), lease: lease('host:1:a') }),
        other.startTurn(startInput({ threadId: paused.thread.id, turnId: 'turn-new', now: at(10) })),
      ]);
      if (answered.ok && answered.kind === 'resume') {
        expect(started).toEqual({ ok: false, code: 'THREAD_BUSY' });
        expect(await store.loadTurn('turn-new')).toBeNull();
        expect(await toolAnswers(store, paused.turn.id)).toEqual([]);
      } else {
        expect(outcome(answered)).toBe('ALREADY_RESOLVED');
        expect(started).toMatchObject({ ok: true, superseded: { id: paused.turn.id, status: 'CANCELLED' } });
        expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'superseded'));
      }
      const active = (await store.listTurns(paused.thread.id)).filter((t) => t.status === 'RUNNING');
      expect(active).toHaveLength(1);
    });

    it('(i) a revoke racing a start under the grant, 20 times: the start committed before the revoke (its use recorded) or was refused and journaled nothing', async ({
      store,
      second,
    }) => {
      const other = await second();
      const outcomes = { started: 0, refused: 0 };
      for (let round = 0; round < 20; round++) {
        const grantId = `grt-race-${round}`;
        await grantOf(store, grantId, { scope: 'AGENT' });
        const { turnId, callId } = await turnWithCall(store);
        // Both at one instant: the stores take `now` from their caller, so the order that matters is the commits'.
        const now = at(100 + round);
        const [starter, revoker] = round % 2 ? [store, other] : [other, store];
        const start = () => starter.unleasedTurnWriter(turnId).markToolStarted({ toolCallId: callId, grantId, now });
        const revoke = () => revoker.revokeApprovalGrant(grantId, ANN, now);
        const [started, revoked] =
          round % 4 < 2
            ? await Promise.allSettled([start(), revoke()])
            : await Promise.allSettled([revoke(), start()]).then(([r, s]) => [s, r] as const);

        expect(revoked).toMatchObject({ status: 'fulfilled', value: { id: grantId, revokedAt: now } });
        const revokedAt = (revoked as PromiseFulfilledResult<ApprovalGrantRecord>).value.revokedAt!;
        const uses = await store.listGrantUses([grantId]);
        if (started.status === 'fulfilled') {
          outcomes.started++;
          expect(started.value).toBe(true);
          expect(uses).toEqual([{ grantId, turnId, toolCallId: callId, startedAt: now }]);
          expect(uses[0]!.startedAt <= revokedAt).toBe(true);
          expect(await store.listUnfinishedToolCalls(turnId)).toEqual([callId]);
        } else {
          outcomes.refused++;
          expect(started.reason).toBeInstanceOf(GrantLapsedError);
          expect(uses).toEqual([]);
          expect(await store.listUnfinishedToolCalls(turnId)).toEqual([]);
        }
        // After the revoke, the grant lets nothing else start, from either store.
        const later = await turnWithCall(store);
        for (const s of [store, other]) {
          const refused = await rejection(
            s.unleasedTurnWriter(later.turnId).markToolStarted({ toolCallId: later.callId, grantId, now: at(200) }),
          );
          expect(refused).toBeInstanceOf(GrantLapsedError);
        }
        expect(await store.listUnfinishedToolCalls(later.turnId)).toEqual([]);
      }
      expect(outcomes.started + outcomes.refused).toBe(20);
    });
  });
}
