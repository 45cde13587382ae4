// 9. The same human-in-the-loop round trip (a model asks for `delete_entities`, the run pauses for approval, an
// ACCEPT resumes it, the tool runs, the model answers) in toolgate, LangGraph JS and the OpenAI Agents SDK on this
// machine, side by side: round trips per second at 1 and 8 concurrent flows and CPU per round trip, in interleaved
// rounds; and the bytes each writes durably per round trip on a thread with 2, 100 and 1,000 prior messages.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { httpClient, runWorkers, type HttpClient } from '../lib/http-workers.js';
import { parseStartTurn, resolveBody, START, startTurnBody } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { postgresAdmin, readBackends } from '../lib/postgres.js';
import { cpuTimeOf, startChild, writeBytesOf, type ServerChild } from '../lib/processes.js';
import { fmt, ms, perSecond, type Figure, type PartResult } from '../lib/report.js';
import { seedTranscript } from '../lib/seed.js';
import { median, percentile } from '../lib/stats.js';
import { installPackage, startInstalled, type InstalledPackage } from '../lib/installed-package.js';
import { benchDir, startToolgate } from '../lib/toolgate.js';
import { readWal, truncateWal } from '../lib/wal.js';
import type { FlowsRun } from '../peers/child.js';

const FLOWS = [1, 8] as const;
const PRIOR_MESSAGES = [2, 100, 1000] as const;
const HTTP_TIMEOUT_MS = 30_000;

type SystemKey =
  | 'toolgateHttp'
  | 'toolgateInstalled'
  | 'toolgateInProcess'
  | 'langgraphSqlite'
  | 'langgraphSqliteFull'
  | 'langgraphPostgres'
  | 'agentsServer';

interface System {
  key: SystemKey;
  label: string;
  child: ServerChild;
  /** Where its load comes from: this process over HTTP, or the child itself. */
  driver: 'http' | 'in-process';
  /** The SQLite file it writes, or a postgres:// URL. */
  database: string;
  client?: HttpClient;
}

interface Run {
  rate: number;
  p50: number;
  p99: number;
  completed: number;
  failures: number;
  firstFailure?: string;
  /** CPU of the process doing the work (the server child, or the in-process child), ms per completed round trip. */
  cpu: number;
}

interface BytesSample {
  /** The child's /proc write_bytes growth over one round trip (PostgreSQL: that of the backends serving it). */
  writeBytes: number;
  /** SQLite: WAL bytes appended (frames); PostgreSQL: WAL bytes generated (LSN difference, whole cluster). */
  walBytes: number;
}

/** One round trip over HTTP on worker `worker`'s connection; throws unless it paused and then completed. */
async function httpRoundTrip(system: System, worker: number, priorThread?: string): Promise<void> {
  const client = system.client!;
  if (system.key === 'toolgateHttp' || system.key === 'toolgateInstalled') {
    const body = priorThread ? JSON.stringify(startTurnBody(undefined, priorThread)) : START;
    const started = await client.post(worker, body);
    const id = parseStartTurn(started.body)?.turn?.pendingElicitations[0]?.id;
    if (!id) throw new Error(`startTurn did not pause: ${started.status} ${started.body.slice(0, 200)}`);
    const resolved = await client.post(worker, resolveBody(id));
    if (resolved.status !== 200 || !resolved.body.includes('"status":"COMPLETED"'))
      throw new Error(`resolveElicitation did not complete: ${resolved.status} ${resolved.body.slice(0, 200)}`);
    return;
  }
  const started = await client.post(worker, JSON.stringify({ priorMessages: Number(priorThread ?? 0) }), '/start');
  const runId = started.status === 200 ? (JSON.parse(started.body) as { runId?: string }).runId : undefined;
  if (!runId) throw new Error(`/start did not pause: ${started.status} ${started.body.slice(0, 200)}`);
  const approved = await client.post(worker, '{}', `/approve/${runId}`);
  if (approved.status !== 200 || !approved.body.includes('"finalOutput":"Done.'))
    throw new Error(`/approve did not complete: ${approved.status} ${approved.body.slice(0, 200)}`);
}

async function measure(system: System, flows: number, seconds: number): Promise<Run> {
  const cpuBefore = cpuTimeOf(system.child.pid);
  if (system.driver === 'in-process') {
    const run = await system.child.call<FlowsRun>('run', { flows, seconds }, seconds * 1000 + 60_000);
    const cpu = cpuTimeOf(system.child.pid) - cpuBefore;
    return { ...run, rate: run.completed / run.elapsed, cpu: cpu / Math.max(1, run.completed) };
  }
  const samples: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const elapsed = await runWorkers(flows, seconds, async (worker) => {
    const t0 = performance.now();
    try {
      await httpRoundTrip(system, worker);
      samples.push(performance.now() - t0);
    } catch (error) {
      failures++;
      firstFailure ??= (error instanceof Error ? error.message : String(error)).slice(0, 300);
    }
  });
  const cpu = cpuTimeOf(system.child.pid) - cpuBefore;
  system.client!.close(); // each run on new connections
  return {
    rate: samples.length / elapsed,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    completed: samples.length,
    failures,
    firstFailure,
    cpu: cpu / Math.max(1, samples.length),
  };
}

/**
 * One round trip on a thread with `length` prior messages, alone, and what it wrote: the child's write_bytes
 * growth, and the WAL growth (SQLite: the WAL checkpointed to zero from this process's connection first, then
 * its frames counted; PostgreSQL: pg_current_wal_lsn() before and after).
 */
async function bytesOfRoundTrip(
  system: System,
  length: number,
  sqlite: Database.Database | null,
  postgres: pg.Client | null,
): Promise<BytesSample> {
  // Seeding is not measured: toolgate's thread is inserted by this process, LangGraph's is one updateState
  // checkpoint in its child, and the Agents SDK server takes its prior messages as the run's input.
  let prior: string | undefined;
  if (system.key === 'toolgateHttp') prior = seedTranscript(sqlite!, length);
  else if (system.key === 'agentsServer') prior = String(length);
  else prior = await system.child.call<string>('seed', { length });
  if (sqlite) await truncateWal(sqlite);
  await sleep(50);
  const lsn = async () =>
    (await postgres!.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
  const lsnBefore = postgres ? await lsn() : '';
  const before = postgres
    ? await readBackends(postgres, postgres.database!, writeBytesOf)
    : new Map([[system.child.pid, writeBytesOf(system.child.pid)]]);
  if (system.driver === 'http') await httpRoundTrip(system, 0, prior);
  else await system.child.call('roundTrip', { threadId: prior }, HTTP_TIMEOUT_MS);
  await sleep(100); // writes after the answer (toolgate's last events) belong to the round trip too
  const after = postgres
    ? await readBackends(postgres, postgres.database!, writeBytesOf)
    : new Map([[system.child.pid, writeBytesOf(system.child.pid)]]);
  let writeBytes = 0;
  for (const [pid, written] of after) writeBytes += written - (before.get(pid) ?? 0);
  let walBytes = Number.NaN;
  if (sqlite) walBytes = readWal(system.database, sqlite).bytes;
  if (postgres) {
    const { rows } = await postgres.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($1, $2)::text AS bytes', [
      await lsn(),
      lsnBefore,
    ]);
    walBytes = Number(rows[0]!.bytes);
  }
  system.client?.close();
  return { writeBytes, walBytes };
}

const range = (values: number[], format: (v: number) => string) =>
  values.length ? `${format(Math.min(...values))}-${format(Math.max(...values))}` : 'n/a';

export async function benchPeers(plan: Plan): Promise<PartResult> {
  const seconds = plan.seconds;
  const warmUpSeconds = plan.quick ? 1 : 3;
  const bytesSamples = plan.quick ? 3 : 5;
  const rounds = plan.runs;
  const dir = benchDir();
  const notes: string[] = [];
  const systems: System[] = [];
  const children: ServerChild[] = [];
  const admin = await postgresAdmin().catch((error: unknown) => {
    notes.push(`LangGraph + PostgresSaver not measured: ${(error as Error).message}`);
    return null;
  });
  let postgres: pg.Client | null = null;
  const settings: Record<string, unknown> = {};
  const runs: Record<SystemKey, Record<number, Run[]>> = {
    toolgateHttp: { 1: [], 8: [] },
    toolgateInstalled: { 1: [], 8: [] },
    toolgateInProcess: { 1: [], 8: [] },
    langgraphSqlite: { 1: [], 8: [] },
    langgraphSqliteFull: { 1: [], 8: [] },
    langgraphPostgres: { 1: [], 8: [] },
    agentsServer: { 1: [], 8: [] },
  };
  const bytes = new Map<SystemKey, Map<number, BytesSample[]>>();
  let installed: InstalledPackage | null = null;
  try {
    const toolgate = await startToolgate();
    children.push(toolgate);
    systems.push({
      key: 'toolgateHttp',
      label: 'toolgate over HTTP (bench/server.ts)',
      child: toolgate,
      driver: 'http',
      database: toolgate.database,
      client: httpClient(toolgate.url, Math.max(...FLOWS), HTTP_TIMEOUT_MS),
    });
    // The package as users install and start it (not in a quick run: packing and installing take about a minute).
    if (!plan.quick) {
      installed = await installPackage();
      const database = join(dir.dir, 'toolgate-installed.db');
      const child = await startInstalled(installed, database, join(dir.dir, 'toolgate-installed.log'));
      children.push(child);
      systems.push({
        key: 'toolgateInstalled',
        label: 'toolgate, the installed package (its `toolgate` command, info log to a file)',
        child,
        driver: 'http',
        database,
        client: httpClient(child.url, Math.max(...FLOWS), HTTP_TIMEOUT_MS),
      });
    } else notes.push('The installed package is not measured in a quick run.');
    const start = async (file: string, env: Record<string, string>) => {
      const child = await startChild(file, env);
      children.push(child);
      return child;
    };
    const inProcessDb = join(dir.dir, 'toolgate-in-process.db');
    systems.push({
      key: 'toolgateInProcess',
      label: 'toolgate in process (yoga.fetch)',
      child: await start('peers/toolgate-in-process.ts', { BENCH_DB: inProcessDb }),
      driver: 'in-process',
      database: inProcessDb,
    });
    const langgraphDb = join(dir.dir, 'langgraph.db');
    systems.push({
      key: 'langgraphSqlite',
      label: 'LangGraph + SqliteSaver (in process)',
      child: await start('peers/langgraph.ts', { BENCH_DB: langgraphDb, BENCH_PEER_CHECKPOINTER: 'sqlite' }),
      driver: 'in-process',
      database: langgraphDb,
    });
    const langgraphFullDb = join(dir.dir, 'langgraph-full.db');
    systems.push({
      key: 'langgraphSqliteFull',
      label: 'LangGraph + SqliteSaver at synchronous=FULL (in process)',
      child: await start('peers/langgraph.ts', {
        BENCH_DB: langgraphFullDb,
        BENCH_PEER_CHECKPOINTER: 'sqlite',
        BENCH_PEER_SYNCHRONOUS: 'FULL',
      }),
      driver: 'in-process',
      database: langgraphFullDb,
    });
    if (admin) {
      const database = await admin.createDatabase();
      postgres = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: 5_000 });
      await postgres.connect();
      postgres.on('error', () => {});
      systems.push({
        key: 'langgraphPostgres',
        label: 'LangGraph + PostgresSaver (in process)',
        child: await start('peers/langgraph.ts', { BENCH_DB: database.url, BENCH_PEER_CHECKPOINTER: 'postgres' }),
        driver: 'in-process',
        database: database.url,
      });
    }
    const agentsDb = join(dir.dir, 'agents.db');
    const agents = await start('peers/agents-server.ts', {
      BENCH_DB: agentsDb,
      // No trace processor is registered without @openai/agents; off, so that no span is even built.
      OPENAI_AGENTS_DISABLE_TRACING: '1',
    });
    systems.push({
      key: 'agentsServer',
      label: 'OpenAI Agents SDK behind node:http',
      child: agents,
      driver: 'http',
      database: agentsDb,
      client: httpClient(agents.url, Math.max(...FLOWS), HTTP_TIMEOUT_MS),
    });

    for (const system of systems) await measure(system, Math.max(...FLOWS), warmUpSeconds);

    // Rounds: at each flow count every system in turn, the two sides of each target's ratio next to each other
    // (toolgate over HTTP and the Agents SDK server, toolgate in process and LangGraph + SqliteSaver), so that they
    // run seconds apart on a machine whose speed drifts; the order reversed every other round (ABBA), so that no
    // side is always first.
    const adjacent: SystemKey[] = [
      'toolgateHttp',
      'agentsServer',
      'toolgateInstalled',
      'toolgateInProcess',
      'langgraphSqlite',
      'langgraphSqliteFull',
      'langgraphPostgres',
    ];
    const ordered = adjacent.flatMap((key) => systems.filter((s) => s.key === key));
    for (let r = 0; r < rounds; r++) {
      for (const flows of r % 2 === 0 ? FLOWS : [...FLOWS].reverse()) {
        for (const system of r % 2 === 0 ? ordered : [...ordered].reverse())
          runs[system.key][flows]!.push(await measure(system, flows, seconds));
      }
    }

    // Bytes: one round trip at a time on idle systems, the lengths interleaved.
    // toolgate in process and installed are the same store as over HTTP; LangGraph at FULL writes the same pages as
    // at its default.
    const bytesSystems = systems.filter(
      (s) => s.key !== 'toolgateInProcess' && s.key !== 'toolgateInstalled' && s.key !== 'langgraphSqliteFull',
    );
    const readers = new Map(
      bytesSystems
        .filter((s) => !s.database.startsWith('postgres'))
        .map((s) => {
          const db = new Database(s.database);
          db.pragma('busy_timeout = 5000');
          return [s.key, db] as const;
        }),
    );
    try {
      for (let i = 0; i < bytesSamples; i++) {
        for (const length of PRIOR_MESSAGES) {
          for (const system of bytesSystems) {
            const sample = await bytesOfRoundTrip(
              system,
              length,
              readers.get(system.key) ?? null,
              system.key === 'langgraphPostgres' ? postgres : null,
            );
            const byLength = bytes.get(system.key) ?? new Map<number, BytesSample[]>();
            bytes.set(system.key, byLength);
            byLength.set(length, [...(byLength.get(length) ?? []), sample]);
          }
        }
      }
    } finally {
      for (const db of readers.values()) db.close();
    }
    settings.langgraphSqlite = await systems.find((s) => s.key === 'langgraphSqlite')!.child.call('settings');
    settings.langgraphSqliteFull = await systems.find((s) => s.key === 'langgraphSqliteFull')!.child.call('settings');
    settings.agentsServer = await agents.call('settings');
    if (postgres) {
      const show = async (name: string) =>
        (await postgres!.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name];
      settings.postgres = {
        fsync: await show('fsync'),
        synchronous_commit: await show('synchronous_commit'),
        wal_sync_method: await show('wal_sync_method'),
      };
    }
  } finally {
    for (const system of systems) system.client?.close();
    await postgres?.end().catch(() => {});
    await Promise.allSettled(children.map((child) => child.stop()));
    await admin?.close(); // drops the database
    installed?.remove();
    dir.remove();
  }

  const measured = systems.map((s) => s.key);
  const label = (key: SystemKey) => systems.find((s) => s.key === key)!.label;
  const medianRun = (key: SystemKey, flows: number, pick: (run: Run) => number) => median(runs[key][flows]!.map(pick));
  /** Per-round ratio of `pick` between two systems: the median and the spread. */
  const ratio = (a: SystemKey, b: SystemKey, flows: number, pick: (run: Run) => number) => {
    const values = runs[a][flows]!.map((run, r) => pick(run) / pick(runs[b][flows]![r]!));
    return { median: median(values), values };
  };
  const ratioFigure = (
    name: string,
    value: { median: number; values: number[] },
    target: string,
    pass: (v: number) => boolean,
  ): Figure => ({
    name,
    value: `${fmt(value.median, 2)} (rounds: ${value.values.map((v) => fmt(v, 2)).join(', ')})`,
    target,
    pass: pass(value.median),
  });
  const bytesMedian = (key: SystemKey, length: number, pick: (s: BytesSample) => number) =>
    median((bytes.get(key)?.get(length) ?? []).map(pick));

  const figures: Figure[] = [];
  for (const key of measured) {
    for (const flows of FLOWS) {
      const all = runs[key][flows]!;
      figures.push({
        name: `${label(key)}: ${flows} flow${flows > 1 ? 's' : ''}`,
        value:
          `${perSecond(medianRun(key, flows, (r) => r.rate))} (rounds ${range(
            all.map((r) => r.rate),
            (v) => fmt(v, 0),
          )}), p50 ${ms(medianRun(key, flows, (r) => r.p50))}, p99 ${ms(medianRun(key, flows, (r) => r.p99))}; ` +
          `CPU ${ms(medianRun(key, flows, (r) => r.cpu))} per round trip (rounds ${range(
            all.map((r) => r.cpu),
            (v) => fmt(v, 2),
          )})`,
      });
    }
  }
  for (const key of measured.filter((k) => bytes.has(k))) {
    const wal = key === 'langgraphPostgres' ? 'PostgreSQL WAL' : 'WAL';
    figures.push({
      name: `${label(key)}: bytes per round trip by prior messages`,
      value: PRIOR_MESSAGES.map(
        (length) =>
          `${length}: ${fmt(
            bytesMedian(key, length, (s) => s.writeBytes),
            0,
          )} write_bytes, ` +
          `${fmt(
            bytesMedian(key, length, (s) => s.walBytes),
            0,
          )} ${wal}`,
      ).join('; '),
    });
  }
  const has = (key: SystemKey) => measured.includes(key);
  // toolgate over HTTP as the bench starts it, and as its users install and start it (names as in earlier runs).
  const overHttp: [SystemKey, string, string][] = [
    ['toolgateHttp', 'toolgate over HTTP', 'toolgate server CPU'],
    ['toolgateInstalled', 'toolgate, the installed package, over HTTP', 'toolgate, the installed package: server CPU'],
  ];
  for (const [key, rateName, cpuName] of overHttp.filter(([key]) => has(key) && has('agentsServer'))) {
    figures.push(
      ratioFigure(
        `${rateName} / Agents SDK server, round trips per second at 8 flows`,
        ratio(key, 'agentsServer', 8, (r) => r.rate),
        '>= 1',
        (v) => v >= 1,
      ),
      ratioFigure(
        `${cpuName} / Agents SDK server CPU per round trip at 8 flows`,
        ratio(key, 'agentsServer', 8, (r) => r.cpu),
        '<= 1',
        (v) => v <= 1,
      ),
    );
  }
  for (const flows of FLOWS) {
    figures.push(
      ratioFigure(
        `toolgate in process / LangGraph + SqliteSaver, round trips per second at ${flows} flow${flows > 1 ? 's' : ''}`,
        ratio('toolgateInProcess', 'langgraphSqlite', flows, (r) => r.rate),
        '>= 2',
        (v) => v >= 2,
      ),
    );
  }
  for (const flows of FLOWS) {
    const value = ratio('toolgateInProcess', 'langgraphSqliteFull', flows, (r) => r.rate);
    figures.push({
      name: `toolgate in process / LangGraph + SqliteSaver at synchronous=FULL (each commit fsynced, as toolgate's answers are), round trips per second at ${flows} flow${flows > 1 ? 's' : ''}`,
      value: `${fmt(value.median, 2)} (rounds: ${value.values.map((v) => fmt(v, 2)).join(', ')})`,
    });
  }
  for (const flows of FLOWS) {
    const value = ratio('toolgateHttp', 'langgraphSqlite', flows, (r) => r.rate);
    figures.push({
      name: `toolgate over HTTP / LangGraph + SqliteSaver (in process), round trips per second at ${flows} flow${flows > 1 ? 's' : ''}`,
      value: `${fmt(value.median, 2)} (rounds: ${value.values.map((v) => fmt(v, 2)).join(', ')})`,
    });
  }
  const bytesRatio =
    bytesMedian('toolgateHttp', 2, (s) => s.writeBytes) / bytesMedian('langgraphSqlite', 2, (s) => s.writeBytes);
  // No target: the bytes target was withdrawn (toolgate's bytes per round trip stay flat where LangGraph's grow with
  // the transcript: the rows above).
  figures.push({
    name: 'toolgate write_bytes per round trip at 2 prior messages / LangGraph + SqliteSaver',
    value: fmt(bytesRatio, 2),
  });
  const failures = measured.reduce(
    (sum, key) => sum + FLOWS.reduce((s, flows) => s + runs[key][flows]!.reduce((t, r) => t + r.failures, 0), 0),
    0,
  );
  figures.push({ name: 'failed round trips', value: String(failures), target: '0', pass: failures === 0 });
  const firstFailure = measured
    .flatMap((key) =>
      FLOWS.flatMap((flows) => runs[key][flows]!.map((r) => r.firstFailure && `${label(key)}: ${r.firstFailure}`)),
    )
    .find(Boolean);
  if (firstFailure) notes.push(`First failure: ${firstFailure}`);

  notes.push(
    "Durability as each system is set: toolgate, WAL with synchronous=FULL semantics: every mutation's answer waits " +
      'for an fsync of the WAL (group commit shares it between concurrent requests). LangGraph SqliteSaver sets only ' +
      `journal_mode=WAL and leaves synchronous at better-sqlite3's compiled default for WAL, NORMAL (read at run time: ` +
      `${JSON.stringify(settings.langgraphSqlite ?? null)}; 1 = NORMAL): commits are not fsynced, only checkpoints, so ` +
      'a power cut can lose the last approvals it answered; measured again at synchronous=FULL ' +
      `(${JSON.stringify(settings.langgraphSqliteFull ?? null)}), where each commit is fsynced before it returns. ` +
      'LangGraph invokes with its default durability ("async": ' +
      "a step's checkpoint is written while the next step runs; invoke returns after all of them are stored). " +
      `PostgresSaver: the server's settings ${JSON.stringify(settings.postgres ?? null)}. Agents SDK server: WAL, ` +
      `synchronous=FULL (${JSON.stringify(settings.agentsServer ?? null)}; 2 = FULL): each of its two commits per round ` +
      'trip (the paused RunState row, then the final output) is fsynced before its answer, without group commit.',
    'What each stores: toolgate the whole transcript and its records (thread, turn, messages, elicitation, tool ' +
      "execution, events) and its demo tool's own DELETE on SQLite; LangGraph a checkpoint per step, each holding " +
      'the whole messages list (SqliteSaver: one blob per checkpoint; PostgresSaver: a blob per changed channel) and ' +
      'the pending writes; the Agents SDK server one row per run holding the RunState string (the whole input, items ' +
      "and the paused tool call), then its final output. The peers' tools are pure functions (no SQL).",
    'Bytes: write_bytes is the growth of /proc/<child>/io write_bytes over one round trip alone (pages the child ' +
      'dirtied in files, counted once until written back; the copy of the WAL into the database file at checkpoint is ' +
      "not in it, for any system). For SQLite, WAL is the bytes of WAL frames appended, after this process's " +
      'connection checkpointed the WAL to zero. For PostgreSQL, write_bytes is that of the backends connected to the ' +
      'bench database (a backend writes and flushes its WAL at commit, and writes out data pages it evicts; what the ' +
      'walwriter and checkpointer write is not counted), and WAL is pg_wal_lsn_diff over the round trip: the WAL the ' +
      'whole cluster generated meanwhile. ' +
      `Prior messages: toolgate's thread is seeded as in part 2, LangGraph's with one updateState checkpoint, the ` +
      "Agents SDK server's go in as the run's input (it has no thread of its own). Medians of " +
      `${bytesSamples} round trips per length.`,
    `Rates: ${rounds} rounds of ${seconds} s per system and flow count after ${warmUpSeconds} s of warm-up at 8 ` +
      'flows; medians, with the spread of the rounds; ratios are taken per round. CPU: /proc time of the process ' +
      'doing the work (the server child for the HTTP setups, whose load comes from this process over raw keep-alive ' +
      'sockets, bench/lib/http-workers.ts; the child itself for the in-process ones, whose load loop is in it).',
  );

  return {
    part: 9,
    title: 'The HITL round trip in toolgate, LangGraph JS and the OpenAI Agents SDK',
    method:
      'The same round trip in three systems, each in a child process: a model (zero-latency, scripted: a call of ' +
      '`delete_entities` for "delete entities 1", after the tool result a final text) asks for the tool, the run pauses ' +
      'for approval, an ACCEPT resumes it, the tool runs, the run completes. (1) toolgate: bench/server.ts over HTTP ' +
      '(startTurn, resolveElicitation), the installed package over HTTP the same way (`npm pack`, the tarball ' +
      'installed with `npm install --omit=dev` in an empty folder, its `toolgate` command serving the built-in demo ' +
      'and logging at info to a file; full runs only), and the same server driven in its own process through ' +
      '`yoga.fetch`; ' +
      '(2) LangGraph JS: a StateGraph over MessagesAnnotation, agent -> approve (interrupt()) -> ToolNode -> agent, ' +
      'invoke to the interrupt then invoke(new Command({resume})) on one thread_id, with SqliteSaver on a temp file and ' +
      'PostgresSaver on a fresh database; (3) the OpenAI Agents SDK (@openai/agents-core): an Agent whose tool has ' +
      '`needsApproval: true`, run() to the interruption, the RunState string stored in SQLite, then fromString, ' +
      'approve, run(), behind node:http (POST /start, POST /approve/:runId). Round trips per second and CPU at 1 and ' +
      '8 concurrent flows in interleaved rounds; bytes written per round trip on a thread with 2, 100 and 1,000 prior ' +
      'messages.',
    figures,
    runs: Array.from(
      { length: rounds },
      (_, r) =>
        `round ${r + 1}: ` +
        measured
          .map(
            (key) =>
              `${label(key)} ` +
              FLOWS.map((flows) => {
                const run = runs[key][flows]![r]!;
                return `${flows}: ${perSecond(run.rate)} CPU ${ms(run.cpu)} (${run.completed} done, ${run.failures} failed)`;
              }).join(', '),
          )
          .join('; '),
    ),
    notes,
  };
}
