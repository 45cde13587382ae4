// 6. Memory with 10,000 paused turns: paused state lives in SQLite, so the server's RSS must not grow with it.
import Database from 'better-sqlite3';
import { runLoad } from '../lib/load.js';
import { startTurnBody, TRIVIAL } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { memoryOf, resetPeakMemory } from '../lib/processes.js';
import { fmt, mib, type PartResult } from '../lib/report.js';
import { median } from '../lib/stats.js';
import { startToolgate } from '../lib/toolgate.js';
import { runRoundTrips } from './round-trip.js';

interface RssRun {
  before: number;
  peak: number;
  after: number;
  afterGc: number;
  paused: number;
  /** V8 heap in use after a full GC, before and after. */
  heapBefore: number;
  heapAfter: number;
  /** V8 heap committed (heapTotal) and memory outside it (external), after a full GC, before and after. */
  committed: [number, number];
  external: [number, number];
  peakTracked: boolean;
  seconds: number;
}

const LIMIT = 50 * 2 ** 20;

async function oneRun(plan: Plan): Promise<RssRun> {
  const server = await startToolgate();
  try {
    // Warm-up with the same kind of work (JIT, caches, pools), then a full GC: the baseline is a warm, idle server.
    await runRoundTrips(server.url, plan.connections, 1, server.pid);
    await runLoad({ url: server.url, connections: plan.connections, durationSeconds: 1, body: { query: TRIVIAL } });
    const usageBefore = await server.call<NodeJS.MemoryUsage>('gc');
    const heapBefore = usageBefore.heapUsed;
    await server.call('heapSnapshot', { name: `${server.pid}-before` });
    // The warm-up's last round trips may have paused without being answered: counted, so that the figure is the load's.
    const pausedBefore = countPaused(server.database);
    const peakTracked = resetPeakMemory(server.pid);
    const before = memoryOf(server.pid).rss;
    const started = performance.now();
    let failures = 0;
    const load = await runLoad({
      url: server.url,
      connections: plan.connections,
      amount: plan.pausedTurns,
      limitSeconds: 300,
      requests: [
        {
          body: JSON.stringify(startTurnBody()),
          onResponse: (_s, body) => {
            if (!body.includes('"status":"PAUSED"')) failures++;
          },
        },
      ],
    });
    const seconds = (performance.now() - started) / 1000;
    const { rss: after, peak } = memoryOf(server.pid);
    const usageAfter = await server.call<NodeJS.MemoryUsage>('gc');
    const heapAfter = usageAfter.heapUsed;
    await server.call('heapSnapshot', { name: `${server.pid}-after` }, 120_000);
    const afterGc = memoryOf(server.pid).rss;
    const paused = countPaused(server.database) - pausedBefore;
    if (failures || load.errors) throw new Error(`${failures} turns did not pause, ${load.errors} HTTP errors`);
    return {
      before,
      peak,
      after,
      afterGc,
      paused,
      heapBefore,
      heapAfter,
      peakTracked,
      seconds,
      committed: [usageBefore.heapTotal, usageAfter.heapTotal],
      external: [usageBefore.external, usageAfter.external],
    };
  } finally {
    await server.close();
  }
}

function countPaused(database: string): number {
  const db = new Database(database, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM turns WHERE status = 'PAUSED'").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

export async function benchRss(plan: Plan): Promise<PartResult> {
  const runs: RssRun[] = [];
  for (let i = 0; i < plan.runs; i++) runs.push(await oneRun(plan));
  const peakGrowth = median(runs.map((r) => r.peak - r.before));
  const retained = median(runs.map((r) => r.afterGc - r.before));
  const paused = Math.min(...runs.map((r) => r.paused));
  return {
    part: 6,
    title: `Server memory with ${plan.pausedTurns.toLocaleString('en-US')} paused turns`,
    method:
      'A fresh server is warmed up (1 s of round trips and of `{ __typename }`) and garbage-collected (bench/server.ts runs with ' +
      '--expose-gc; the bench asks over IPC), then its peak RSS is reset (/proc/<pid>/clear_refs) and its RSS read (/proc/<pid>/status). ' +
      `Then ${plan.pausedTurns.toLocaleString('en-US')} \`startTurn\` ("delete entities 1", a new thread each) over ${plan.connections} connections, each ` +
      'pausing; then the peak RSS (VmHWM) during that, and the RSS after a full GC. The database is checked to hold the paused turns (not counting any the warm-up left). ' +
      `A fresh server per run, ${plan.runs} runs.`,
    figures: [
      { name: 'RSS before', value: mib(median(runs.map((r) => r.before))) },
      {
        name: 'peak RSS growth while creating them',
        value: `${mib(peakGrowth)} (peak ${mib(median(runs.map((r) => r.peak)))})${runs.every((r) => r.peakTracked) ? '' : ' (peak not resettable here: peak since start)'}`,
        target: '<= 50 MiB',
        pass: peakGrowth <= LIMIT,
      },
      {
        name: 'RSS growth that stays (after a full GC)',
        value: `${mib(retained)} (${fmt(retained / plan.pausedTurns, 0)} bytes per paused turn)`,
      },
      {
        name: 'V8 heap growth that stays (after a full GC)',
        value: `${mib(median(runs.map((r) => r.heapAfter - r.heapBefore)))} (${fmt(median(runs.map((r) => (r.heapAfter - r.heapBefore) / plan.pausedTurns)), 0)} bytes per paused turn)`,
      },
      {
        name: 'paused turns the load left in the database',
        value: paused.toLocaleString('en-US'),
        target: `>= ${plan.pausedTurns.toLocaleString('en-US')}`,
        pass: paused >= plan.pausedTurns,
      },
    ],
    runs: runs.map(
      (r, i) =>
        `run ${i + 1}: before ${mib(r.before)}, peak ${mib(r.peak)}, after ${mib(r.after)}, after GC ${mib(r.afterGc)}; ` +
        `${r.paused} paused turns in ${fmt(r.seconds, 1)} s; V8 heap after GC ${mib(r.heapBefore)} -> ${mib(r.heapAfter)} ` +
        `(committed ${mib(r.committed[0])} -> ${mib(r.committed[1])}, external ${mib(r.external[0])} -> ${mib(r.external[1])})`,
    ),
    notes: [],
  };
}
