// Paired before/after for the gateway's hot path (part 10's read-only call): supergateway and toolgate's /mcp from two
// checkouts, each on a fresh SQLite file (or BENCH_POSTGRES databases with --backend=postgres), driven in interleaved
// windows of the same length in an order that rotates per round, so that each round's ratios come from neighbouring
// windows on a machine whose speed drifts. Rate and the relay's CPU per call (toolgate's process, or supergateway's).
//
//   npm run bench:gateway-ab -- --before=<checkout> [--sessions=1] [--seconds=3] [--rounds=5] [--backend=postgres]
//                               [--log=before|after|both] [--call=gated]
//
// --call=gated: `record`, which asks first, accepted by each client's elicitation handler (part 10's gated call),
// in place of the read-only `lookup`; supergateway then calls `record` without asking.
// --log: that side logs as `npm start` does (info, JSON lines, to a file: bench/server.ts BENCH_LOG); else warnings.
// <checkout>: a directory holding another commit of this repository with its node_modules (a git worktree with a
// symlink to these). The after side is this checkout.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpSession, startSupergateway, UPSTREAM_ARGS, UPSTREAM_COMMAND, type Session } from './lib/mcp.js';
import { postgresAdmin } from './lib/postgres.js';
import { cpuTimeOf } from './lib/processes.js';
import { runWorkers } from './lib/http-workers.js';
import { median } from './lib/stats.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=');
    return [key!, value ?? ''];
  }),
);
const before = args.get('before');
if (!before)
  throw new Error('usage: bench/gateway-ab.ts --before=<checkout> [--sessions=N] [--seconds=S] [--rounds=R]');
const sessions = Number(args.get('sessions') ?? 1);
const seconds = Number(args.get('seconds') ?? 3);
const rounds = Math.max(3, Number(args.get('rounds') ?? 5));
const postgres = args.get('backend') === 'postgres';
const logs = (side: string) => args.get('log') === side || args.get('log') === 'both';
const gated = args.get('call') === 'gated';
const HERE = fileURLToPath(new URL('..', import.meta.url));

const CONFIG = {
  models: {},
  toolSources: { up: { type: 'mcp', command: UPSTREAM_COMMAND, args: UPSTREAM_ARGS } },
  agents: [{ id: 'gateway', name: 'Gateway', description: 'bench', tools: ['up:*'], requireToolConfirmation: true }],
};

interface Side {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** bench/server.ts of `checkout`, on `database`, as part 10 starts it. */
async function toolgateAt(name: string, checkout: string, database: string): Promise<Side> {
  const log = logs(name) ? { BENCH_LOG: join(dir, `${name}.log`) } : {};
  const child: ChildProcess = fork(join(checkout, 'bench/server.ts'), [], {
    execArgv: ['--import', 'tsx'],
    cwd: checkout,
    env: { ...process.env, BENCH_DB: database, BENCH_CONFIG: JSON.stringify(CONFIG), ...log },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited (${code})`)));
    child.on('message', (message: { type?: string; url?: string }) => {
      if (message.type === 'ready') resolveUrl(message.url!);
    });
  });
  const exited = new Promise((done) => child.once('exit', done));
  return {
    name,
    url: `${new URL('/mcp', url)}`,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

let nextKey = 0;
async function window(side: Side, clients: Session[], length: number) {
  const cpuBefore = cpuTimeOf(side.pid);
  let calls = 0;
  const elapsed = await runWorkers(clients.length, length, async (worker) => {
    const key = `k${nextKey++}`;
    const call = gated ? { name: 'record', arguments: { key, value: key } } : { name: 'lookup', arguments: { key } };
    const result = await clients[worker]!.client.callTool(call);
    if (result.isError) throw new Error(`${side.name}: ${JSON.stringify(result.content)}`);
    calls++;
  });
  return { rate: calls / elapsed, cpu: (cpuTimeOf(side.pid) - cpuBefore) / calls };
}

const dir = mkdtempSync(join(tmpdir(), 'toolgate-gateway-ab-'));
const admin = postgres ? await postgresAdmin() : null;
const sides: Side[] = [];
const clients: Session[][] = [];
try {
  const database = async (label: string) => (admin ? (await admin.createDatabase()).url : join(dir, `${label}.db`));
  sides.push({ name: 'supergateway', ...(await startSupergateway()) });
  sides.push(await toolgateAt('before', resolve(before), await database('before')));
  sides.push(await toolgateAt('after', HERE, await database('after')));
  const accept = gated ? () => ({ action: 'accept' as const, content: {} }) : undefined;
  for (const side of sides)
    clients.push(await Promise.all(Array.from({ length: sessions }, () => httpSession(side.url, accept))));
  for (let i = 0; i < sides.length; i++) await window(sides[i]!, clients[i]!, 3);
  const results = sides.map(() => [] as { rate: number; cpu: number }[]);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < sides.length; j++) {
      const i = (r + j) % sides.length;
      results[i]!.push(await window(sides[i]!, clients[i]!, seconds));
    }
  }
  console.log(`${sessions} session(s), ${postgres ? 'PostgreSQL' : 'SQLite'}, ${rounds} rounds of ${seconds} s`);
  sides.forEach((side, i) => {
    const rates = results[i]!.map((w) => w.rate);
    const cpus = results[i]!.map((w) => w.cpu);
    console.log(
      `${side.name.padEnd(13)} ${median(rates).toFixed(0).padStart(5)} calls/s (${rates.map((v) => v.toFixed(0)).join(' ')}), ` +
        `CPU per call ${median(cpus).toFixed(2)} ms (${cpus.map((v) => v.toFixed(2)).join(' ')})`,
    );
  });
  const ratio = (a: number, b: number, pick: (w: { rate: number; cpu: number }) => number) => {
    const values = results[a]!.map((w, r) => pick(w) / pick(results[b]![r]!));
    return `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)})`;
  };
  console.log(`after / before: rate ${ratio(2, 1, (w) => w.rate)}, CPU per call ${ratio(2, 1, (w) => w.cpu)}`);
  console.log(`after / supergateway: rate ${ratio(2, 0, (w) => w.rate)}, CPU per call ${ratio(2, 0, (w) => w.cpu)}`);
} finally {
  for (const session of clients.flat()) await session.close().catch(() => {});
  await Promise.allSettled(sides.map((side) => side.stop()));
  await admin?.close();
  rmSync(dir, { recursive: true, force: true });
}
