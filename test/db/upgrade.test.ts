// A database written by the previous release (migrations up to 0001) upgrades when the server starts on it: its
// paused turn can still be answered, and its history reads the same. Migration 0002 changed the elicitation indexes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, startHarness } from '../support/harness.js';

const HISTORY = `{ elicitations { totalCount edges { node { id status } } } pendingElicitations { totalCount } }`;

/** The indexes of `elicitations` with their columns, as SQLite has them. */
function elicitationIndexes(database: string): Record<string, string[]> {
  const db = new Database(database, { readonly: true });
  try {
    const names = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'elicitations' AND sql IS NOT NULL")
      .pluck()
      .all() as string[];
    return Object.fromEntries(
      names.map((name) => [
        name,
        db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).pluck().all(name) as string[],
      ]),
    );
  } finally {
    db.close();
  }
}

/** When migration 0002 was generated: the key drizzle's migration log records it under. */
const MIGRATION_0002 = (
  JSON.parse(readFileSync(new URL('../../drizzle/meta/_journal.json', import.meta.url), 'utf8')) as {
    entries: { tag: string; when: number }[];
  }
).entries.find((entry) => entry.tag === '0002_audit_order')!.when;

/**
 * Puts a database back to how the release with migrations 0000-0001 left it: its indexes, its migration log. Only
 * for a database migrated up to 0002: a later migration would need undoing too (the row count says so).
 */
function asBeforeMigration0002(database: string): void {
  const db = new Database(database);
  try {
    db.exec(`DROP INDEX elicitations_owner_seq;
      DROP INDEX elicitations_owner_status_seq;
      CREATE INDEX elicitations_owner_status_seq ON elicitations (owner_id, status, seq);`);
    const undone = db.prepare('DELETE FROM __drizzle_migrations WHERE created_at >= ?').run(MIGRATION_0002).changes;
    if (undone !== 1)
      throw new Error(`expected to undo migration 0002 only, undid ${undone}: undo the later migrations here too`);
  } finally {
    db.close();
  }
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('upgrading a database of the previous release', () => {
  it('applies 0002 on start; the paused turn resumes on ACCEPT and the history is unchanged', async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-upgrade-'));
    const database = join(dir, 'toolgate.db');
    const before = await startHarness({ database });
    let pausedId: string;
    let history: unknown;
    try {
      const done = dataOf(
        await before.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } }),
      ).startTurn;
      const doneId = done.turn.pendingElicitations[0].id;
      expect(
        dataOf(await before.gql(RESOLVE, { input: { elicitationId: doneId, action: 'ACCEPT' } })).resolveElicitation
          .turn.status,
      ).toBe('COMPLETED');
      const paused = dataOf(
        await before.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 2' } }),
      ).startTurn;
      expect(paused.turn.status).toBe('PAUSED');
      pausedId = paused.turn.pendingElicitations[0].id;
      history = dataOf(await before.gql(HISTORY));
      expect(history).toEqual({
        elicitations: {
          totalCount: 2,
          edges: [{ node: { id: doneId, status: 'ACCEPTED' } }, { node: { id: pausedId, status: 'PENDING' } }],
        },
        pendingElicitations: { totalCount: 1 },
      });
    } finally {
      await before.close();
    }

    asBeforeMigration0002(database);
    expect(elicitationIndexes(database)).not.toHaveProperty('elicitations_owner_seq');

    const after = await startHarness({ database });
    try {
      expect(elicitationIndexes(database)).toMatchObject({
        elicitations_owner_seq: ['owner_id', 'seq'],
        elicitations_owner_status_seq: ['owner_id', 'status', 'seq', 'expires_at'],
      });
      expect(dataOf(await after.gql(HISTORY))).toEqual(history);
      const resumed = dataOf(
        await after.gql(RESOLVE, { input: { elicitationId: pausedId, action: 'ACCEPT' } }),
      ).resolveElicitation;
      expect(resumed.userErrors).toEqual([]);
      expect(resumed.turn.status).toBe('COMPLETED');
      expect(resumed.turn.text).toContain('Deleted 1 entit');
    } finally {
      await after.close();
    }
  });
});
