// The Store contract (test/db/spec/) on the PostgreSQL store: a fresh database per test on the machine's
// PostgreSQL, and a second PostgresStore (its own pool, as another instance would have) on it for the concurrency
// cases, which here run truly in parallel. Each test's database is a copy of one migrated for the file.
import { afterAll } from 'vitest';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';
import { describeStore } from './spec/index.js';

let migrated: Promise<TestDatabase> | undefined;
/** The file's migrated database, made at the first test; copies of it are migrated already. */
function migratedTemplate(): Promise<TestDatabase> {
  migrated ??= freshPostgresDatabase().then(async (database) => {
    await (await PostgresStore.open(database.url)).close();
    return database;
  });
  return migrated;
}
afterAll(async () => (await migrated)?.drop());

describeStore({
  name: 'PostgreSQL',
  async open() {
    const database = await freshPostgresDatabase({ template: (await migratedTemplate()).name });
    const store = await PostgresStore.open(database.url);
    return {
      store,
      sql: async (text) => (await store.pool.query(text)).rows as Record<string, unknown>[],
      second: (options) => PostgresStore.open(database.url, options),
      cleanup: () => database.drop(),
    };
  },
});
