// 2. What one pause writes to SQLite at transcript lengths 10, 100 and 1,000: the WAL frames (page images)
// appended by the startTurn that pauses, and the rows it changed.
import Database from 'better-sqlite3';
import { gql } from '../lib/load.js';
import { START_TURN, startTurnBody, type StartTurnData } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { fmt, type PartResult } from '../lib/report.js';
import { seedTranscript } from '../lib/seed.js';
import { median } from '../lib/stats.js';
import { startToolgate } from '../lib/toolgate.js';
import { readWal, truncateWal, type WalWrites } from '../lib/wal.js';

interface PauseWrites extends WalWrites {
  length: number;
  /** Rows inserted, updated or deleted by the server (its connection's total_changes()). */
  rows: number;
}

const COUNTED = ['threads', 'turns', 'messages', 'elicitations', 'tool_executions'];

export async function benchPauseBytes(plan: Plan): Promise<PartResult> {
  const server = await startToolgate();
  const db = new Database(server.database);
  db.pragma('busy_timeout = 5000');
  const results: PauseWrites[] = [];
  const inserted: Record<number, Record<string, number>> = {};
  try {
    // Warm-up: the first pause of a fresh database also creates pages every later one reuses.
    await gql<StartTurnData>(server.url, START_TURN, startTurnBody().variables);
    // More runs than elsewhere: about one pause in two splits a page of some index (3-15 more pages), so the median
    // needs many samples; and the lengths are interleaved, so that the database's growth during the part does not
    // favour the length measured first (a fresh database splits least).
    for (let run = 0; run < Math.max(plan.runs, 15); run++) {
      for (const length of plan.transcriptLengths) {
        const threadId = seedTranscript(db, length);
        await truncateWal(db);
        const counts = countRows(db);
        const changes = await server.call<number>('changes');
        const data = await gql<StartTurnData>(server.url, START_TURN, startTurnBody(undefined, threadId).variables);
        if (data.startTurn.turn?.status !== 'PAUSED')
          throw new Error(`the turn on a ${length}-message thread did not pause: ${JSON.stringify(data)}`);
        const rows = (await server.call<number>('changes')) - changes;
        const after = countRows(db);
        inserted[length] = Object.fromEntries(
          COUNTED.map((t) => [t, after[t]! - counts[t]!]).filter(([, n]) => n !== 0),
        );
        results.push({ length, rows, ...readWal(server.database, db) });
      }
    }
  } finally {
    db.close();
    await server.close();
  }
  const byLength = (length: number) => results.filter((r) => r.length === length);
  const bytesAt = (length: number) => median(byLength(length).map((r) => r.bytes));
  const shortest = Math.min(...plan.transcriptLengths);
  const longest = Math.max(...plan.transcriptLengths);
  const ratio = bytesAt(longest) / bytesAt(shortest);
  return {
    part: 2,
    title: 'Bytes written by one pause, by transcript length',
    method:
      'A thread with N messages is seeded in bulk (raw inserts, one transaction); the WAL is checkpointed and truncated ' +
      '(`PRAGMA wal_checkpoint(TRUNCATE)` from the bench\'s own connection); then one `startTurn` on that thread ("delete entities 1") ' +
      'runs until it pauses: user message, model call, assistant message, gate, elicitation, turn PAUSED. What it wrote is read ' +
      'from the WAL file: every frame is one page image (page size + 24 bytes of frame header) written by one commit, and dbstat ' +
      "names the table or index of each page. Rows are the server connection's `total_changes()` delta (inserted + updated + deleted). " +
      'So "bytes" are bytes of page images SQLite wrote to the WAL, which the checkpoint later copies into the database file once more. ' +
      `${Math.max(plan.runs, 15)} pauses per length, the lengths interleaved; the median of each.`,
    figures: [
      ...plan.transcriptLengths.map((length) => {
        const runs = byLength(length);
        return {
          name: `pause on a ${length.toLocaleString('en-US')}-message transcript`,
          value:
            `${fmt(bytesAt(length), 0)} bytes in the WAL (${fmt(median(runs.map((r) => r.frames)), 0)} pages, ` +
            `${fmt(median(runs.map((r) => r.commits)), 0)} commits), ${fmt(median(runs.map((r) => r.rows)), 0)} rows written`,
        };
      }),
      {
        name: `bytes at ${longest.toLocaleString('en-US')} / bytes at ${shortest}`,
        value: fmt(ratio, 3),
        target: '<= 1.2',
        pass: ratio <= 1.2,
      },
    ],
    runs: [...results]
      .sort((a, b) => a.length - b.length)
      .map(
        (r) =>
          `${r.length} messages: ${r.bytes} bytes, ${r.frames} pages in ${r.commits} commits ` +
          `(${Object.entries(r.pagesByBtree)
            .sort()
            .map(([name, n]) => `${name} ${n}`)
            .join(', ')}), ${r.rows} rows`,
      ),
    notes: Object.entries(inserted).map(
      ([length, rows]) => `rows inserted by a pause on ${length} messages: ${JSON.stringify(rows)}`,
    ),
  };
}

function countRows(db: Database.Database): Record<string, number> {
  return Object.fromEntries(
    COUNTED.map((table) => [table, (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n]),
  );
}
