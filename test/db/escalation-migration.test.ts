// Migration 0009 (SQLite) / 0006 (PostgreSQL): a request paused under an escalating policy before the escalation
// columns existed gets its escalation time from its stored policy, so the sweeper escalates it after the upgrade.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import type { Store } from '../../src/domain/store.js';
import { freshPostgresDatabase } from '../support/postgres.js';
import { agentConfig, AGENT, ANN, at, ids, pausedTurn } from './spec/fixtures.js';

interface Backend {
  name: string;
  /** A store on a new database, and how to open another on it. */
  open(): Promise<{ store: Store; reopen(): Promise<Store>; cleanup(): Promise<void> }>;
  /** Puts the database back to before the escalation migration (its columns, its index, its journal entry). */
  undo(store: Store): Promise<void>;
}

/**
 * The escalation migration and the ones after it (who answered, as they were; a withdrawn call; decision records and their key;
 * passkeys; notifier cards), newest first.
 */
const UNDO = [
  'DROP TABLE notifier_replays',
  'DROP TABLE notifier_cards',
  'DROP TABLE passkey_challenges',
  'DROP TABLE passkeys',
  'DROP TABLE receipt_keys',
  'DROP TABLE decision_records',
  'ALTER TABLE elicitations DROP COLUMN caller_waiting_until',
  'ALTER TABLE elicitations DROP COLUMN withdrawn',
  'ALTER TABLE elicitation_answers DROP COLUMN approver_identity',
  'ALTER TABLE elicitations DROP COLUMN resolved_by_identity',
  'DROP INDEX elicitations_escalation_due',
  'ALTER TABLE elicitations DROP COLUMN escalated_at',
  'ALTER TABLE elicitations DROP COLUMN escalation_due_at',
];

const backends: Backend[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'toolgate-escalation-'));
      const path = join(dir, 'toolgate.db');
      return {
        store: new SqliteStore(openDatabase({ path })),
        reopen: async () => new SqliteStore(openDatabase({ path })),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
    async undo(store) {
      const { sqlite } = store as SqliteStore;
      for (const statement of UNDO) sqlite.exec(statement);
      const escalation = 'SELECT created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1 OFFSET 6';
      expect(sqlite.prepare(`DELETE FROM __drizzle_migrations WHERE created_at >= (${escalation})`).run().changes).toBe(
        7,
      );
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const database = await freshPostgresDatabase();
      return {
        store: await PostgresStore.open(database.url),
        reopen: () => PostgresStore.open(database.url),
        cleanup: () => database.drop(),
      };
    },
    async undo(store) {
      const { pool } = store as PostgresStore;
      for (const statement of UNDO) await pool.query(statement);
      const escalation =
        'SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1 OFFSET 6';
      const forgotten = await pool.query(
        `DELETE FROM drizzle.__drizzle_migrations WHERE created_at >= (${escalation})`,
      );
      expect(forgotten.rowCount).toBe(7);
    },
  },
];

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe.each(backends)('the escalation migration on $name', (backend) => {
  it('takes the escalation time of requests paused before it from their policy', async () => {
    const opened = await backend.open();
    cleanups.push(opened.cleanup);
    const before = opened.store;
    await before.syncAgent(agentConfig(AGENT), at(0));
    const policy = { roles: ['reviewer'], required: 1, requester: 'ALSO' as const };
    const escalating = await pausedTurn(before, {
      approval: { ...policy, escalation: { roles: ['oncall'], at: at(900) } },
    });
    const plain = await pausedTurn(before, { approval: { ...policy, escalation: null } });
    await backend.undo(before);
    await before.close();

    const after = await opened.reopen();
    cleanups.push(() => after.close());
    expect(await after.ping()).toBeNull();
    expect(await after.escalateDueElicitations(at(899), 10)).toEqual([]);
    expect(ids(await after.escalateDueElicitations(at(900), 10))).toEqual(ids(escalating.elicitations));
    expect((await after.getElicitation(plain.elicitations[0]!.id, ANN))!.escalatedAt).toBeNull();
  });
});
