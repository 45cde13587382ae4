// The store goes away while a turn runs, and ending the turn FAILED fails too: the turn stays RUNNING under this
// process's lease. A process never takes over its own lease, and renews it while it runs anything, so without more
// it would stay RUNNING until a restart. The next sweep takes it over instead, and it completes.
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/domain/store.js';
import { openStorage } from '../../src/storage.js';
import { dataOf, TEST_BACKEND } from '../support/harness.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { call, callStep, startScenario, textStep, TURN_QUERY, type Scenario } from '../support/scenario.js';

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/**
 * The store, except that while `down` is set, the listed methods throw as a store that does not answer would: the
 * store's own and those of the turn writers it hands out (the loop's writes).
 */
function flaky(store: Store, methods: string[]) {
  const state = { down: false };
  const failing = <T extends object>(object: T): T =>
    new Proxy(object, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (state.down && methods.includes(String(property))) {
            return Promise.reject(new Error('connection terminated unexpectedly'));
          }
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          return property === 'turnWriter' ? failing(result as object) : result;
        };
      },
    });
  return { store: failing(store), state };
}

describe('a turn stranded by a store that stopped answering', () => {
  it('stays RUNNING while the store is away, and the next sweep runs it to the end; the tool never ran twice', async () => {
    const database = TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : ':memory:';
    const storage = await openStorage(database, 'database');
    const { store, state } = flaky(storage.store, [
      'appendAssistantMessage',
      'holdsLease',
      'listThreadMessages',
      'claimTurn',
    ]);
    const errors: unknown[] = [];
    s = await startScenario({
      storage: { ...storage, store },
      tools: [{ name: 'edit_note' }],
      agent: { requireToolConfirmation: false },
      script: [callStep(call('edit_note', { id: 'n1' })), callStep(call('edit_note', { id: 'n1' })), textStep('Done.')],
      onError: (error) => errors.push(error),
    });
    state.down = true;
    const { turn } = await s.start('edit n1');
    expect(turn.status).toBe('RUNNING');
    expect(errors.map((e) => (e as Error).message)).toEqual(['connection terminated unexpectedly']);
    expect(s.tools.count('edit_note')).toBe(0);

    // Still away: the sweep cannot take it either (its claim fails), and keeps it for the next one.
    await s.h.server.sweep().catch(() => {});
    state.down = false;
    expect(dataOf(await s.h.gql(TURN_QUERY, { id: turn.id })).turn.status).toBe('RUNNING');
    state.down = true;
    await s.h.server.sweep().catch(() => {});

    state.down = false;
    expect(await s.h.server.sweep()).toMatchObject({ recoveredTurns: 1 });
    await s.h.server.services.runner.idle();
    const done = await s.turn(turn.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.text).toBe('Done.');
    expect(s.tools.count('edit_note')).toBe(1);
  });
});
