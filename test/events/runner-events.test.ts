// The runner's events on the pub/sub (src/events/runner-events.ts): a turn's change goes out once what made it is
// durable. A change of a turn still RUNNING may wait a moment for the fsync of its next durable step; one of a turn
// that stopped (paused or ended) has no next step, and asks for its fsync at once, so that a client waiting for a
// gateway call's result or a subscriber watching a pause is not kept waiting for nothing.
import { describe, expect, it } from 'vitest';
import type { TurnRecord } from '../../src/domain/records.js';
import { startedTurn } from '../../src/domain/turn-rules.js';
import { createInProcessPubSub } from '../../src/events/pubsub.js';
import { createRunnerEventPublisher } from '../../src/events/runner-events.js';

const turn = (status: TurnRecord['status']): TurnRecord => ({
  ...startedTurn({ id: 'trn_1', threadId: 'thr_1', agentId: 'demo', ownerId: 'alice' }, '2026-01-01T00:00:00.000Z'),
  status,
});

describe("a turn's change on the pub/sub", () => {
  it('waits for durability: at once for a turn that stopped, soon for one still running; in the order reported', async () => {
    const pubsub = createInProcessPubSub();
    const asked: boolean[] = [];
    const durable: (() => void)[] = [];
    const events = createRunnerEventPublisher({
      pubsub,
      flush: ({ soon }) => {
        asked.push(soon);
        return new Promise<void>((resolve) => durable.push(resolve));
      },
      onError: (error) => {
        throw error;
      },
    });
    const changes = pubsub.subscribe('turn', 'trn_1');
    await changes.listening;
    const seen: string[] = [];
    const reading = (async () => {
      for await (const change of changes) {
        seen.push(change.status);
        if (seen.length === 4) return;
      }
    })();

    for (const status of ['RUNNING', 'PAUSED', 'RUNNING', 'COMPLETED'] as const) events.turnChanged(turn(status));
    expect(asked).toEqual([true, false, true, false]);
    expect(seen).toEqual([]); // nothing before it is durable
    for (const resolve of durable) resolve();
    await reading;
    expect(seen).toEqual(['RUNNING', 'PAUSED', 'RUNNING', 'COMPLETED']);
  });
});
