// The PostgreSQL store: several toolgate instances share one database. The scripts and the Store methods are the
// shared ones (../sql-store.ts), the statements this dialect's (statements.ts: row locks, SKIP LOCKED, one statement
// per loop write); this module connects, migrates, and drives the scripts asynchronously, each transaction on one
// connection, tried again from the start after a serialization failure or a deadlock.
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import pg from 'pg';
import { toStorableJson } from '../../domain/text.js';
import type { ReceiptSigner } from '../../domain/decision-records.js';
import type { WebhookOutbox } from '../../domain/webhook-events.js';
import { migrationsFolder } from '../migrations-folder.js';
import type { Script } from '../scripts.js';
import { SqlStore, type Driver } from '../sql-store.js';
import * as schema from './schema.js';
import { json, postgresStatements, type PgQuery } from './statements.js';

const MIGRATIONS = migrationsFolder('postgres');

export interface PostgresStoreOptions {
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** The webhook endpoints whose events the changes write to the outbox; none: nothing is written or read for them. */
  webhooks?: WebhookOutbox;
  /** The deployment's key for signed decision records (docs/receipts.md); none: no records are written. */
  receipts?: ReceiptSigner;
}

/** SQLSTATEs after which a transaction is tried again from the start: nothing of it was committed. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

const { builtins } = pg.types;
const parseDate = pg.types.getTypeParser(builtins.TIMESTAMPTZ, 'text') as (value: string) => Date;
/** PostgreSQL's text of a timestamp(3) in UTC: "2026-01-01 00:00:00.12+00" (trailing zeros of the fraction left out). */
const UTC_TIME = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,3}))?\+00$/;
/** The ISO-8601 string of a timestamptz: rewritten when the session's zone is UTC, else parsed (any zone, any year). */
export function toIso(value: string): string {
  const utc = UTC_TIME.exec(value);
  if (!utc) return parseDate(value).toISOString();
  return `${utc[1]}T${utc[2]}.${(utc[3] ?? '').padEnd(3, '0')}Z`;
}
/**
 * Values as the rows of ../rows.ts have them, as on SQLite: times as ISO-8601 strings, int8 (sequence numbers,
 * counts) as numbers, JSON as its text (the shared mappers parse it).
 */
const TYPES = {
  getTypeParser(oid: number, format?: string): (value: string) => unknown {
    if (oid === builtins.INT8) return Number;
    if (oid === builtins.TIMESTAMPTZ) return toIso;
    if (oid === builtins.JSON || oid === builtins.JSONB) return String;
    return pg.types.getTypeParser(oid, format as 'text') as (value: string) => unknown;
  },
};

/** A statement's rows when it returns columns, else how many rows it changed. */
function outcome(result: pg.QueryResult): unknown {
  return result.fields.length ? result.rows : (result.rowCount ?? 0);
}

function sqlState(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

export class PostgresStore extends SqlStore {
  readonly pool: pg.Pool;

  private constructor(pool: pg.Pool, webhooks: WebhookOutbox | null, receipts: ReceiptSigner | null) {
    const newest = Math.max(0, ...readMigrationFiles({ migrationsFolder: MIGRATIONS }).map((m) => m.folderMillis));
    /** Runs a script's statements on `client`; `wroteOutbox` is told when one writes outbox rows. */
    const drive = async <T>(client: pg.Pool | pg.PoolClient, script: Script<T>, wroteOutbox?: () => void) => {
      let step = script.next();
      while (!step.done) {
        const query = step.value as PgQuery;
        if (query.outbox) wroteOutbox?.();
        step = script.next(outcome(await client.query(query)));
      }
      return step.value;
    };
    let closing: Promise<void> | null = null;
    const driver: Driver = {
      read: (query) => pool.query(query as PgQuery).then(outcome) as never,
      write: (statement) => pool.query(statement() as PgQuery).then(outcome) as never,
      // One transaction on one connection: BEGIN, the script, COMMIT. A serialization failure or deadlock rolls back
      // and runs the script again from the start (nothing of the failed attempt was committed).
      transaction: async (script) => {
        for (let attempt = 1; ; attempt++) {
          const client = await pool.connect();
          let broken = false;
          try {
            await client.query('BEGIN');
            let outbox = false;
            const result = await drive(client, script(), () => (outbox = true));
            await client.query('COMMIT');
            if (outbox) webhooks!.written();
            return result;
          } catch (error) {
            await client.query('ROLLBACK').catch(() => {
              broken = true;
            });
            if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(error))) continue;
            throw error;
          } finally {
            client.release(broken);
          }
        }
      },
      autocommit: (script) => drive(pool, script()),
      // Durable when a commit returns: every connection runs with synchronous_commit = on (withDurableCommits).
      syncToolStart: async () => {},
      flush: async () => {},
      // The partial unique index: another instance started a turn on this thread in between.
      isThreadBusy: (error) =>
        sqlState(error) === '23505' && (error as { constraint?: string }).constraint === 'turns_one_active_per_thread',
      ping: async () => {
        const { rows } = await pool.query<{ applied: number | null; synchronous_commit: string }>({
          name: 'newest_migration',
          text: `SELECT (SELECT max(created_at) FROM drizzle.__drizzle_migrations) AS applied,
            current_setting('synchronous_commit') AS synchronous_commit`,
        });
        if ((rows[0]?.applied ?? 0) < newest) return 'migrations not applied';
        return rows[0]!.synchronous_commit === 'off' ? 'synchronous_commit is off' : null;
      },
      /** Ends the pool once; later calls wait for the same end. */
      close: () => (closing ??= pool.end()),
    };
    super(
      { driver, statements: postgresStatements, json, stored: toStorableJson },
      webhooks?.subscriptions ?? null,
      receipts,
    );
    this.pool = pool;
  }

  /**
   * Connects, applies the migrations this build has (one instance at a time: drizzle's migrator runs in a
   * transaction under an advisory lock taken here) and returns the store. Rejects when the database cannot be reached.
   */
  static async open(connectionString: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({
      ...withDurableCommits(connectionString),
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      types: TYPES,
    });
    // A connection dropped while idle (a database restart) is an event on the pool, not a crash: the next query
    // opens a new one.
    pool.on('error', () => {});
    const store = new PostgresStore(
      pool,
      options.webhooks?.subscriptions.length ? options.webhooks : null,
      options.receipts ?? null,
    );
    try {
      const client = await pool.connect();
      try {
        // Several instances starting at once: one migrates, the others wait and then find nothing to do.
        await client.query('SELECT pg_advisory_lock(hashtext($1))', ['toolgate:migrate']);
        await migrate(drizzle(client, { schema }), { migrationsFolder: MIGRATIONS });
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['toolgate:migrate']).catch(() => {});
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return store;
  }

  /**
   * The database's clock minus this host's, in ms (half a round trip of error): every instance reads lease and
   * expiry times on one clock, the database's, rather than on hosts' clocks that may disagree.
   */
  async clockOffsetMs(): Promise<number> {
    // A connection first: time spent waiting for one is not part of the round trip being timed.
    const client = await this.pool.connect();
    try {
      const before = Date.now();
      const { rows } = await client.query<{ now: string }>({ name: 'now', text: 'SELECT now() AS now' });
      const after = Date.now();
      return Date.parse(rows[0]!.now) - (before + after) / 2;
    } finally {
      client.release();
    }
  }
}

/**
 * The pool's connection settings with `-c synchronous_commit=on` in the startup `options`: every commit is durable
 * when it returns (the tool-start journal above all), whatever the server's or the database's setting (one in the
 * startup packet overrides both), on every connection of the pool, before its first query and without a query of its
 * own. Options the URL already gives are kept, ours last so that they win. pg takes a URL's `options` over the
 * config's, so a URL gets it in its query; a connection string that is not a URL (a socket path) in the config.
 */
export function withDurableCommits(connectionString: string): { connectionString: string; options?: string } {
  const durable = '-c synchronous_commit=on';
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return { connectionString, options: durable };
  }
  const given = url.searchParams.get('options');
  url.searchParams.set('options', given ? `${given} ${durable}` : durable);
  return { connectionString: url.toString() };
}
