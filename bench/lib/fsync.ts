// What one commit costs on the disk under the database, with and without an fsync of the WAL: bench part 1 reports
// the difference as the cost of one fsync (which the server's group commit shares between requests).
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { median } from './stats.js';

/** Milliseconds per commit of a one-row insert in WAL mode, synchronous FULL and NORMAL, next to `databaseFile`. */
export function commitCost(databaseFile: string, commits = 200): { full: number; normal: number } {
  const file = join(dirname(databaseFile), 'commit-cost.db');
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const measure = (mode: 'FULL' | 'NORMAL') => {
      db.pragma(`synchronous = ${mode}`);
      const samples: number[] = [];
      for (let i = 0; i < commits; i++) {
        const t0 = performance.now();
        insert.run('x'.repeat(200));
        samples.push(performance.now() - t0);
      }
      return median(samples);
    };
    return { full: measure('FULL'), normal: measure('NORMAL') };
  } finally {
    db.close();
  }
}
