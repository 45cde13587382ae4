// A database written by the previous release (migrations up to 0001) upgrades when the server starts on it: its
// paused turn can still be answered, and its history reads the same. Migration 0002 changed the elicitation indexes.
// A paused turn's step written before steps had a format version still loads and runs.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import { StoredStepError } from '../../src/domain/pending-step.js';
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
  JSON.parse(readFileSync(new URL('../../drizzle/sqlite/meta/_journal.json', import.meta.url), 'utf8')) as {
    entries: { tag: string; when: number }[];
  }
).entries.find((entry) => entry.tag === '0002_audit_order')!.when;

/**
 * Puts a database back to how the release with migrations 0000-0001 left it: its tables, columns and indexes, its
 * migration log. Undoes 0015 (notifier cards), 0014 (passkeys), 0013 (the generated receipt key), 0012 (decision records), 0011 (a withdrawn call's reason, whether its caller waits), 0010 (who answered, as they were), 0009 (escalation), 0008 (approver roles), 0007 (approvers), 0006 (a gateway call's kept result), 0005 (idempotency keys), 0004 (fewer
 * indexes on the hot tables), 0003 (approvals, webhooks) and 0002; a later migration would need undoing too (the row
 * count says so).
 */
function asBeforeMigration0002(database: string): void {
  const db = new Database(database);
  try {
    db.exec('CREATE UNIQUE INDEX messages_id_unique ON messages (id);');
    db.exec('DROP TABLE notifier_replays; DROP TABLE notifier_cards;');
    db.exec('DROP TABLE passkey_challenges; DROP TABLE passkeys;');
    db.exec('DROP TABLE receipt_keys;');
    db.exec('DROP TABLE decision_records;');
    db.exec(`ALTER TABLE elicitations DROP COLUMN withdrawn;
      ALTER TABLE elicitations DROP COLUMN caller_waiting_until;`);
    db.exec(`ALTER TABLE elicitation_answers DROP COLUMN approver_identity;
      ALTER TABLE elicitations DROP COLUMN resolved_by_identity;`);
    db.exec(`DROP INDEX elicitations_escalation_due;
      ALTER TABLE elicitations DROP COLUMN escalated_at;
      ALTER TABLE elicitations DROP COLUMN escalation_due_at;`);
    db.exec(`DROP TABLE elicitation_approver_roles;
      DROP TABLE elicitation_answers;
      ALTER TABLE agents DROP COLUMN approvers;
      ALTER TABLE elicitations DROP COLUMN approval;`);
    db.exec(`DROP TABLE idempotency_keys;
      DROP TABLE approval_grants;
      DROP TABLE webhook_deliveries;
      DROP INDEX tool_executions_grant;
      ALTER TABLE tool_executions DROP COLUMN grant_id;
      ALTER TABLE tool_executions DROP COLUMN result;
      ALTER TABLE elicitations DROP COLUMN response_arguments;
      ALTER TABLE elicitations DROP COLUMN response_remember;
      ALTER TABLE agents DROP COLUMN allow_edit;
      ALTER TABLE agent_tool_overrides DROP COLUMN rules;
      ALTER TABLE agent_tool_overrides DROP COLUMN allow_edit;`);
    db.exec(`DROP INDEX elicitations_owner_seq;
      DROP INDEX elicitations_owner_status_seq;
      CREATE INDEX elicitations_owner_status_seq ON elicitations (owner_id, status, seq);`);
    const undone = db.prepare('DELETE FROM __drizzle_migrations WHERE created_at >= ?').run(MIGRATION_0002).changes;
    if (undone !== 14)
      throw new Error(`expected to undo migrations 0002 to 0015 only, undid ${undone}: undo the later ones here too`);
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
      // 0005: startTurn's idempotency keys.
      const keyed = { input: { agentId: 'demo', message: 'list entities', idempotencyKey: 'after-upgrade' } };
      const first = dataOf(await after.gql(START_TURN, keyed)).startTurn;
      expect(first.userErrors).toEqual([]);
      expect(dataOf(await after.gql(START_TURN, keyed)).startTurn.turn.id).toBe(first.turn.id);
    } finally {
      await after.close();
    }
  });
});

/** Sets the stored step of a turn, as JSON text, behind the server's back. */
function writeStep(database: string, turnId: string, json: string): void {
  const db = new Database(database);
  try {
    expect(db.prepare('UPDATE turns SET step = ? WHERE id = ?').run(json, turnId).changes).toBe(1);
  } finally {
    db.close();
  }
}

function readStep(database: string, turnId: string): string {
  const db = new Database(database, { readonly: true });
  try {
    return (db.prepare('SELECT step FROM turns WHERE id = ?').get(turnId) as { step: string }).step;
  } finally {
    db.close();
  }
}

describe('a paused step written before steps had a version', () => {
  /** A paused turn on a new database; its step rewritten as the release before versions wrote it. */
  async function pausedWithUnversionedStep(): Promise<{ database: string; turnId: string; elicitationId: string }> {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-step-'));
    const database = join(dir, 'toolgate.db');
    const before = await startHarness({ database });
    try {
      const started = dataOf(
        await before.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } }),
      ).startTurn;
      expect(started.turn.status).toBe('PAUSED');
      const turnId: string = started.turn.id;
      const current = JSON.parse(readStep(database, turnId));
      expect(current).toMatchObject({ version: 1, calls: [{ outcome: { kind: 'confirm' } }] });
      // What that release wrote: JSON.stringify({ calls }), no version.
      writeStep(database, turnId, JSON.stringify({ calls: current.calls }));
      return { database, turnId, elicitationId: started.turn.pendingElicitations[0].id };
    } finally {
      await before.close();
    }
  }

  it('the store loads it as a version 1 step with the same calls', async () => {
    const { database, turnId } = await pausedWithUnversionedStep();
    const unversioned = JSON.parse(readStep(database, turnId));
    expect(unversioned).not.toHaveProperty('version');
    const store = new SqliteStore(openDatabase({ path: database }));
    try {
      const turn = await store.loadTurn(turnId);
      expect(turn).toMatchObject({ status: 'PAUSED', step: { version: 1, calls: unversioned.calls } });
    } finally {
      store.close();
    }
  });

  it('a server started on the database resumes the turn on ACCEPT and runs the call', async () => {
    const { database, elicitationId } = await pausedWithUnversionedStep();
    const after = await startHarness({ database });
    try {
      const resumed = dataOf(
        await after.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }),
      ).resolveElicitation;
      expect(resumed.userErrors).toEqual([]);
      expect(resumed.turn.status).toBe('COMPLETED');
      expect(resumed.turn.text).toContain('Deleted 1 entit');
    } finally {
      await after.close();
    }
  });

  it('a malformed step fails to load with an error naming the turn', async () => {
    const { database, turnId } = await pausedWithUnversionedStep();
    writeStep(database, turnId, JSON.stringify({ calls: [{ outcome: { kind: 'run' } }] }));
    const store = new SqliteStore(openDatabase({ path: database }));
    try {
      await expect(store.loadTurn(turnId)).rejects.toThrow(StoredStepError);
      await expect(store.loadTurn(turnId)).rejects.toThrow(`The stored step of turn ${turnId} cannot be read: `);
    } finally {
      store.close();
    }
  });
});
