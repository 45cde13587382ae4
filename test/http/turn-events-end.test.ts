// turnEvents ends: a subscription on a turn completes right after it delivers the turn's last state (COMPLETED,
// FAILED, CANCELLED, EXPIRED once recorded), also when it subscribes after the turn ended. A real graphql-ws client
// on a real server on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptStep } from '../../src/models/scripted.js';
import { connectWs, subscribeWs, type Received } from '../support/live.js';
import { call, callStep, manualClock, startScenario, textStep, type Scenario } from '../support/scenario.js';
import { eventsOf, TURN_EVENTS, turnsOf, type TurnEvent } from '../support/turn-events.js';

const TOOLS = [{ name: 'edit_note' }];
let s: Scenario;
let client: ReturnType<typeof connectWs> | undefined;
afterEach(async () => {
  await client?.dispose();
  client = undefined;
  await s?.close();
});

function follow(turnId: string): Received<{ data?: { turnEvents: TurnEvent }; errors?: any[] }> {
  client ??= connectWs(s.h.url);
  return subscribeWs<{ turnEvents: TurnEvent }>(client, TURN_EVENTS, { turnId });
}

/** Resolves when the server completed the subscription without an error; fails after 10 s. */
async function completed(received: Received): Promise<void> {
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`not completed; received ${JSON.stringify(received.events)}`)), 10_000),
  );
  expect(await Promise.race([received.done, timeout])).toBeUndefined();
}

async function paused(
  script: ScriptStep[] = [callStep(call('edit_note', { id: 'n1' })), textStep('Edited.')],
  clock?: () => Date,
) {
  s = await startScenario({ tools: TOOLS, script, agent: { pauseTtlSeconds: 60 }, ...(clock ? { clock } : {}) });
  const { turn } = await s.start('edit n1');
  expect(turn.status).toBe('PAUSED');
  return turn as { id: string; pendingElicitations: { id: string }[] };
}

describe('turnEvents completes after the turn’s last state', () => {
  for (const [action, status] of [
    ['ACCEPT', 'COMPLETED'],
    ['CANCEL', 'CANCELLED'],
  ] as const) {
    it(`a turn followed from PAUSED to ${status}: the ${status} turn is the last event, then the subscription completes`, async () => {
      const turn = await paused();
      const received = follow(turn.id);
      await received.waitFor((e) => e.data?.turnEvents.__typename === 'Turn', 'the paused turn');
      expect((await s.resolve(turn.pendingElicitations[0]!.id, action)).userErrors).toEqual([]);
      await completed(received);
      const turns = turnsOf(eventsOf(received));
      expect(turns[0]).toMatchObject({ id: turn.id, status: 'PAUSED' });
      expect(turns.at(-1)).toMatchObject({ id: turn.id, status });
      expect(turns.filter((t) => t.status === status)).toHaveLength(1);
    });
  }

  it('a turn that FAILED: the failed turn, then completion', async () => {
    const turn = await paused([
      callStep(call('edit_note', { id: 'n1' })),
      () => {
        throw new Error('the model is down');
      },
    ]);
    const received = follow(turn.id);
    await received.waitFor((e) => e.data?.turnEvents.__typename === 'Turn', 'the paused turn');
    // The model call after the tool ran fails: so does the turn.
    await s.resolve(turn.pendingElicitations[0]!.id, 'ACCEPT');
    await completed(received);
    expect(turnsOf(eventsOf(received)).at(-1)).toMatchObject({ status: 'FAILED' });
  });

  it('subscribing after the turn ended: its last state, then completion', async () => {
    const turn = await paused();
    await s.resolve(turn.pendingElicitations[0]!.id, 'CANCEL');
    const received = follow(turn.id);
    await completed(received);
    expect(eventsOf(received)).toEqual([expect.objectContaining({ __typename: 'Turn', status: 'CANCELLED' })]);
  });

  it('a PAUSED turn past its expiry reads EXPIRED and ends once the expiry is recorded, with its closing messages', async () => {
    const clock = manualClock();
    const turn = await paused(undefined, clock.now);
    clock.advance(61);
    const received = follow(turn.id);
    await received.waitFor(
      (e) => e.data?.turnEvents.__typename === 'Turn' && e.data.turnEvents.status === 'EXPIRED',
      'the turn read as expired',
    );
    // Not recorded yet: the subscription waits for the sweeper, which writes the TOOL message of the open call.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await Promise.race([received.done.then(() => 'completed'), 'open'])).toBe('open');
    await s.h.server.sweep();
    await completed(received);
    const last = turnsOf(eventsOf(received)).at(-1)!;
    expect(last.status).toBe('EXPIRED');
    expect(last.messages.at(-1)).toMatchObject({ role: 'TOOL', text: expect.stringContaining('expired') });
  });

  it('a turn that is still running does not complete the subscription', async () => {
    const turn = await paused();
    const received = follow(turn.id);
    await received.waitFor((e) => e.data?.turnEvents.__typename === 'Turn', 'the paused turn');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await Promise.race([received.done.then(() => 'completed'), 'open'])).toBe('open');
  });
});
