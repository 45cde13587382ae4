// The pub/sub interface subscriptions rely on: listening from the call on, and a close that ends everyone.
import { describe, expect, it } from 'vitest';
import type { TurnRecord } from '../../src/db/store.js';
import { createInProcessPubSub } from '../../src/events/pubsub.js';

const turn = (id: string, status: TurnRecord['status']): TurnRecord => ({
  id, threadId: 'thr_1', agentId: 'demo', ownerId: 'alice', status, text: null, error: null, iterations: 0, step: null,
  createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', expiresAt: null,
});

describe('ToolgatePubSub', () => {
  it('delivers what is published right after subscribe, before anyone asked for a value', async () => {
    const pubsub = createInProcessPubSub();
    const updates = pubsub.subscribe('turn', 'trn_1');
    pubsub.publish('turn', 'trn_1', turn('trn_1', 'RUNNING'));
    pubsub.publish('turn', 'trn_2', turn('trn_2', 'RUNNING'));
    pubsub.publish('turn', 'trn_1', turn('trn_1', 'PAUSED'));
    expect((await updates.next()).value.status).toBe('RUNNING');
    expect((await updates.next()).value.status).toBe('PAUSED');
    await updates.return();
  });

  it('ends a subscription on return() even while a next() waits, and every one on close()', async () => {
    const pubsub = createInProcessPubSub();
    const one = pubsub.subscribe('turn', 'trn_1');
    const waiting = one.next();
    await one.return();
    expect(await waiting).toEqual({ done: true, value: undefined });

    const a = pubsub.subscribe('elicitations', 'alice');
    const b = pubsub.subscribe('turn', 'trn_1');
    const nextA = a.next();
    await pubsub.close();
    expect((await nextA).done).toBe(true);
    expect((await b.next()).done).toBe(true);
    // A subscriber that comes after close() ends at once.
    expect((await pubsub.subscribe('turn', 'trn_1').next()).done).toBe(true);
  });
});
