// Reads what a SQLite WAL file holds: every frame is one page image written by a commit. After a
// `wal_checkpoint(TRUNCATE)` the file is empty, so what it holds afterwards is exactly what was written since.
import { existsSync, readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';

export interface WalWrites {
  /** Bytes appended to the WAL: header, frame headers and page images. */
  bytes: number;
  pageSize: number;
  frames: number;
  /** Frames that end a transaction. */
  commits: number;
  /** Pages written, by the table or index they belong to (sqlite's dbstat). */
  pagesByBtree: Record<string, number>;
}

/** Folds the WAL into the database and empties it; retries while a reader holds an old snapshot. */
export async function truncateWal(db: Database.Database): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (result?.busy === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the WAL could not be checkpointed: a reader keeps it busy');
}

export function readWal(databaseFile: string, db: Database.Database): WalWrites {
  const file = `${databaseFile}-wal`;
  const wal = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
  if (wal.length < 32) return { bytes: wal.length, pageSize: 0, frames: 0, commits: 0, pagesByBtree: {} };
  const pageSize = wal.readUInt32BE(8) || 65536;
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  const frameSize = 24 + pageSize;
  const owner = new Map<number, string>(
    (db.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]).map((r) => [
      r.pageno,
      r.name,
    ]),
  );
  let frames = 0;
  let commits = 0;
  const pagesByBtree: Record<string, number> = {};
  for (let offset = 32; offset + frameSize <= wal.length; offset += frameSize) {
    // A frame from before the last WAL reset carries other salts: not part of this log.
    if (wal.readUInt32BE(offset + 8) !== salt1 || wal.readUInt32BE(offset + 12) !== salt2) break;
    frames++;
    if (wal.readUInt32BE(offset + 4) !== 0) commits++;
    const name = owner.get(wal.readUInt32BE(offset)) ?? '(freelist or new page)';
    pagesByBtree[name] = (pagesByBtree[name] ?? 0) + 1;
  }
  return { bytes: 32 + frames * frameSize, pageSize, frames, commits, pagesByBtree };
}
