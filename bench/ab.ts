// Paired before/after in one run: the HITL round trip of part 8 on two builds of toolgate at once, each
// bench/server.ts of its own checkout (`--before=<dir>`, e.g. a `git worktree` of the commit to compare with, its
// dependencies installed; this checkout is "after"), in short windows that alternate between them (ABBA), so that
// both see the same phases of a shared machine. Prints each window's server and database CPU per round trip, and
// the median of the after/before ratios of adjacent windows. Not part of `npm run bench`:
// `npm run bench:ab -- --before=<dir> [--backend=postgres|sqlite] [--windows=12] [--seconds=4]` (PostgreSQL:
// BENCH_POSTGRES, as part 8).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpClient, runWorkers } from './lib/http-workers.js';
import { parseStartTurn, resolveBody, START } from './lib/operations.js';
import { postgresAdmin } from './lib/postgres.js';
import { backendCpuBetween, type BenchDatabase } from './lib/postgres.js';
import { cpuTimeOf } from './lib/processes.js';
import { median } from './lib/stats.js';

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const given = arg('before', '');
if (!given) throw new Error('bench/ab.ts: --before=<dir> names the checkout to compare with');
const before = resolve(given);
const after = resolve(fileURLToPath(new URL('..', import.meta.url)));
const backend = arg('backend', 'postgres');
const windows = Number(arg('windows', '12'));
const seconds = Number(arg('seconds', '4'));
const WORKERS = 10;

interface Server {
  child: ChildProcess;
  url: string;
  database: BenchDatabase | null;
}

function startServer(tree: string, target: { url: string; database: BenchDatabase | null }): Promise<Server> {
  const child = fork(join(tree, 'bench/server.ts'), [], {
    cwd: tree,
    execArgv: [
      '--import',
      'tsx',
      '--expose-gc',
      // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each server, written when it stops.
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ],
    env: { ...process.env, BENCH_DB: target.url },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${tree}: no server within 60 s`)), 60_000);
    child.on('message', (message: { type: string; url?: string }) => {
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      ok({ child, url: message.url!, database: target.database });
    });
    child.once('exit', (code) => fail(new Error(`${tree}: server exited (${code})`)));
  });
}

async function window(server: Server): Promise<{ cpu: number; db: number; rate: number; failures: number }> {
  const client = httpClient(server.url, WORKERS);
  const cpu0 = cpuTimeOf(server.child.pid!);
  const db0 = await server.database?.backendCpu();
  let completed = 0;
  let failures = 0;
  const elapsed = await runWorkers(WORKERS, seconds, async (worker) => {
    const started = await client.post(worker, START);
    const id = parseStartTurn(started.body)?.turn?.pendingElicitations[0]?.id;
    if (!id) return void failures++;
    const resolved = await client.post(worker, resolveBody(id));
    if (resolved.body.includes('"status":"COMPLETED"')) completed++;
    else failures++;
  });
  const cpu = (cpuTimeOf(server.child.pid!) - cpu0) / Math.max(1, completed);
  const db1 = await server.database?.backendCpu();
  const db = db0 && db1 ? backendCpuBetween(db0, db1) / Math.max(1, completed) : Number.NaN;
  client.close();
  return { cpu, db, rate: completed / elapsed, failures };
}

const admin = backend === 'postgres' ? await postgresAdmin() : null;
const dirs: string[] = [];
async function database(): Promise<{ url: string; database: BenchDatabase | null }> {
  if (admin) {
    const created = await admin.createDatabase();
    return { url: created.url, database: created };
  }
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-ab-'));
  dirs.push(dir);
  return { url: join(dir, 'toolgate.db'), database: null };
}
const servers = {
  before: await startServer(before, await database()),
  after: await startServer(after, await database()),
};
try {
  await window(servers.before); // warm-up, both
  await window(servers.after);
  const ratios: number[] = [];
  for (let i = 0; i < windows; i++) {
    // ABBA order: each side goes first as often as the other.
    const order = i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    const pair: Record<string, number> = {};
    for (const name of order) {
      const w = await window(servers[name]);
      pair[name] = w.cpu;
      console.log(
        `${i} ${name.padEnd(6)} cpu ${w.cpu.toFixed(3)} ms/rt  database ${w.db.toFixed(3)} ms/rt  ${w.rate.toFixed(0)}/s` +
          `  failures ${w.failures}`,
      );
    }
    ratios.push(pair.after! / pair.before!);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `${backend}: after/before CPU per round trip, median of ${ratios.length} pairs: ${median(ratios).toFixed(3)} ` +
      `(range ${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)})`,
  );
} finally {
  for (const s of Object.values(servers)) s.child.kill('SIGTERM');
  await admin?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
