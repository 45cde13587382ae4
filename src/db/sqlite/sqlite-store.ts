// The embedded store: better-sqlite3, whose transactions are synchronous, so every state change runs start to end
// without yielding, in a transaction shared with the writes of concurrent requests (write-batch.ts). The scripts and
// the Store methods are the shared ones (../sql-store.ts); this module opens the file, applies the migrations, and
// drives the scripts synchronously inside the group commit.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { ReceiptSigner } from '../../domain/decision-records.js';
import type { WebhookOutbox } from '../../domain/webhook-events.js';
import { migrationsFolder } from '../migrations-folder.js';
import type { Script } from '../scripts.js';
import { SqlStore, type Driver } from '../sql-store.js';
import { sqliteStatements } from './statements.js';
import { WalSync, type SyncFile } from './wal-sync.js';
import { WriteBatcher } from './write-batch.js';

const MIGRATIONS = migrationsFolder('sqlite');

export interface DatabaseOptions {
  /** A file path or ':memory:'. */
  path: string;
}

export interface SqliteStoreOptions {
  /**
   * FULL (default): what a request is told succeeded survives power loss: flush() fsyncs the WAL (shared by
   * concurrent requests, off the event loop). NORMAL: flush() does not; commits survive process crashes only.
   * Either way a tool's start record is on disk before the tool runs. See docs/durability.md.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How a file is flushed to disk (tests: to hold an fsync back); default fdatasync. */
  syncFile?: SyncFile;
  /** The webhook endpoints whose events the changes write to the outbox; none: nothing is written or read for them. */
  webhooks?: WebhookOutbox;
  /** The deployment's key for signed decision records (docs/receipts.md); none: no records are written. */
  receipts?: ReceiptSigner;
}

export function openDatabase(options: DatabaseOptions): Database.Database {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const sqlite = new Database(options.path);
  // Durability settings and their trade-offs: docs/durability.md. Commits are not fsynced one by one: the store
  // syncs the WAL where it matters (WalSync), once for many commits.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // Another process (a second server, a backup) may hold the write lock for a moment: wait, do not fail.
  sqlite.pragma('busy_timeout = 5000');
  // Fold the WAL into the database file every ~1000 pages (SQLite's default, stated so it is a decision) and
  // shrink the WAL file back to 64 MiB after a checkpoint that a long reader had let it grow past.
  sqlite.pragma('wal_autocheckpoint = 1000');
  sqlite.pragma('journal_size_limit = 67108864');
  sqlite.pragma('foreign_keys = ON');
  // The savepoint journal of a write batch (each write's savepoint keeps the pages it changes) in memory: left to
  // the default it spills past 64 KiB into a temp file, which a batch of a dozen writes does, and then every page
  // a write touches costs two more system calls (and each batch creates and deletes a file in /var/tmp). Nothing in
  // it outlives the transaction.
  sqlite.pragma('temp_store = MEMORY');
  return sqlite;
}

/** Runs a script to its end: each statement it yields has run already (SQLite statements run when called). */
function runSync<T>(script: Script<T>): T {
  let step = script.next();
  while (!step.done) step = script.next(step.value);
  return step.value;
}

export class SqliteStore extends SqlStore {
  readonly #wal: WalSync;
  readonly #writes: WriteBatcher;

  constructor(
    readonly sqlite: Database.Database,
    options: SqliteStoreOptions = {},
  ) {
    migrate(drizzle(sqlite), { migrationsFolder: MIGRATIONS });
    // When the newest migration of this build was created (drizzle's `folderMillis`): ping() compares the database's.
    const newest = Math.max(0, ...readMigrationFiles({ migrationsFolder: MIGRATIONS }).map((m) => m.folderMillis));
    const applied = sqlite.prepare('SELECT max(created_at) AS applied FROM __drizzle_migrations');
    const webhooks = options.webhooks?.subscriptions.length ? options.webhooks : null;
    const wal = new WalSync(sqlite.memory ? null : `${sqlite.name}-wal`, options.syncFile);
    /** Set when a write wrote outbox rows; the next commit tells the deliverer (whose claim goes into a later batch). */
    let outboxWritten = false;
    const writes = new WriteBatcher(sqlite, () => {
      wal.committed();
      if (outboxWritten) {
        outboxWritten = false;
        webhooks!.written();
      }
    });
    /** FULL: flush() makes acknowledged writes durable; NORMAL: only the tool-start journal is synced. */
    const syncAcknowledged = (options.synchronous ?? 'FULL') === 'FULL';
    const driver: Driver = {
      read: <R>(result: unknown) => result as R,
      write: <R>(statement: () => unknown) => writes.run(statement as () => R),
      transaction: (script) => writes.run(() => runSync(script())),
      autocommit: (script) => writes.run(() => runSync(script())),
      // The same fsync makes every earlier commit durable too.
      syncToolStart: () => wal.sync(),
      flush: async (flushOptions) => {
        if (syncAcknowledged) await (flushOptions?.soon ? wal.syncSoon() : wal.sync());
      },
      isThreadBusy: () => false,
      // One read that needs the file: drizzle's migration journal. A newer build may have migrated further; fine.
      ping: async () =>
        ((applied.get() as { applied: number | null }).applied ?? 0) >= newest ? null : 'migrations not applied',
      close: async () => {
        writes.flush();
        void wal.close();
        // A clean stop folds the WAL into the database file, so the .db file alone is a complete copy.
        try {
          sqlite.pragma('wal_checkpoint(TRUNCATE)');
        } catch {
          /* another process reads: it checkpoints later */
        }
        sqlite.close();
      },
    };
    const statements = sqliteStatements(sqlite, () => (outboxWritten = true));
    super(
      { driver, statements, json: JSON.stringify, stored: null },
      webhooks?.subscriptions ?? null,
      options.receipts ?? null,
    );
    this.#wal = wal;
    this.#writes = writes;
  }

  /**
   * A write transaction of a neighbour in the same file (the demo tool source's entities), committed in the same group
   * commit as the store's own writes. `work` is synchronous; the promise resolves once it is committed.
   */
  transaction<T>(work: () => T): Promise<T> {
    return this.#writes.run(work);
  }

  /** Commits, the writes they held, and WAL fsyncs since the store opened: how much group commit shares. */
  get writeStats(): { commits: number; writes: number; fsyncs: number } {
    return { commits: this.#writes.commits, writes: this.#writes.writes, fsyncs: this.#wal.fsyncs };
  }
}
