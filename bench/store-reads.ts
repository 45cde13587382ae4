// The audit list's and the sweeper's store calls, timed in one process on an in-memory database (no HTTP): what
// preparing their statements and the audit indexes changed (docs/bench.md, Findings). Not part of `npm run bench`.
//   npx tsx bench/store-reads.ts [users]    (100,000 elicitations of `users` users; default 1,000)
import { openDatabase, SqliteStore } from '../src/db/sqlite/sqlite-store.js';
import { seedElicitations } from './lib/seed.js';
import { median } from './lib/stats.js';

const users = Number(process.argv[2] ?? 1000);
const sqlite = openDatabase({ path: ':memory:' });
const store = new SqliteStore(sqlite);
seedElicitations(sqlite, 100_000, users);
const now = new Date().toISOString();
const nothingDue = async () => {
  if ((await store.expireDueTurns(now, 100)).length) throw new Error('no turn is due in this database');
};
const cases: [string, () => Promise<unknown>][] = [
  ['audit page of 20, any status', () => store.listElicitations('local', {}, now, 20, null)],
  [
    'audit page of 20, ACCEPTED or EXPIRED',
    () => store.listElicitations('local', { statuses: ['ACCEPTED', 'EXPIRED'] }, now, 20, null),
  ],
  ['sweeper: expire due turns (none due)', nothingDue],
  ['recovery: running leases (none)', () => store.listRunningLeases()],
];
console.log(`100,000 elicitations, ${users} users (the viewer's: ${Math.ceil(100_000 / users)})`);
for (const [name, run] of cases) {
  for (let i = 0; i < 200; i++) await run();
  const perCall: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < 500; i++) await run();
    perCall.push(((performance.now() - started) / 500) * 1000);
  }
  console.log(`${name}: ${median(perCall).toFixed(1)} µs per call (median of 5 rounds of 500)`);
}
store.close();
