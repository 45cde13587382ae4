// The demo tool source's entities in the server's SQLite file (its own table, outside the store's migrations).
import type Database from 'better-sqlite3';
import { DEMO_SEED, type DemoEntities } from '../../domain/demo-entities.js';

/**
 * `write`: runs a synchronous write transaction in the store's group commit (SqliteStore.transaction), so that a demo
 * tool's change commits with the server's own writes instead of in a commit of its own.
 */
export function sqliteDemoEntities(db: Database.Database, write: <T>(work: () => T) => Promise<T>): DemoEntities {
  db.exec(`CREATE TABLE IF NOT EXISTS demo_entities (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, created_at TEXT NOT NULL)`);
  const count = db.prepare('SELECT count(*) AS n FROM demo_entities').get() as { n: number };
  const insert = db.prepare('INSERT INTO demo_entities (name, created_at) VALUES (?, ?)');
  // Seeded once: a database whose entities were all deleted stays empty (sqlite_sequence remembers).
  if (count.n === 0 && !db.prepare("SELECT 1 FROM sqlite_sequence WHERE name = 'demo_entities'").get()) {
    db.transaction(() => DEMO_SEED.forEach((name) => insert.run(name, new Date().toISOString())))();
  }
  const list = db.prepare('SELECT id, name FROM demo_entities ORDER BY id');
  const remove = db.prepare('DELETE FROM demo_entities WHERE id = ?');
  return {
    list: async () => list.all() as { id: number; name: string }[],
    create: (name) => write(() => Number(insert.run(name, new Date().toISOString()).lastInsertRowid)),
    delete: (ids) => write(() => ids.filter((id) => remove.run(id).changes > 0)),
  };
}
