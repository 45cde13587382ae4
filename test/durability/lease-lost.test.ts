// A process that lost a turn's lease while it was working on it (frozen past the lease, and another process took
// the turn over) writes nothing more for that turn: the lease is checked in the same transaction as the step it
// saves and the tool start it journals, so no takeover can slip in between the check and the write.
import { afterEach, describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/agent/runner.js';
import { call, callStep, startScenario, textStep, type Scenario } from '../support/scenario.js';

let scenario: Scenario | null = null;
afterEach(async () => {
  await scenario?.close();
  scenario = null;
});

/** A server whose turns lose their lease to `other` at `point` (another process claiming the turn). */
async function losingLeaseAt(point: Checkpoint): Promise<{ s: Scenario; taken: string[] }> {
  const taken: string[] = [];
  const s = await startScenario({
    tools: [{ name: 'edit_note' }],
    agent: { requireToolConfirmation: false },
    script: [callStep(call('edit_note', { id: 'n1' }, 'c1')), textStep('Done.')],
    checkpoint: async (at, { turnId }) => {
      if (at !== point) return;
      const { store, runner } = s.h.server.services;
      const until = new Date(Date.now() + 60_000).toISOString();
      const claimed = await store.claimTurn(turnId, runner.leaseOwner, { owner: 'otherhost:1:other', until }, new Date().toISOString());
      if (claimed) taken.push(turnId);
    },
  });
  scenario = s;
  return { s, taken };
}

async function turnState(s: Scenario, turnId: string) {
  const { store } = s.h.server.services;
  return {
    turn: await store.loadTurn(turnId),
    messages: (await store.listTurnMessages(turnId)).map((m) => m.role),
    unfinished: await store.listUnfinishedToolCalls(turnId),
    holder: await store.holdsLease(turnId, 'otherhost:1:other'),
  };
}

describe('a turn taken over by another process while this one works on it', () => {
  it('after the model answered: the answer is not saved and no tool runs; the turn stays RUNNING with its new holder', async () => {
    const { s, taken } = await losingLeaseAt('modelAnswered');
    const { turn } = await s.start('edit n1');
    expect(taken).toEqual([turn.id]);
    expect(turn.status).toBe('RUNNING');
    const state = await turnState(s, turn.id);
    expect(state.turn!.status).toBe('RUNNING');
    expect(state.turn!.iterations).toBe(0);
    expect(state.messages).toEqual(['USER']);
    expect(state.holder).toBe(true);
    expect(s.tools.count('edit_note')).toBe(0);
  });

  it('just before a tool starts: the call is not journaled and does not run', async () => {
    const { s, taken } = await losingLeaseAt('toolStarting');
    const { turn } = await s.start('edit n1');
    expect(taken).toEqual([turn.id]);
    expect(turn.status).toBe('RUNNING');
    const state = await turnState(s, turn.id);
    expect(state.messages).toEqual(['USER', 'ASSISTANT']);
    expect(state.unfinished).toEqual([]);
    expect(state.holder).toBe(true);
    expect(s.tools.count('edit_note')).toBe(0);
  });

  it('without a takeover the same turn runs the tool once and completes (the checks above are what stopped it)', async () => {
    const { s, taken } = await losingLeaseAt('answerRecorded'); // a point this turn never reaches: it does not pause
    const { turn } = await s.start('edit n1');
    expect(taken).toEqual([]);
    expect(turn.status).toBe('COMPLETED');
    expect(s.tools.count('edit_note')).toBe(1);
  });
});
