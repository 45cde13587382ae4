// Idempotency keys on startTurn: a client that retries after an error must get the turn its first request started,
// not a second one; a key reused for another request is refused, a refused start claims no key, retention deletes keys.
import { describe, expect } from 'vitest';
import type { Store } from '../../../src/domain/store.js';
import { at, ANN, BOB, SIDE_AGENT, toolCall, askingStep, draftFor, startInput, runningTurn, ids } from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerIdempotencySpec({ it }: StoreSpec): void {
  describe('idempotency keys (startTurn)', () => {
    /** Every thread and turn of the owner, with each thread's USER messages: what a start may have added. */
    async function everything(store: Store, ownerId = ANN) {
      const threads = (await store.listThreads(ownerId, null, 100, null)).items;
      return Promise.all(
        threads.map(async (thread) => ({
          thread: thread.id,
          turns: ids(await store.listTurns(thread.id)),
          users: (await store.listThreadMessages(thread.id)).filter((m) => m.role === 'USER').map((m) => m.text),
        })),
      );
    }

    it('the same request again returns the turn it started, as it is now, and writes nothing', async ({ store }) => {
      const first = await runningTurn(store, { idempotencyKey: 'key-1', message: 'Hello', now: at(1) });
      const paused = await store.unleasedTurnWriter(first.turn.id).pauseTurn({
        step: askingStep(toolCall('edit'), 'elc-1'),
        elicitations: [draftFor(toolCall('edit'), 'elc-1')],
        text: 'Allow it?',
        expiresAt: at(3600),
        now: at(2),
      });
      const before = await everything(store);
      const again = await store.startTurn(
        startInput({ idempotencyKey: 'key-1', message: 'Hello', now: at(3), turnId: 'turn-again' }),
      );
      expect(again).toEqual({ ok: true, replayed: true, thread: first.thread, turn: paused.turn });
      expect(await store.loadTurn('turn-again')).toBeNull();
      expect(await everything(store)).toEqual(before);
      expect(before).toEqual([{ thread: first.thread.id, turns: [first.turn.id], users: ['Hello'] }]);
    });

    it('on an existing thread: the key finds its turn even when the thread now runs another (no THREAD_BUSY)', async ({
      store,
    }) => {
      const { thread, turn } = await runningTurn(store);
      await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
      const keyed = await runningTurn(store, { threadId: thread.id, idempotencyKey: 'key-1', now: at(2) });
      await store.unleasedTurnWriter(keyed.turn.id).finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(3) });
      const later = await runningTurn(store, { threadId: thread.id, now: at(4) });
      const again = await store.startTurn(startInput({ threadId: thread.id, idempotencyKey: 'key-1' }));
      expect(again).toMatchObject({
        ok: true,
        replayed: true,
        thread,
        turn: { id: keyed.turn.id, status: 'COMPLETED' },
      });
      expect(ids(await store.listTurns(thread.id))).toEqual([turn.id, keyed.turn.id, later.turn.id]);
      expect(await store.loadTurn(later.turn.id)).toMatchObject({ status: 'RUNNING' });
    });

    it('the same key with another agent, thread or message is IDEMPOTENCY_KEY_REUSED, writing nothing', async ({
      store,
    }) => {
      const first = await runningTurn(store, { idempotencyKey: 'key-1' });
      await store.unleasedTurnWriter(first.turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
      const before = await everything(store);
      const others = [
        startInput({ idempotencyKey: 'key-1', message: 'Something else.' }),
        startInput({ idempotencyKey: 'key-1', agentId: SIDE_AGENT }),
        startInput({ idempotencyKey: 'key-1', threadId: first.thread.id }),
      ];
      for (const input of others) {
        expect(await store.startTurn(input)).toEqual({ ok: false, code: 'IDEMPOTENCY_KEY_REUSED' });
        expect(await store.loadTurn(input.turnId)).toBeNull();
      }
      expect(await everything(store)).toEqual(before);
    });

    it("keys are per owner: another owner's same key starts that owner's own turn and never reads the first", async ({
      store,
    }) => {
      const ann = await runningTurn(store, { idempotencyKey: 'key-1' });
      const bob = await store.startTurn(startInput({ ownerId: BOB, idempotencyKey: 'key-1' }));
      expect(bob).toMatchObject({ ok: true, turn: { ownerId: BOB } });
      expect(bob.ok && bob.replayed).toBeFalsy();
      expect(bob.ok && bob.turn.id).not.toBe(ann.turn.id);
      const bobAgain = await store.startTurn(startInput({ ownerId: BOB, idempotencyKey: 'key-1' }));
      expect(bobAgain).toMatchObject({ ok: true, replayed: true, turn: { id: bob.ok && bob.turn.id } });
      const annAgain = await store.startTurn(startInput({ idempotencyKey: 'key-1' }));
      expect(annAgain).toMatchObject({ ok: true, replayed: true, turn: { id: ann.turn.id } });
    });

    it('a refused start claims no key: sent again once it can start, it starts the turn', async ({ store }) => {
      const { thread, turn } = await runningTurn(store);
      const keyed = startInput({ threadId: thread.id, idempotencyKey: 'key-1', turnId: 'turn-keyed' });
      expect(await store.startTurn(keyed)).toEqual({ ok: false, code: 'THREAD_BUSY' });
      expect(await store.startTurn(startInput({ agentId: 'agent-none', idempotencyKey: 'key-2' }))).toEqual({
        ok: false,
        code: 'NOT_FOUND',
        of: 'agent',
      });
      expect(await store.startTurn(startInput({ threadId: 'thread-none', idempotencyKey: 'key-3' }))).toEqual({
        ok: false,
        code: 'NOT_FOUND',
        of: 'thread',
        reason: 'NO_SUCH_THREAD',
      });
      await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
      const started = await store.startTurn(keyed);
      expect(started).toMatchObject({ ok: true, turn: { id: 'turn-keyed', status: 'RUNNING' } });
      expect(started.ok && started.replayed).toBeFalsy();
      expect(await store.deleteIdempotencyKeys(at(10_000), 10)).toBe(1);
    });

    it('deleteIdempotencyKeys deletes at most `limit` keys claimed before `before`; a deleted key starts anew', async ({
      store,
    }) => {
      const first = await runningTurn(store, { idempotencyKey: 'key-1', now: at(10) });
      await runningTurn(store, { idempotencyKey: 'key-2', now: at(20) });
      await runningTurn(store, { idempotencyKey: 'key-3', now: at(30) });
      expect(await store.deleteIdempotencyKeys(at(10), 10)).toBe(0); // claimed at at(10), not before it
      expect(await store.deleteIdempotencyKeys(at(25), 1)).toBe(1);
      expect(await store.deleteIdempotencyKeys(at(25), 1)).toBe(1);
      expect(await store.deleteIdempotencyKeys(at(25), 1)).toBe(0);
      const again = await store.startTurn(startInput({ idempotencyKey: 'key-1', turnId: 'turn-new' }));
      expect(again).toMatchObject({ ok: true, turn: { id: 'turn-new' } });
      expect(again.ok && again.replayed).toBeFalsy();
      expect(await store.loadTurn(first.turn.id)).toMatchObject({ status: 'RUNNING' });
      const kept = await store.startTurn(startInput({ idempotencyKey: 'key-3' }));
      expect(kept).toMatchObject({ ok: true, replayed: true });
    });
  });
}
