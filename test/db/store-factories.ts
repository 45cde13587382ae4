// What each backend hands the Store contract (test/db/spec/): a store on a fresh database per test, and a second
// store on the same database (its own connection or pool, as another process would have) for the concurrency cases.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import { reusablePostgresDatabase } from '../support/postgres.js';
import type { StoreFactory } from './spec/index.js';

/** A fresh database file per test. */
export const sqliteStoreFactory: StoreFactory = {
  name: 'SQLite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-spec-'));
    const path = join(dir, 'toolgate.db');
    const store = new SqliteStore(openDatabase({ path }));
    return {
      store,
      async sql(text) {
        const statement = store.sqlite.prepare(text);
        if (statement.reader) return statement.all() as Record<string, unknown>[];
        statement.run();
        return [];
      },
      second: async (options) => new SqliteStore(openDatabase({ path }), options),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

/**
 * A migrated database with no rows per test on the machine's PostgreSQL, emptied and reused (the spec closes every
 * store before cleanup); the concurrency cases here run truly in parallel.
 */
export const postgresStoreFactory: StoreFactory = {
  name: 'PostgreSQL',
  async open() {
    const database = await reusablePostgresDatabase();
    const store = await PostgresStore.open(database.url);
    return {
      store,
      sql: async (text) => (await store.pool.query(text)).rows as Record<string, unknown>[],
      second: (options) => PostgresStore.open(database.url, options),
      cleanup: () => database.release(),
    };
  },
};
