// Turn maintenance: the sweeper expiring due PAUSED turns in batches, retention of expired elicitations, and the
// leases by which a process holds its RUNNING turns (renew, hold) and another process recovers them (claimTurn).
import { describe, expect } from 'vitest';
import { toolText } from '../../../src/domain/gate/messages.js';
import type { ElicitationAnswer, ElicitationApproval } from '../../../src/domain/records.js';
import {
  at,
  ANN,
  ACCEPT,
  lease,
  runningTurn,
  pausedTurn,
  answer,
  approverAnswer,
  toolAnswers,
  closing,
  ids,
  sorted,
  statusesOf,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerMaintenanceSpec({ it }: StoreSpec): void {
  describe('expiry and retention', () => {
    it('expireDueTurns expires the PAUSED turns due at `now`, closing their elicitations and answering their calls', async ({
      store,
    }) => {
      const due = [
        await pausedTurn(store, { expiresAt: at(10), elicitations: 2, mixed: true }),
        await pausedTurn(store, { expiresAt: at(30) }),
      ];
      const later = await pausedTurn(store, { expiresAt: at(31) });
      const running = await runningTurn(store);
      const done = await runningTurn(store);
      await store.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(1) });
      const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'skip it' } };
      await answer(store, due[0]!.elicitations[1]!.id, declined, { now: at(5) });

      const expired = await store.expireDueTurns(at(30), 10);
      expect(sorted(ids(expired))).toEqual(sorted(ids(due.map((p) => p.turn))));
      for (const turn of expired) {
        expect(turn).toMatchObject({ status: 'EXPIRED', step: null, updatedAt: at(30) });
        expect(await store.loadTurn(turn.id)).toEqual(turn);
      }
      const [first] = due;
      expect(await statusesOf(store, first!.turn.id)).toEqual([
        [first!.elicitations[0]!.id, 'EXPIRED'],
        [first!.elicitations[1]!.id, 'DECLINED'],
      ]);
      expect(await toolAnswers(store, first!.turn.id)).toEqual(
        closing(first!.step, 'expired', { [first!.elicitations[1]!.id]: declined }),
      );
      expect((await toolAnswers(store, first!.turn.id)).map(([, text]) => text)).toEqual([
        toolText.expired('lookup'),
        toolText.denied('wipe', 'policy says no'),
        toolText.expired('edit_1'),
        toolText.declined('edit_2', 'skip it'),
      ]);
      expect(await store.loadTurn(later.turn.id)).toEqual(later.turn);
      expect(await store.loadTurn(running.turn.id)).toMatchObject({ status: 'RUNNING' });
      expect(await store.loadTurn(done.turn.id)).toMatchObject({ status: 'COMPLETED' });

      expect(await store.expireDueTurns(at(30), 10)).toEqual([]);
      expect(await toolAnswers(store, first!.turn.id)).toHaveLength(4);
      expect(ids(await store.expireDueTurns(at(31), 10))).toEqual([later.turn.id]);
    });

    it('expireDueTurns expires at most `limit` turns per call; the next calls take the rest', async ({ store }) => {
      const due: string[] = [];
      for (let i = 0; i < 5; i++) due.push((await pausedTurn(store, { expiresAt: at(10 + i) })).turn.id);
      const first = await store.expireDueTurns(at(100), 2);
      const second = await store.expireDueTurns(at(100), 2);
      const third = await store.expireDueTurns(at(100), 2);
      expect([first.length, second.length, third.length]).toEqual([2, 2, 1]);
      expect(sorted(ids([...first, ...second, ...third]))).toEqual(sorted(due));
      expect(await store.expireDueTurns(at(100), 2)).toEqual([]);
      for (const turnId of due) expect(await toolAnswers(store, turnId)).toHaveLength(1);
    });

    it("deleteExpiredElicitations deletes an expired request's approvers' answers and role rows with it", async ({
      store,
      sql,
    }) => {
      const policy: ElicitationApproval = { roles: ['reviewer'], required: 2, requester: 'ALSO', escalation: null };
      const expiring = await pausedTurn(store, { approval: policy, expiresAt: at(60) });
      const waiting = await pausedTurn(store, { approval: policy, expiresAt: at(10_000) });
      const [gone, kept] = [expiring.elicitations[0]!.id, waiting.elicitations[0]!.id];
      await approverAnswer(store, gone, 'rita', ACCEPT, { now: at(10) });
      await approverAnswer(store, kept, 'rita', ACCEPT, { now: at(10) });
      expect(await store.expireDueTurns(at(60), 10)).toHaveLength(1);
      // Expiry stops offering it to its roles; a role row an earlier version left with it goes with it all the same.
      await sql(`INSERT INTO elicitation_approver_roles (elicitation_id, role, from_time)
        VALUES ('${gone}', 'reviewer', '${at(0)}')`);
      const rolesOf = async (id: string) =>
        (await sql(`SELECT role FROM elicitation_approver_roles WHERE elicitation_id = '${id}'`)).map(
          (row) => row.role,
        );
      expect(await store.listApproverAnswers([gone])).toHaveLength(1);

      expect(await store.deleteExpiredElicitations(at(100), 10)).toBe(1);
      expect(await store.loadElicitation(gone)).toBeNull();
      expect(await store.listApproverAnswers([gone])).toEqual([]);
      expect(await rolesOf(gone)).toEqual([]);
      // The waiting request keeps its answers and its roles.
      expect(await store.listApproverAnswers([kept])).toEqual([expect.objectContaining({ approverId: 'rita' })]);
      expect(await rolesOf(kept)).toEqual(['reviewer']);
    });

    it('deleteExpiredElicitations deletes at most `limit` EXPIRED ones that expired before `before`, nothing else', async ({
      store,
    }) => {
      const expiring = [
        await pausedTurn(store, { expiresAt: at(10) }),
        await pausedTurn(store, { expiresAt: at(20) }),
        await pausedTurn(store, { expiresAt: at(30) }),
      ];
      const accepted = await pausedTurn(store, { expiresAt: at(15) });
      await answer(store, accepted.elicitations[0]!.id, ACCEPT, { now: at(5) });
      expect(await store.expireDueTurns(at(35), 10)).toHaveLength(3);
      const lapsed = await pausedTurn(store, { expiresAt: at(40) }); // PENDING as stored, past expiry by at(100)
      const remaining = async () =>
        (await Promise.all([...expiring, accepted, lapsed].map((p) => store.listTurnElicitations(p.turn.id)))).map(
          (list) => list.length,
        );

      expect(await store.deleteExpiredElicitations(at(20), 10)).toBe(1); // expired before at(20): at(10) only
      expect(await remaining()).toEqual([0, 1, 1, 1, 1]);
      expect(await store.deleteExpiredElicitations(at(100), 1)).toBe(1);
      expect(await store.deleteExpiredElicitations(at(100), 1)).toBe(1);
      expect(await store.deleteExpiredElicitations(at(100), 1)).toBe(0);
      expect(await remaining()).toEqual([0, 0, 0, 1, 1]);
      expect(await store.getElicitation(lapsed.elicitations[0]!.id, ANN)).toMatchObject({ status: 'PENDING' });
      expect(await store.loadTurn(expiring[0]!.turn.id)).toMatchObject({ status: 'EXPIRED' });
    });
  });

  describe('leases', () => {
    it('listRunningTurns and listRunningLeases read the RUNNING turns only, with their leases', async ({ store }) => {
      const held = await runningTurn(store, { lease: lease('host:1:a', at(30)) });
      const unheld = await runningTurn(store);
      await pausedTurn(store, { lease: lease('host:1:a') });
      const done = await runningTurn(store, { lease: lease('host:1:a') });
      await store.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });

      const running = await store.listRunningTurns();
      expect(sorted(ids(running))).toEqual(sorted([held.turn.id, unheld.turn.id]));
      expect(running.find((t) => t.id === held.turn.id)).toEqual(held.turn);
      const leases = await store.listRunningLeases();
      expect([...leases].sort((a, b) => a.turnId.localeCompare(b.turnId))).toEqual(
        [
          { turnId: held.turn.id, owner: 'host:1:a', expiresAt: at(30), recoveries: 0 },
          { turnId: unheld.turn.id, owner: null, expiresAt: null, recoveries: 0 },
        ].sort((a, b) => a.turnId.localeCompare(b.turnId)),
      );
    });

    it('claimTurn is compare-and-swap on the holder: the expected one gets the turn and a recovery, another gets null', async ({
      store,
    }) => {
      const { turn } = await runningTurn(store, { lease: lease('host:1:dead', at(30)) });
      expect(await store.claimTurn(turn.id, 'host:9:wrong', lease('host:2:b'), at(40))).toBeNull();
      expect(await store.claimTurn(turn.id, null, lease('host:2:b'), at(40))).toBeNull();
      expect(await store.holdsLease(turn.id, 'host:1:dead')).toBe(true);

      const claimed = await store.claimTurn(turn.id, 'host:1:dead', lease('host:2:b', at(70)), at(40));
      expect(claimed).toEqual({ turn: { ...turn, updatedAt: at(40) }, recoveries: 1 });
      expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(true);
      expect(await store.holdsLease(turn.id, 'host:1:dead')).toBe(false);
      expect(await store.listRunningLeases()).toEqual([
        { turnId: turn.id, owner: 'host:2:b', expiresAt: at(70), recoveries: 1 },
      ]);
      expect(await store.claimTurn(turn.id, 'host:1:dead', lease('host:3:c'), at(41))).toBeNull();
      const again = await store.claimTurn(turn.id, 'host:2:b', lease('host:3:c', at(90)), at(60));
      expect(again?.recoveries).toBe(2);
      expect(await store.listRunningLeases()).toEqual([
        { turnId: turn.id, owner: 'host:3:c', expiresAt: at(90), recoveries: 2 },
      ]);
    });

    it('claimTurn takes a turn without a lease with expectedOwner null; a turn not RUNNING or unknown is nobody’s', async ({
      store,
    }) => {
      const { turn } = await runningTurn(store);
      expect(await store.claimTurn(turn.id, null, lease('host:2:b'), at(5))).toMatchObject({ recoveries: 1 });
      expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(true);
      const paused = await pausedTurn(store, { lease: lease('host:1:a') });
      expect(await store.claimTurn(paused.turn.id, 'host:1:a', lease('host:2:b'), at(5))).toBeNull();
      expect(await store.claimTurn(paused.turn.id, null, lease('host:2:b'), at(5))).toBeNull();
      expect(await store.loadTurn(paused.turn.id)).toEqual(paused.turn);
      expect(await store.claimTurn('turn-none', null, lease('host:2:b'), at(5))).toBeNull();
    });

    it("renewLeases extends every RUNNING turn's lease the owner holds, and counts them", async ({ store }) => {
      const mine = [
        await runningTurn(store, { lease: lease('host:1:a', at(30)) }),
        await runningTurn(store, { lease: lease('host:1:a', at(30)) }),
      ];
      const theirs = await runningTurn(store, { lease: lease('host:2:b', at(30)) });
      await pausedTurn(store, { lease: lease('host:1:a', at(30)) });
      expect(await store.renewLeases('host:1:a', at(60), at(20))).toBe(2);
      expect(await store.renewLeases('host:9:none', at(60), at(20))).toBe(0);
      const leases = new Map((await store.listRunningLeases()).map((l) => [l.turnId, l]));
      for (const { turn } of mine) expect(leases.get(turn.id)).toMatchObject({ owner: 'host:1:a', expiresAt: at(60) });
      expect(leases.get(theirs.turn.id)).toMatchObject({ owner: 'host:2:b', expiresAt: at(30) });
    });

    it('holdsLease: true for the holder of a RUNNING turn only', async ({ store }) => {
      const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
      expect(await store.holdsLease(turn.id, 'host:1:a')).toBe(true);
      expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(false);
      expect(await store.holdsLease('turn-none', 'host:1:a')).toBe(false);
      const paused = await pausedTurn(store, { lease: lease('host:1:a') });
      expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(false);
    });
  });
}
