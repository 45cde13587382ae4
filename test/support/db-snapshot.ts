// Everything the server has stored, read from its database (an SQLite file or a PostgreSQL URL) by a connection of
// our own: a test compares two snapshots to show that a refused request changed nothing.
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { isPostgresUrl } from '../../src/storage.js';

export interface DbSnapshot {
  /** Rows per table. */
  counts: Record<string, number>;
  /** A digest of every row of every table. */
  digest: string;
}

type Tables = [table: string, rows: unknown[]][];

export class DbObserver {
  readonly #sqlite: Database.Database | null = null;
  readonly #pg: pg.Pool | null = null;

  constructor(database: string) {
    if (isPostgresUrl(database)) this.#pg = new pg.Pool({ connectionString: database, max: 1 });
    else this.#sqlite = new Database(database, { readonly: true, fileMustExist: true });
  }

  async snapshot(): Promise<DbSnapshot> {
    const tables = this.#sqlite ? this.#sqliteTables(this.#sqlite) : await this.#postgresTables(this.#pg!);
    const counts: Record<string, number> = {};
    const hash = createHash('sha256');
    for (const [table, rows] of tables) {
      counts[table] = rows.length;
      hash
        .update(table)
        .update(
          JSON.stringify(rows, (_k, v) =>
            typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? v.toString('hex') : v,
          ),
        );
    }
    return { counts, digest: hash.digest('hex') };
  }

  #sqliteTables(db: Database.Database): Tables {
    const names = (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%drizzle%' ORDER BY name")
        .all() as { name: string }[]
    ).map((t) => t.name);
    // One read transaction: all tables as of the same moment.
    return db.transaction(() =>
      names.map((name): Tables[number] => [name, db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).raw().all()]),
    )();
  }

  async #postgresTables(pool: pg.Pool): Promise<Tables> {
    const client = await pool.connect();
    try {
      // One snapshot for all tables.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { rows: names } = await client.query<{ name: string }>(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
      );
      const tables: Tables = [];
      for (const { name } of names) {
        const { rows } = await client.query({ text: `SELECT * FROM "${name}" ORDER BY 1`, rowMode: 'array' });
        tables.push([name, rows]);
      }
      await client.query('COMMIT');
      return tables;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    this.#sqlite?.close();
    await this.#pg?.end();
  }
}
