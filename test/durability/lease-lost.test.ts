// A process that lost a turn's lease while it was working on it (frozen past the lease, and another process took
// the turn over) writes nothing more for that turn: every write of the loop to a RUNNING turn checks the lease in
// its own transaction, so no takeover can commit between the check and the write.
import { afterEach, describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/agent/runner.js';
import type { Model } from '../../src/models/model.js';
import { call, callStep, startScenario, textStep, type Scenario, type ScenarioOptions } from '../support/scenario.js';

const OTHER = 'otherhost:1:other';

let scenario: Scenario | null = null;
afterEach(async () => {
  await scenario?.close();
  scenario = null;
});

/**
 * How the other process takes the turn: `committed` before this process's next write is asked for, or `racing`,
 * in the same commit batch as that write and ahead of it (the claim is queued first, not awaited): a check made by
 * a read before the write would pass, and only a check inside the write's transaction stops it.
 */
type Takeover = 'committed' | 'racing';

interface Setup {
  s: Scenario;
  /** Turns the other process took. */
  taken: string[];
  takeOver(turnId: string): Promise<void>;
}

async function start(takeover: Takeover, options: ScenarioOptions & { at?: Checkpoint }): Promise<Setup> {
  const taken: string[] = [];
  const { at, ...scenarioOptions } = options;
  // eslint-disable-next-line prefer-const -- assigned once below; the closure in between reads it
  let s!: Scenario;
  const takeOver = async (turnId: string) => {
    const { store, runner } = s.h.server.services;
    const until = new Date(Date.now() + 60_000).toISOString();
    const claim = store
      .claimTurn(turnId, runner.leaseOwner, { owner: OTHER, until }, new Date().toISOString())
      .then((claimed) => {
        if (claimed) taken.push(turnId);
      });
    if (takeover === 'committed') await claim;
  };
  s = await startScenario({
    tools: [{ name: 'edit_note' }],
    script: [callStep(call('edit_note', { id: 'n1' }, 'c1')), textStep('Done.')],
    ...scenarioOptions,
    checkpoint: async (point, { turnId }) => {
      if (point === at) await takeOver(turnId);
    },
  });
  scenario = s;
  return { s, taken, takeOver };
}

async function stateOf(s: Scenario, turnId: string) {
  const { store } = s.h.server.services;
  return {
    turn: await store.loadTurn(turnId),
    messages: (await store.listTurnMessages(turnId)).map((m) => m.role),
    elicitations: (await store.listTurnElicitations(turnId)).length,
    started: await store.listUnfinishedToolCalls(turnId),
    heldByOther: await store.holdsLease(turnId, OTHER),
  };
}

describe.each(['committed', 'racing'] as const)(
  'a turn taken over by another process (%s) while this one works on it',
  (takeover) => {
    it('after the model answered: the answer is not saved and no tool runs; the turn stays RUNNING with its new holder', async () => {
      const { s, taken } = await start(takeover, { at: 'modelAnswered', agent: { requireToolConfirmation: false } });
      const { turn } = await s.start('edit n1');
      expect(taken).toEqual([turn.id]);
      expect(turn.status).toBe('RUNNING');
      const state = await stateOf(s, turn.id);
      expect(state.turn).toMatchObject({ status: 'RUNNING', iterations: 0 });
      expect(state.messages).toEqual(['USER']);
      expect(state.heldByOther).toBe(true);
      expect(s.tools.count('edit_note')).toBe(0);
    });

    it('just before a tool starts: the call is not journaled and does not run', async () => {
      const { s, taken } = await start(takeover, { at: 'toolStarting', agent: { requireToolConfirmation: false } });
      const { turn } = await s.start('edit n1');
      expect(taken).toEqual([turn.id]);
      const state = await stateOf(s, turn.id);
      expect(state.turn!.status).toBe('RUNNING');
      expect(state.messages).toEqual(['USER', 'ASSISTANT']);
      expect(state.started).toEqual([]);
      expect(state.heldByOther).toBe(true);
      expect(s.tools.count('edit_note')).toBe(0);
    });

    it('after the model asked for a call that needs confirmation: no request is created, the answer is not saved with a pause', async () => {
      // The step that asks is saved with its pause, in one commit (pauseTurn's answer): the lease check refuses both.
      const { s, taken } = await start(takeover, { at: 'modelAnswered' });
      const { turn } = await s.start('edit n1');
      expect(taken).toEqual([turn.id]);
      const state = await stateOf(s, turn.id);
      expect(state.turn).toMatchObject({ status: 'RUNNING', iterations: 0 });
      expect(state.messages).toEqual(['USER']);
      expect(state.elicitations).toBe(0);
      expect(state.heldByOther).toBe(true);
      expect(s.tools.count('edit_note')).toBe(0);
    });

    it("while the model streams its answer: the text streamed so far is dropped, not served to late subscribers as this turn's", async () => {
      // eslint-disable-next-line prefer-const -- assigned once below; the model's closure reads it
      let setup!: Setup;
      const streamingModel: Model = {
        async generate({ onTextDelta }) {
          onTextDelta?.('Editing n1');
          const running = (await setup.s.h.server.services.store.listRunningLeases())[0]!;
          await new Promise((resolve) => setImmediate(resolve)); // pieces go out at the next turn of the event loop
          // The piece has gone out (a late subscriber would get it), then the other process takes the turn.
          expect(setup.s.h.server.services.turnText.textSoFar(running.turnId)?.text).toBe('Editing n1');
          await setup.takeOver(running.turnId);
          return { text: 'Editing n1', toolCalls: [call('edit_note', { id: 'n1' }, 'c1')] };
        },
      };
      setup = await start(takeover, { model: streamingModel, agent: { requireToolConfirmation: false } });
      const { turn } = await setup.s.start('edit n1');
      expect(setup.taken).toEqual([turn.id]);
      // The other process runs the turn now, and streams its own text; this one keeps nothing of it.
      expect(setup.s.h.server.services.turnText.textSoFar(turn.id)).toBeNull();
      expect(setup.s.tools.count('edit_note')).toBe(0);
    });

    it('while the model call fails: the turn is not FAILED by this process and its iteration is not counted', async () => {
      // eslint-disable-next-line prefer-const -- assigned once below; the model's closure reads it
      let setup!: Setup;
      const failingModel: Model = {
        async generate() {
          const running = (await setup.s.h.server.services.store.listRunningLeases())[0]!;
          await setup.takeOver(running.turnId);
          throw new Error('the model is down');
        },
      };
      setup = await start(takeover, { model: failingModel });
      const { turn } = await setup.s.start('edit n1');
      expect(setup.taken).toEqual([turn.id]);
      const state = await stateOf(setup.s, turn.id);
      expect(state.turn).toMatchObject({ status: 'RUNNING', iterations: 0, error: null });
      expect(state.messages).toEqual(['USER']);
      expect(state.heldByOther).toBe(true);
    });
  },
);

describe('without a takeover', () => {
  it('the same turns run the tool once and complete, pause, or fail as usual (the checks above are what stopped them)', async () => {
    const runs = await start('committed', { agent: { requireToolConfirmation: false } });
    const { turn } = await runs.s.start('edit n1');
    expect(runs.taken).toEqual([]);
    expect(turn.status).toBe('COMPLETED');
    expect(runs.s.tools.count('edit_note')).toBe(1);
    await runs.s.close();

    const pauses = await start('committed', {});
    expect((await pauses.s.start('edit n1')).turn.status).toBe('PAUSED');
    await pauses.s.close();

    const fails = await start('committed', {
      model: {
        generate: async () => {
          throw new Error('the model is down');
        },
      },
    });
    const failed = (await fails.s.start('edit n1')).turn;
    expect(failed.status).toBe('FAILED');
    expect((await fails.s.h.server.services.store.loadTurn(failed.id))!.iterations).toBe(1);
  });
});
