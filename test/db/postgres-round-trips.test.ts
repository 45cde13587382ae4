import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';
import { agentConfig, AGENT, ANN, at, startInput } from './spec/fixtures.js';

// What a start costs in database round trips on PostgreSQL, where each is a network round trip: a start on a new
// thread reads the agent and writes thread, turn and message with one statement, without BEGIN and COMMIT; a start
// on an existing thread locks it in a transaction, as before.
describe('PostgreSQL: round trips of a start', () => {
  let database: TestDatabase;
  let store: PostgresStore;
  const sent: string[] = [];
  const query = pg.Client.prototype.query;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    store = await PostgresStore.open(database.url);
    await store.syncAgent(agentConfig(AGENT), at(0));
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      sent.push(typeof config === 'string' ? config : String((config as { name?: string }).name));
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
    } as typeof query;
  });
  afterEach(() => {
    sent.length = 0;
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await store.close();
    await database.drop();
  });

  it('on a new thread: the agent read and one write, no transaction; thread, turn and message all written', async () => {
    const started = await store.startTurn(startInput({ message: 'Tidy my notes.' }));
    expect(sent).toEqual(['agent', 'insert_turn']);
    if (!started.ok || started.replayed) throw new Error('the start was refused');
    expect(await store.getThread(started.thread.id, ANN)).toMatchObject({ id: started.thread.id, agentId: AGENT });
    expect(await store.getTurn(started.turn.id, ANN)).toMatchObject({ status: 'RUNNING', threadId: started.thread.id });
    const messages = await store.listThreadMessages(started.thread.id);
    expect(messages.map((m) => [m.role, m.text, m.turnId])).toEqual([['USER', 'Tidy my notes.', started.turn.id]]);
  });

  it('on an existing thread: one transaction that locks the thread, and the message on that thread', async () => {
    const first = await store.startTurn(startInput({}));
    if (!first.ok || first.replayed) throw new Error('the start was refused');
    await store.unleasedTurnWriter(first.turn.id).finishTurn({ status: 'COMPLETED', text: 'done', now: at(1) });
    sent.length = 0;
    const next = await store.startTurn(startInput({ threadId: first.thread.id, message: 'And now?', now: at(2) }));
    expect(sent[0]).toBe('BEGIN');
    expect(sent).toContain('lock_owned_thread');
    expect(sent.at(-1)).toBe('COMMIT');
    if (!next.ok || next.replayed) throw new Error('the second start was refused');
    const messages = await store.listThreadMessages(first.thread.id);
    expect(messages.map((m) => [m.role, m.text])).toEqual([
      ['USER', 'Tidy my notes.'],
      ['USER', 'And now?'],
    ]);
  });
});
