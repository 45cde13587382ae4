// `npm run bench`: starts toolgate (and a bare yoga) in child processes on 127.0.0.1, drives them from this
// process with autocannon and graphql-ws clients, prints each figure next to its target and writes
// bench/RESULTS.md. Not part of `npm test`. BENCH_QUICK=1 (or --quick) for a short run with small sizes;
// --only=1,3 (or BENCH_ONLY) for some parts. Every loop is bounded in count and time; BENCH_DEADLINE_SECONDS
// (default 1800) ends the whole run.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeMachine } from './lib/machine.js';
import { makePlan } from './lib/plan.js';
import { killAllChildren } from './lib/processes.js';
import { printPart, renderMarkdown, type PartResult } from './lib/report.js';
import { benchBareYoga } from './parts/bare-yoga.js';
import { benchGateOverhead } from './parts/gate-overhead.js';
import { benchGateway } from './parts/gateway.js';
import { benchPauseBytes } from './parts/pause-bytes.js';
import { benchPeers } from './parts/peers.js';
import { benchPending } from './parts/pending.js';
import { benchPush } from './parts/push.js';
import { benchRoundTripBackends } from './parts/round-trip-backends.js';
import { benchRoundTrips } from './parts/round-trip.js';
import { benchRss } from './parts/rss.js';

const PARTS: Record<number, { title: string; run: (plan: ReturnType<typeof makePlan>) => Promise<PartResult> }> = {
  1: { title: 'HITL round trips vs a trivial query', run: benchRoundTrips },
  2: { title: 'Bytes written by one pause, by transcript length', run: benchPauseBytes },
  3: { title: 'pendingElicitations at 1M rows', run: benchPending },
  4: { title: 'Subscription push latency (graphql-ws)', run: benchPush },
  5: { title: 'Gate overhead (confirmation off vs on with NEVER)', run: benchGateOverhead },
  6: { title: 'Server memory with 10,000 paused turns', run: benchRss },
  7: { title: 'toolgate vs bare graphql-yoga, `{ __typename }`', run: benchBareYoga },
  8: { title: 'HITL round trips on SQLite, PostgreSQL, and two PostgreSQL instances', run: benchRoundTripBackends },
  9: { title: 'The HITL round trip in toolgate, LangGraph JS and the OpenAI Agents SDK', run: benchPeers },
  10: { title: 'The MCP gateway: toolgate /mcp vs supergateway vs direct stdio', run: benchGateway },
};

async function main(): Promise<void> {
  const plan = makePlan(process.argv.slice(2), process.env);
  const machine = describeMachine();
  const deadline = Number(process.env.BENCH_DEADLINE_SECONDS ?? 1800);
  setTimeout(() => {
    console.error(`bench: deadline of ${deadline} s reached; stopping`);
    killAllChildren();
    process.exit(2);
  }, deadline * 1000).unref();
  console.log(
    `toolgate bench (${plan.quick ? 'quick' : 'full'}): ${machine.nproc} cores, ${machine.cpu}, node ${machine.node}, load ${machine.loadAverage}`,
  );

  const started = performance.now();
  const results: PartResult[] = [];
  for (const part of [...plan.parts].sort((a, b) => a - b)) {
    const entry = PARTS[part];
    if (!entry) continue;
    const t0 = performance.now();
    try {
      const result = await entry.run(plan);
      results.push(result);
      printPart(result);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const result: PartResult = {
        part,
        title: entry.title,
        method: '',
        figures: [{ name: 'error', value: message, target: 'runs', pass: false }],
        runs: [],
        notes: [],
      };
      results.push(result);
      printPart(result);
      killAllChildren();
    }
    console.log(`   (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const file = fileURLToPath(new URL('RESULTS.md', import.meta.url));
  writeFileSync(file, renderMarkdown(machine, plan, results, (performance.now() - started) / 1000));
  console.log(`\nbench: wrote ${file}`);
}

process.on('SIGINT', () => {
  killAllChildren();
  process.exit(130);
});
main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    killAllChildren();
    process.exit(1);
  },
);
