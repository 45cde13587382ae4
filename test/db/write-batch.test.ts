// Writes of concurrent callers commit together, and each is still its own all-or-nothing transaction, settled
// only after the commit: on a real SQLite file, read back from a second connection.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BATCH_TURNS, WriteBatcher } from '../../src/db/sqlite/write-batch.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let dir: string;
let db: Database.Database;
let reader: Database.Database;
let commits: number;
let batcher: WriteBatcher;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-batch-'));
  db = new Database(join(dir, 'x.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
  reader = new Database(join(dir, 'x.db'), { readonly: true });
  commits = 0;
  batcher = new WriteBatcher(db, () => {
    commits++;
  });
});

afterEach(() => {
  reader.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (text: string) => () => db.prepare('INSERT INTO notes (text) VALUES (?)').run(text).lastInsertRowid;
const texts = () =>
  (reader.prepare('SELECT text FROM notes ORDER BY id').all() as { text: string }[]).map((r) => r.text);

describe('WriteBatcher', () => {
  it('writes queued in one turn of the event loop commit once, in order, and each caller gets its own result', async () => {
    const ids = await Promise.all([batcher.run(insert('a')), batcher.run(insert('b')), batcher.run(insert('c'))]);
    expect(ids).toEqual([1, 2, 3]);
    expect(commits).toBe(1);
    expect(texts()).toEqual(['a', 'b', 'c']);
  });

  it('a write that throws rolls back only its own changes; the others of the batch commit', async () => {
    const both = () => {
      insert('x1')();
      insert('a')();
    }; // the second insert breaks UNIQUE after the first succeeded
    const results = await Promise.allSettled([batcher.run(insert('a')), batcher.run(both), batcher.run(insert('b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(texts()).toEqual(['a', 'b']); // no x1
  });

  it('nothing is reported done before it is committed: a caller reads its write from another connection at once', async () => {
    const pending = batcher.run(insert('a'));
    expect(texts()).toEqual([]); // queued, not yet written
    await pending;
    expect(texts()).toEqual(['a']);
  });

  it('when the batch cannot commit (the write lock is held elsewhere), every write of it fails and none is written', async () => {
    db.pragma('busy_timeout = 0');
    const other = new Database(join(dir, 'x.db'));
    other.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([batcher.run(insert('a')), batcher.run(insert('b'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    other.exec('ROLLBACK');
    other.close();
    expect(texts()).toEqual([]);
    expect(commits).toBe(0);
    await batcher.run(insert('c')); // and the next batch works again
    expect(texts()).toEqual(['c']);
  });

  it('flush() commits what is queued at once (before the database closes)', () => {
    const pending = batcher.run(insert('a'));
    batcher.flush();
    expect(texts()).toEqual(['a']);
    return expect(pending).resolves.toBe(1);
  });

  it('a batch stays open for a few turns of the event loop: writes of requests arriving meanwhile commit with it', async () => {
    // Each write is queued one turn after the previous one, as requests arriving one poll apart queue theirs.
    const pending = [batcher.run(insert('a'))];
    for (let turn = 1; turn < BATCH_TURNS; turn++) {
      await nextTurn();
      expect(texts()).toEqual([]); // still open: nothing written yet
      pending.push(batcher.run(insert(`t${turn}`)));
    }
    await Promise.all(pending);
    expect(commits).toBe(1);
    expect(texts()).toEqual(['a', ...Array.from({ length: BATCH_TURNS - 1 }, (_, i) => `t${i + 1}`)]);
  });

  it('a lone write is committed after BATCH_TURNS turns, and a write queued after that starts the next batch', async () => {
    const first = batcher.run(insert('a'));
    let committed = false;
    void first.then(() => (committed = true));
    for (let turn = 0; turn < BATCH_TURNS; turn++) await nextTurn();
    await Promise.resolve(); // the settled promise's reaction
    expect(committed).toBe(true);
    expect(texts()).toEqual(['a']);
    await batcher.run(insert('b'));
    expect(commits).toBe(2);
    expect(texts()).toEqual(['a', 'b']);
  });
});
