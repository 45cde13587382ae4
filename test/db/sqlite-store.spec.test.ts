// The Store contract (test/db/spec/) on the SQLite store: a fresh database file per test, and a second
// SqliteStore (its own connection, as another process would have) on the same file for the concurrency cases.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import { describeStore } from './spec/index.js';

describeStore({
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
});
