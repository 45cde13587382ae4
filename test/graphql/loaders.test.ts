// Per-item fields of a list are read in batches: a page of 6 pending requests with their turns, the turns'
// messages, threads and the threads' turns costs one store read per field, not one per item (on PostgreSQL each read
// is a network round trip). Runs on SQLite and, in `npm run test:postgres`, on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/storage.js';
import type { Store } from '../../src/domain/store.js';
import { dataOf, TEST_BACKEND } from '../support/harness.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { call, callStep, startScenario, textStep, TURN_QUERY, type Scenario } from '../support/scenario.js';

const PAGE = `query {
  pendingElicitations(first: 50) {
    edges { node { id turn { id messages { id } elicitations { id } thread { id turns { id } messages { id } } } } }
  }
}`;

/** The store, counting the calls of each method. */
function counting(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(property, (calls.get(property) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

let s: Scenario;
let calls: Map<string, number>;

beforeAll(async () => {
  const database = TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : ':memory:';
  const storage = await openStorage(database, 'database');
  const counted = counting(storage.store);
  calls = counted.calls;
  s = await startScenario({
    tools: [{ name: 'wipe' }],
    script: Array.from({ length: 6 }, () => callStep(call('wipe'))),
    storage: { ...storage, store: counted.store },
  });
  for (let i = 0; i < 6; i++) expect((await s.start(`wipe ${i}`)).turn.status).toBe('PAUSED');
});
afterAll(async () => {
  await s.close();
});

describe('batched reads', () => {
  it('one read per field for the whole page, whatever its length; each item gets its own records', async () => {
    calls.clear();
    const page = dataOf(await s.h.gql(PAGE)).pendingElicitations.edges.map((e: any) => e.node);
    expect(page).toHaveLength(6);
    for (const node of page) {
      expect(node.turn.messages.map((m: any) => m.id)).toHaveLength(2); // USER, ASSISTANT
      expect(node.turn.elicitations.map((e: any) => e.id)).toEqual([node.id]);
      expect(node.turn.thread.turns.map((t: any) => t.id)).toEqual([node.turn.id]);
      expect(node.turn.thread.messages).toHaveLength(2);
    }
    expect(new Set(page.map((n: any) => n.turn.thread.id)).size).toBe(6);
    expect(Object.fromEntries(calls)).toEqual({
      listPendingElicitations: 1,
      loadTurns: 1,
      listMessagesOfTurns: 1,
      listElicitationsOfTurns: 1,
      loadThreads: 1,
      listTurnsOfThreads: 1,
      listMessagesOfThreads: 1,
    });
  });
});

describe('Turn.userMessage', () => {
  it("each request's turn says what its user asked for, read with the turns' messages in one batch", async () => {
    calls.clear();
    const query = `{ pendingElicitations(first: 50) { edges { node { turn { userMessage { role text } messages { id } } } } } }`;
    const turns = dataOf(await s.h.gql(query)).pendingElicitations.edges.map((e: any) => e.node.turn);
    expect(turns.map((t: any) => t.userMessage)).toEqual(
      Array.from({ length: 6 }, (_, i) => ({ role: 'USER', text: `wipe ${i}` })),
    );
    expect(calls.get('listMessagesOfTurns')).toBe(1);
  });
});

describe('what a mutation that pauses hands to its own response', () => {
  it("a turn that pauses twice: the answer's response lists both pauses' requests in elicitations, the new one as pending", async () => {
    const own = await startScenario({
      tools: [{ name: 'wipe' }],
      script: [callStep(call('wipe', { n: 1 })), callStep(call('wipe', { n: 2 })), textStep('done')],
    });
    try {
      const { turn } = await own.start('wipe twice');
      const first = turn.pendingElicitations[0].id;
      const answered = await own.resolve(first, 'ACCEPT');
      expect(answered.turn.status).toBe('PAUSED');
      const second = answered.turn.pendingElicitations.map((e: any) => e.id);
      expect(second).toHaveLength(1);
      expect(second[0]).not.toBe(first);
      expect(answered.turn.elicitations.map((e: any) => [e.id, e.status])).toEqual([
        [first, 'ACCEPTED'],
        [second[0], 'PENDING'],
      ]);
      expect(dataOf(await own.h.gql(TURN_QUERY, { id: turn.id })).turn.elicitations).toEqual(
        answered.turn.elicitations,
      );
    } finally {
      await own.close();
    }
  });

  it('arguments the model wrote with a NUL or an unpaired surrogate: shown, stored and run the same, as storable text', async () => {
    const own = await startScenario({
      tools: [{ name: 'wipe' }],
      script: [callStep(call('wipe', { path: 'a\u0000b', label: 'x\ud800' })), textStep('done')],
    });
    try {
      const { turn } = await own.start('wipe the odd path');
      const shown = turn.pendingElicitations[0].toolCall.arguments;
      expect(shown).toEqual({ path: 'a\uFFFDb', label: 'x\uFFFD' });
      const stored = dataOf(await own.h.gql(TURN_QUERY, { id: turn.id })).turn;
      expect(stored.pendingElicitations[0].toolCall.arguments).toEqual(shown);
      expect(stored.messages.find((m: any) => m.role === 'ASSISTANT').toolCalls[0].arguments).toEqual(shown);
      expect((await own.resolve(turn.pendingElicitations[0].id, 'ACCEPT')).turn.status).toBe('COMPLETED');
      expect(own.tools.runs.get('wipe')).toEqual([shown]);
    } finally {
      await own.close();
    }
  });
});
