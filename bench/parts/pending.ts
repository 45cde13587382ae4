// 3. pendingElicitations with 1,000,000 elicitations of 10,000 users in the database, queried over HTTP as one
// of them (the viewer `local`), one request at a time, so latency is service time, not queueing.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SqliteStore, openDatabase } from '../../src/db/sqlite/sqlite-store.js';
import { gql, runLoad, type LoadResult } from '../lib/load.js';
import { PENDING } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { fmt, ms, perSecond, type PartResult } from '../lib/report.js';
import { seedElicitations, type ElicitationSeed } from '../lib/seed.js';
import { medianOf } from '../lib/stats.js';
import { benchDir, startToolgate } from '../lib/toolgate.js';

const FIRST = 50;

export async function benchPending(plan: Plan): Promise<PartResult> {
  const dir = benchDir();
  const database = join(dir.dir, 'toolgate.db');
  try {
    const seed = seedDatabase(database, plan.pendingRows, plan.pendingUsers);
    const server = await startToolgate(database);
    const runs: LoadResult[] = [];
    let totalCount = -1;
    try {
      const data = await gql<{ pendingElicitations: { totalCount: number; edges: unknown[] } }>(server.url, PENDING, {
        first: FIRST,
      });
      totalCount = data.pendingElicitations.totalCount;
      if (totalCount !== seed.viewerPending)
        throw new Error(`pendingElicitations counted ${totalCount}, the seed made ${seed.viewerPending}`);
      const body = { query: PENDING, variables: { first: FIRST } };
      await runLoad({ url: server.url, connections: 1, durationSeconds: 1, body });
      for (let i = 0; i < plan.runs; i++) {
        runs.push(
          await runLoad({
            url: server.url,
            connections: 1,
            durationSeconds: plan.seconds,
            body,
            serverPid: server.pid,
          }),
        );
      }
    } finally {
      await server.close();
    }
    const p99 = medianOf(runs, (r) => r.p99);
    const errors = runs.reduce((sum, r) => sum + r.errors, 0);
    return {
      part: 3,
      title: `pendingElicitations at ${plan.pendingRows.toLocaleString('en-US')} rows`,
      method:
        `${seed.rows.toLocaleString('en-US')} elicitations of ${seed.users.toLocaleString('en-US')} users are inserted in bulk before the ` +
        'server starts (raw better-sqlite3 inserts in one transaction, on the migrated schema), interleaved in time (row i belongs to user ' +
        "i mod users), random ids like the server's; per user every 5th is PENDING and unexpired, every 50th PENDING but past its expiry, " +
        `the rest answered or expired. The viewer \`local\` (user 0) then asks \`pendingElicitations(first: ${FIRST})\` with totalCount, ` +
        `edges (id, status, message, expiresAt, toolCall) and pageInfo over HTTP, one connection, back to back, for ${plan.seconds} s, ` +
        `${plan.runs} times (after a 1 s warm-up); the answer is checked once (totalCount = ${seed.viewerPending}).`,
      figures: [
        {
          name: 'pendingElicitations latency',
          value:
            `p50 ${ms(medianOf(runs, (r) => r.p50))}, p99 ${ms(p99)} (${perSecond(medianOf(runs, (r) => r.rate))}, ` +
            `server CPU ${ms(medianOf(runs, (r) => r.cpuPerResponse))} per query)`,
          target: 'p99 <= 5 ms',
          pass: p99 <= 5,
        },
        { name: 'HTTP errors', value: String(errors), target: '0', pass: errors === 0 },
      ],
      runs: runs.map(
        (r, i) => `run ${i + 1}: p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, ${perSecond(r.rate)}, ${r.responses} queries`,
      ),
      notes: [
        `seeding ${seed.rows.toLocaleString('en-US')} rows took ${fmt(seed.seconds, 1)} s; the viewer has ${totalCount} pending of ${Math.round(seed.rows / seed.users)}.`,
      ],
    };
  } finally {
    dir.remove();
  }
}

/** Migrates a new database file with the server's own store, then seeds it without WAL (a bulk load) and hands it back in WAL mode. */
function seedDatabase(file: string, rows: number, users: number): ElicitationSeed {
  new SqliteStore(openDatabase({ path: file })).close();
  const db = new Database(file);
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = OFF');
    // The whole database fits in the page cache until the commit writes it once (random ids make index inserts random).
    db.pragma('cache_size = -3145728');
    db.pragma('temp_store = MEMORY');
    const seed = seedElicitations(db, rows, users);
    db.pragma('journal_mode = WAL');
    return seed;
  } finally {
    db.close();
  }
}
