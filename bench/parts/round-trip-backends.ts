// 8. The HITL round trip of part 1 on each store, in one run: one server on SQLite, one on PostgreSQL, and two on
// one PostgreSQL database with Redis pub/sub, each round trip answered on the other instance than the one that
// started it; with the SQL statements and database round trips of one round trip, counted inside the servers.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { httpClient, runWorkers, type HttpClient } from '../lib/http-workers.js';
import { parseStartTurn, resolveBody, START, TRIVIAL } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { backendCpuBetween, BENCH_POSTGRES, postgresAdmin, type BenchDatabase } from '../lib/postgres.js';
import { cpuTimeOf } from '../lib/processes.js';
import { fmt, ms, perSecond, type PartResult } from '../lib/report.js';
import {
  addCounts,
  scaleCounts,
  storeStatements,
  subtractCounts,
  ZERO_COUNTS,
  type SqlCounts,
} from '../lib/sql-count.js';
import { median, medianOf, percentile } from '../lib/stats.js';
import { startToolgate, type ToolgateUnderTest } from '../lib/toolgate.js';

const BENCH_REDIS = process.env.BENCH_REDIS ?? process.env.TOOLGATE_TEST_REDIS ?? 'redis://127.0.0.1:6379';
/** Round trips measured one at a time, on an idle server, per setup (the median is reported). */
const LONE_ROUND_TRIPS = 5;
const WARM_UP_SECONDS = 3;

interface Setup {
  label: string;
  instances: ToolgateUnderTest[];
  /** One keep-alive client per instance. */
  clients: HttpClient[];
  database?: BenchDatabase;
}

interface WriteStats {
  commits: number;
  writes: number;
  fsyncs: number;
}

/** What the servers (and PostgreSQL, Redis) had done at one moment. */
interface Snapshot {
  counts: SqlCounts[];
  writeStats: (WriteStats | null)[];
  cpu: number;
  database: Map<number, number> | null;
  redisCpu: number;
}

interface RoundTripRun {
  rate: number;
  p50: number;
  p99: number;
  completed: number;
  failures: number;
  firstFailure?: string;
  /** Per completed round trip: the toolgate processes' CPU (all instances), ms. */
  cpu: number;
  /** ...the PostgreSQL backends' CPU serving its database, ms (NaN on SQLite). */
  databaseCpu: number;
  /** ...the redis-server process's CPU, ms (NaN without Redis). */
  redisCpu: number;
  counts: SqlCounts;
  commits: number;
  fsyncs: number;
}

interface TrivialRun {
  rate: number;
  p50: number;
  p99: number;
  failures: number;
  firstFailure?: string;
  cpu: number;
}

interface LoneRoundTrip {
  start: SqlCounts;
  resolve: SqlCounts;
  total: SqlCounts;
  /** The whole round trip's counts by instance (two-instance setup). */
  byInstance: SqlCounts[];
  commits: number;
  fsyncs: number;
}

async function snapshot(setup: Setup, redisPid: number | null): Promise<Snapshot> {
  const [counts, writeStats] = await Promise.all([
    Promise.all(setup.instances.map((i) => i.call<SqlCounts>('sqlCounts'))),
    Promise.all(setup.instances.map((i) => i.call<WriteStats | null>('writeStats'))),
  ]);
  return {
    counts,
    writeStats,
    cpu: setup.instances.reduce((sum, i) => sum + cpuTimeOf(i.pid), 0),
    database: setup.database ? await setup.database.backendCpu() : null,
    redisCpu: redisPid ? cpuTimeOf(redisPid) : Number.NaN,
  };
}

function writesBetween(before: Snapshot, after: Snapshot): { commits: number; fsyncs: number } {
  let commits = 0;
  let fsyncs = 0;
  after.writeStats.forEach((stats, i) => {
    const was = before.writeStats[i];
    if (!stats || !was) return;
    commits += stats.commits - was.commits;
    fsyncs += stats.fsyncs - was.fsyncs;
  });
  const onSqlite = after.writeStats.some((stats) => stats !== null);
  return onSqlite ? { commits, fsyncs } : { commits: Number.NaN, fsyncs: Number.NaN };
}

const countsBetween = (before: Snapshot, after: Snapshot) =>
  addCounts(...after.counts.map((c, i) => subtractCounts(c, before.counts[i]!)));

/**
 * `connections` workers loop over the round trip for `seconds`. With two instances, worker w's k-th round trip
 * starts on instance (w + k) mod 2 and is answered on the other one.
 */
async function runRoundTrips(setup: Setup, plan: Plan, seconds: number, redisPid: number | null) {
  const before = await snapshot(setup, redisPid);
  const samples: number[] = [];
  let completed = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const fail = (why: string) => {
    failures++;
    firstFailure ??= why.slice(0, 300);
  };
  const n = setup.clients.length;
  const elapsed = await runWorkers(plan.connections, seconds, async (worker, k) => {
    const first = (worker + k) % n;
    const second = (first + 1) % n;
    const t0 = performance.now();
    try {
      const started = await setup.clients[first]!.post(worker, START);
      const id = parseStartTurn(started.body)?.turn?.pendingElicitations[0]?.id;
      if (!id) return fail(`startTurn did not pause: ${started.status} ${started.body}`);
      const resolved = await setup.clients[second]!.post(worker, resolveBody(id));
      if (resolved.status !== 200 || !resolved.body.includes('"status":"COMPLETED"'))
        return fail(`resolveElicitation did not complete: ${resolved.status} ${resolved.body}`);
      completed++;
      samples.push(performance.now() - t0);
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error));
    }
  });
  const after = await snapshot(setup, redisPid);
  for (const client of setup.clients) client.close(); // each run on new connections
  const per = (value: number) => value / Math.max(1, completed);
  const writes = writesBetween(before, after);
  return {
    rate: completed / elapsed,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    completed,
    failures,
    firstFailure,
    cpu: per(after.cpu - before.cpu),
    databaseCpu:
      before.database && after.database ? per(backendCpuBetween(before.database, after.database)) : Number.NaN,
    redisCpu: per(after.redisCpu - before.redisCpu),
    counts: scaleCounts(countsBetween(before, after), Math.max(1, completed)),
    commits: per(writes.commits),
    fsyncs: per(writes.fsyncs),
  } satisfies RoundTripRun;
}

async function runTrivial(setup: Setup, plan: Plan, seconds: number): Promise<TrivialRun> {
  const body = JSON.stringify({ query: TRIVIAL });
  const client = setup.clients[0]!;
  const pid = setup.instances[0]!.pid;
  const samples: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const fail = (why: string) => {
    failures++;
    firstFailure ??= why.slice(0, 300);
  };
  const cpuBefore = cpuTimeOf(pid);
  const elapsed = await runWorkers(plan.connections, seconds, async (worker) => {
    const t0 = performance.now();
    try {
      const response = await client.post(worker, body);
      if (response.status === 200 && response.body.includes('__typename')) samples.push(performance.now() - t0);
      else fail(`{ __typename }: ${response.status} ${response.body}`);
    } catch (error) {
      fail(`{ __typename }: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  const cpu = (cpuTimeOf(pid) - cpuBefore) / Math.max(1, samples.length);
  client.close();
  return {
    rate: samples.length / elapsed,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    failures,
    firstFailure,
    cpu,
  };
}

/** Waits until no instance's counters move for two readings 25 ms apart (at most ~1 s). */
async function quiet(setup: Setup): Promise<void> {
  let last = '';
  for (let i = 0; i < 40; i++) {
    await sleep(25);
    const now = JSON.stringify(await Promise.all(setup.instances.map((s) => s.call('sqlCounts'))));
    if (now === last) return;
    last = now;
  }
}

/** One round trip on idle servers: started on the first instance, answered on the last. */
async function loneRoundTrip(setup: Setup): Promise<LoneRoundTrip> {
  await quiet(setup);
  const s0 = await snapshot(setup, null);
  const started = await setup.clients[0]!.post(0, START);
  const id = parseStartTurn(started.body)?.turn?.pendingElicitations[0]?.id;
  if (!id) throw new Error(`${setup.label}: startTurn did not pause: ${started.body}`);
  await quiet(setup);
  const s1 = await snapshot(setup, null);
  const resolved = await setup.clients[setup.clients.length - 1]!.post(0, resolveBody(id));
  if (!resolved.body.includes('"status":"COMPLETED"'))
    throw new Error(`${setup.label}: resolveElicitation did not complete: ${resolved.body}`);
  await quiet(setup);
  const s2 = await snapshot(setup, null);
  const writes = writesBetween(s0, s2);
  return {
    start: countsBetween(s0, s1),
    resolve: countsBetween(s1, s2),
    total: countsBetween(s0, s2),
    byInstance: s2.counts.map((c, i) => subtractCounts(c, s0.counts[i]!)),
    ...writes,
  };
}

/** "40 (18 reads, 9 writes, 13 BEGIN/COMMIT/...)" */
function describeCounts(c: SqlCounts, digits = 1): string {
  const parts = [
    `${fmt(c.reads, digits)} reads`,
    `${fmt(c.writes, digits)} writes`,
    `${fmt(c.transactionControl, digits)} BEGIN/COMMIT/SAVEPOINT/RELEASE`,
  ];
  if (c.other > 0) parts.push(`${fmt(c.other, digits)} other`);
  return `${fmt(storeStatements(c), digits)} (${parts.join(', ')})`;
}

async function redisProcessId(url: string): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 5_000, maxRetriesPerRequest: 1 });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => (lastError = error));
  try {
    await redis.connect();
    const info = await redis.info('server');
    return Number(/^process_id:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
  } catch (error) {
    throw new Error(`Redis (BENCH_REDIS=${BENCH_REDIS}) does not answer: ${(lastError ?? (error as Error)).message}`, {
      cause: error,
    });
  } finally {
    redis.disconnect();
  }
}

export async function benchRoundTripBackends(plan: Plan): Promise<PartResult> {
  const redisPid = await redisProcessId(BENCH_REDIS);
  // /proc of the redis-server process (same host only).
  const redisCpuPid = Number.isFinite(redisPid) && canRead(redisPid) ? redisPid : null;
  const admin = await postgresAdmin();
  const setups: Setup[] = [];
  const started: ToolgateUnderTest[] = [];
  const start = async (...args: Parameters<typeof startToolgate>) => {
    const server = await startToolgate(...args);
    started.push(server);
    return server;
  };
  const runs: { trivial: TrivialRun; roundTrips: RoundTripRun[] }[] = [];
  const lone: LoneRoundTrip[][] = [];
  try {
    setups.push({
      label: 'SQLite, one instance',
      instances: [await start(undefined, { countSql: true })],
      clients: [],
    });
    const single = await admin.createDatabase();
    setups.push({
      label: 'PostgreSQL, one instance',
      instances: [await start(single.url, { countSql: true })],
      clients: [],
      database: single,
    });
    const shared = await admin.createDatabase();
    const redis = { url: BENCH_REDIS, prefix: `toolgate-bench-${randomUUID().slice(0, 8)}:` };
    setups.push({
      label: 'PostgreSQL, two instances (Redis pub/sub), answered on the other',
      instances: [
        await start(shared.url, { countSql: true, redis }),
        await start(shared.url, { countSql: true, redis }),
      ],
      clients: [],
      database: shared,
    });
    for (const setup of setups) setup.clients = setup.instances.map((i) => httpClient(i.url, plan.connections));

    // Warm-up: JIT, caches, the pools' connections and PostgreSQL's prepared statements (a second is not enough
    // for the PostgreSQL setups: at ~100 round trips/s their first seconds cost more CPU per round trip).
    await runTrivial(setups[0]!, plan, 1);
    for (const setup of setups) await runRoundTrips(setup, plan, WARM_UP_SECONDS, null);

    for (let r = 0; r < plan.runs; r++) {
      const trivial = await runTrivial(setups[0]!, plan, plan.seconds);
      const roundTrips: RoundTripRun[] = [];
      // The three setups in a rotating order, so that none is always measured first or last.
      for (let j = 0; j < setups.length; j++) {
        const s = (r + j) % setups.length;
        roundTrips[s] = await runRoundTrips(setups[s]!, plan, plan.seconds, s === 2 ? redisCpuPid : null);
      }
      runs.push({ trivial, roundTrips });
    }
    for (const setup of setups) {
      const measured: LoneRoundTrip[] = [];
      for (let i = 0; i < LONE_ROUND_TRIPS; i++) measured.push(await loneRoundTrip(setup));
      lone.push(measured);
    }
  } finally {
    for (const setup of setups) for (const client of setup.clients) client.close();
    await Promise.allSettled(started.map((server) => server.close()));
    await admin.close(); // drops the databases
  }

  const trivialRate = medianOf(runs, (r) => r.trivial.rate);
  const failures = runs.reduce(
    (sum, r) => sum + r.trivial.failures + r.roundTrips.reduce((s, t) => s + t.failures, 0),
    0,
  );
  const firstFailure = runs
    .flatMap((r) => [r.trivial.firstFailure, ...r.roundTrips.map((t) => t.firstFailure)])
    .find(Boolean);
  const figures: PartResult['figures'] = [
    {
      name: `\`{ __typename }\` on the SQLite server (this part's load generator), for scale`,
      value:
        `${perSecond(trivialRate)}, p50 ${ms(medianOf(runs, (r) => r.trivial.p50))}, p99 ${ms(medianOf(runs, (r) => r.trivial.p99))}, ` +
        `server CPU ${ms(medianOf(runs, (r) => r.trivial.cpu))} per query`,
    },
  ];
  const notes: string[] = [];
  setups.forEach((setup, s) => {
    const pick = (f: (t: RoundTripRun) => number) => medianOf(runs, (r) => f(r.roundTrips[s]!));
    const ratio = median(runs.map((r) => r.roundTrips[s]!.rate / r.trivial.rate));
    const underLoad = medianCounts(runs.map((r) => r.roundTrips[s]!.counts));
    // The lone round trip with the median number of statements (the sweeper may add some to one of them).
    const sorted = [...lone[s]!].sort((a, b) => storeStatements(a.total) - storeStatements(b.total));
    const alone = sorted[Math.floor(sorted.length / 2)]!;
    const range = `${storeStatements(sorted[0]!.total)}-${storeStatements(sorted[sorted.length - 1]!.total)}`;
    const onPostgres = setup.database !== undefined;
    figures.push(
      {
        name: `${setup.label}: round trips`,
        value:
          `${perSecond(pick((t) => t.rate))}, p50 ${ms(pick((t) => t.p50))}, p99 ${ms(pick((t) => t.p99))}; ` +
          `/ trivial-query rate: ${fmt(ratio, 3)}`,
      },
      {
        name: `${setup.label}: CPU per round trip`,
        value:
          `toolgate ${ms(pick((t) => t.cpu))}${setup.instances.length > 1 ? ' (both instances)' : ''}` +
          (onPostgres ? `; PostgreSQL backends ${ms(pick((t) => t.databaseCpu))}` : '') +
          (s === 2 && redisCpuPid ? `; redis-server ${ms(pick((t) => t.redisCpu))}` : ''),
      },
      {
        name: `${setup.label}: SQL statements per round trip, alone`,
        value:
          `${describeCounts(alone.total, 0)}: startTurn ${storeStatements(alone.start)} + resolveElicitation ${storeStatements(alone.resolve)}` +
          (setup.instances.length > 1
            ? ` (instance that started it ${storeStatements(alone.byInstance[0]!)}, instance that answered ${storeStatements(alone.byInstance[1]!)})`
            : '') +
          `; the demo tool's own SQL besides: ${alone.total.demoTool} (${LONE_ROUND_TRIPS} lone round trips: ${range})`,
      },
      {
        name: `${setup.label}: SQL statements per round trip, under load`,
        value: `${describeCounts(underLoad)}; the demo tool's own SQL besides: ${fmt(underLoad.demoTool, 2)}`,
      },
      {
        name: `${setup.label}: database round trips per round trip`,
        value: onPostgres
          ? `alone ${alone.total.postgresQueries}, under load ${fmt(underLoad.postgresQueries, 1)} ` +
            `(every query, the demo tool's DELETE and BEGIN/COMMIT included); of them, transactions that write ` +
            `(a COMMIT, or a write on its own, each waiting for PostgreSQL's WAL flush): ${alone.total.postgresCommits} alone, ` +
            `${fmt(underLoad.postgresCommits, 1)} under load`
          : `none: embedded (each statement is a call into SQLite in the server's process); for durability ` +
            `${alone.commits} commits and ${alone.fsyncs} WAL fsyncs alone, ${fmt(
              pick((t) => t.commits),
              2,
            )} commits and ` +
            `${fmt(
              pick((t) => t.fsyncs),
              2,
            )} fsyncs under load (group commit)`,
      },
    );
    if (s === 2) {
      figures.push({
        name: `${setup.label}: Redis commands per round trip`,
        value: `alone ${alone.total.redisCommands} (${alone.total.redisPublishes} PUBLISH), under load ${fmt(underLoad.redisCommands, 2)} (${fmt(underLoad.redisPublishes, 2)} PUBLISH)`,
      });
    }
  });
  // PostgreSQL at SQLite's cost: toolgate's CPU per round trip on one PostgreSQL instance over that on SQLite, per
  // run (the setups of a run are side by side), and the transactions that wait for a WAL flush.
  const perRun = runs.map((r) => r.roundTrips[1]!.cpu / r.roundTrips[0]!.cpu);
  const postgresOverSqlite = median(perRun);
  const commitsAlone = median(lone[1]!.map((l) => l.total.postgresCommits));
  figures.push(
    {
      name: 'PostgreSQL, one instance: toolgate CPU per round trip / on SQLite (per run)',
      value: `${fmt(postgresOverSqlite, 2)} (runs ${perRun.map((v) => fmt(v, 2)).join(', ')})`,
      target: '≤ 1.5',
      pass: postgresOverSqlite <= 1.5,
    },
    {
      name: 'PostgreSQL, one instance: transactions that write, per round trip alone',
      value: String(commitsAlone),
      target: '≤ 4',
      pass: commitsAlone <= 4,
    },
  );
  figures.push({
    name: 'failed round trips and errors',
    value: String(failures),
    target: '0',
    pass: failures === 0,
  });
  if (firstFailure) notes.push(`First failure: ${firstFailure}`);
  notes.push(
    'Counts under load are per completed round trip over the whole run and include what the servers did besides: ' +
      'the sweeper (every 5 s per instance), PostgreSQL clock readings (every minute). The lone round trip waits for ' +
      "the servers' counters to stand still before and after each request.",
    'Statement counting (a wrapper around each execution, inside the servers) costs ~0.1 µs per statement ' +
      '(an SQLite get: 0.60 → 0.69 µs), a few µs per round trip; part 1 runs without it.',
    "The load generator is not part 1's (autocannon), so this part's rates and ratios are comparable with each " +
      "other, and only roughly with part 1's.",
    `PostgreSQL: ${BENCH_POSTGRES.replace(/\/\/[^@/]*@/, '//')} (synchronous_commit as configured there; its WAL fsyncs ` +
      "are in its backends' or walwriter's CPU and time, not toolgate's). Its backends' CPU is read from /proc for " +
      'the backends connected to the bench database at the end of each run; the walwriter and checkpointer are not counted.',
  );
  return {
    part: 8,
    title: 'HITL round trips on SQLite, PostgreSQL, and two PostgreSQL instances',
    method:
      'The round trip of part 1 (`startTurn` that pauses, then `resolveElicitation` ACCEPT that completes; latency from ' +
      'sending the first to receiving the second) on three setups started side by side: (a) one server on a temp SQLite ' +
      'file, (b) one server on a fresh PostgreSQL database, (c) two servers on one fresh PostgreSQL database with Redis ' +
      "pub/sub (a prefix of their own), where worker w's k-th round trip starts on instance (w + k) mod 2 and is " +
      'answered on the other, so every round trip crosses instances. The load is the same for all three and for ' +
      `\`{ __typename }\` on (a): ${plan.connections} workers, each with one request in flight on its own keep-alive ` +
      "HTTP/1.1 connection to each server (bench/lib/http-workers.ts, raw sockets: autocannon chains a connection's " +
      "requests to one URL and cannot answer on another instance, and node:http's client costs the bench process as much " +
      `CPU per request as the server's \`{ __typename }\`), ${plan.seconds} s per setup, \`{ __typename }\` then the three setups in a rotating order, ` +
      `${plan.runs} times; medians. CPU is the servers' /proc time per completed round trip. Inside each server ` +
      '(bench/server.ts, BENCH_COUNT_SQL, bench/lib/sql-count.ts) every SQLite statement execution (run/get/all/iterate ' +
      "on better-sqlite3's Statement prototype, so the BEGIN/COMMIT/SAVEPOINT/RELEASE of its transactions count too) and " +
      "every call of pg's Client.prototype.query (one statement and one network round trip each) is counted, and read " +
      `over IPC: per round trip under load, and for ${LONE_ROUND_TRIPS} round trips one at a time on idle servers (the median). ` +
      "The demo tool's own SQL (DELETE FROM demo_entities, and on SQLite the BEGIN/COMMIT around it) is counted apart.",
    figures,
    runs: runs.map(
      (r, i) =>
        `run ${i + 1}: trivial ${perSecond(r.trivial.rate)} (p50 ${ms(r.trivial.p50)}, ${r.trivial.failures} failed); ` +
        r.roundTrips
          .map(
            (t, s) =>
              `${['SQLite', 'PostgreSQL', 'PostgreSQL x2'][s]} ${perSecond(t.rate)} (p50 ${ms(t.p50)}, p99 ${ms(t.p99)}, ` +
              `${t.completed} completed, ${t.failures} failed, CPU ${ms(t.cpu)}` +
              (Number.isFinite(t.databaseCpu) ? ` + PostgreSQL ${ms(t.databaseCpu)}` : '') +
              `, ${fmt(storeStatements(t.counts), 1)} statements` +
              (s > 0 ? `, ${fmt(t.counts.postgresQueries, 1)} queries` : '') +
              ')',
          )
          .join('; '),
    ),
    notes,
  };
}

/** The counts of the run with the median number of statements (so that its parts add up). */
function medianCounts(all: SqlCounts[]): SqlCounts {
  const sorted = [...all].sort((a, b) => storeStatements(a) - storeStatements(b));
  return sorted[Math.floor(sorted.length / 2)] ?? ZERO_COUNTS;
}

function canRead(pid: number): boolean {
  try {
    cpuTimeOf(pid);
    return true;
  } catch {
    return false;
  }
}
