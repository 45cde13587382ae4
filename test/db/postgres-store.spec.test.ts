// The Store contract (test/db/spec/) on the PostgreSQL store: a migrated database with no rows per test on the
// machine's PostgreSQL (emptied and reused: the spec closes every store before cleanup), and a second PostgresStore
// (its own pool, as another instance would have) on it for the concurrency cases, which here run truly in parallel.
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { reusablePostgresDatabase } from '../support/postgres.js';
import { describeStore } from './spec/index.js';

describeStore({
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
});
