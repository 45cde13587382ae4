// Everything the server has stored, read from its SQLite file by a connection of our own: a test compares two
// snapshots to show that a refused request changed nothing.
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';

export interface DbSnapshot {
  /** Rows per table. */
  counts: Record<string, number>;
  /** A digest of every row of every table. */
  digest: string;
}

export class DbObserver {
  readonly #db: Database.Database;

  constructor(file: string) {
    this.#db = new Database(file, { readonly: true, fileMustExist: true });
  }

  snapshot(): DbSnapshot {
    const tables = (
      this.#db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%drizzle%' ORDER BY name")
        .all() as { name: string }[]
    ).map((t) => t.name);
    const counts: Record<string, number> = {};
    const hash = createHash('sha256');
    // One read transaction: all tables as of the same moment.
    this.#db.transaction(() => {
      for (const table of tables) {
        const rows = this.#db.prepare(`SELECT * FROM "${table}" ORDER BY rowid`).raw().all();
        counts[table] = rows.length;
        hash
          .update(table)
          .update(
            JSON.stringify(rows, (_k, v) =>
              typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? v.toString('hex') : v,
            ),
          );
      }
    })();
    return { counts, digest: hash.digest('hex') };
  }

  close(): void {
    this.#db.close();
  }
}
