// 7. toolgate's own `{ __typename }` rate next to a bare graphql-yoga server with a one-field schema: what
// toolgate's HTTP handler, context and plugins cost per request. Both are child processes; interleaved runs.
import { runLoad, type LoadResult } from '../lib/load.js';
import { TRIVIAL } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { fmt, ms, perSecond, type PartResult } from '../lib/report.js';
import { median, medianOf } from '../lib/stats.js';
import { startBareYoga, startToolgate } from '../lib/toolgate.js';

export async function benchBareYoga(plan: Plan): Promise<PartResult> {
  const toolgate = await startToolgate();
  const bare = await startBareYoga();
  const runs: { toolgate: LoadResult; bare: LoadResult }[] = [];
  try {
    const load = (url: string, pid: number, seconds: number) =>
      runLoad({
        url,
        connections: plan.connections,
        durationSeconds: seconds,
        body: { query: TRIVIAL },
        serverPid: pid,
      });
    await load(toolgate.url, toolgate.pid, 1);
    await load(bare.url, bare.pid, 1);
    for (let i = 0; i < plan.runs; i++) {
      // Alternate which goes first in each pair.
      if (i % 2 === 0) {
        const t = await load(toolgate.url, toolgate.pid, plan.seconds);
        runs.push({ toolgate: t, bare: await load(bare.url, bare.pid, plan.seconds) });
      } else {
        const b = await load(bare.url, bare.pid, plan.seconds);
        runs.push({ toolgate: await load(toolgate.url, toolgate.pid, plan.seconds), bare: b });
      }
    }
  } finally {
    await Promise.allSettled([toolgate.close(), bare.stop()]);
  }
  const ratio = median(runs.map((r) => r.toolgate.rate / r.bare.rate));
  const cpuRatio = median(runs.map((r) => r.bare.cpuPerResponse / r.toolgate.cpuPerResponse));
  const errors = runs.reduce((sum, r) => sum + r.toolgate.errors + r.bare.errors, 0);
  return {
    part: 7,
    title: 'toolgate vs bare graphql-yoga, `{ __typename }`',
    method:
      'bench/bare-yoga.ts is graphql-yoga on node:http with a one-field schema (`type Query { hello: String! }`) and nothing ' +
      'else. Both servers get the same POST `{ __typename }` from ' +
      `${plan.connections} autocannon connections for ${plan.seconds} s, alternating, ${plan.runs} pairs; the ratio is per pair, median of the pairs. ` +
      "toolgate's side includes its node:http handler (/healthz, body limit), its context (the authenticator) and its envelop plugins.",
    figures: [
      {
        name: 'toolgate',
        value: `${perSecond(medianOf(runs, (r) => r.toolgate.rate))}, p50 ${ms(medianOf(runs, (r) => r.toolgate.p50))}, server CPU ${ms(medianOf(runs, (r) => r.toolgate.cpuPerResponse))} per query`,
      },
      {
        name: 'bare yoga',
        value: `${perSecond(medianOf(runs, (r) => r.bare.rate))}, p50 ${ms(medianOf(runs, (r) => r.bare.p50))}, server CPU ${ms(medianOf(runs, (r) => r.bare.cpuPerResponse))} per query`,
      },
      {
        name: 'toolgate rate / bare yoga rate',
        value: `${fmt(ratio, 3)} (by server CPU per query: ${fmt(cpuRatio, 3)})`,
        target: '>= 0.8',
        pass: ratio >= 0.8,
      },
      { name: 'HTTP errors', value: String(errors), target: '0', pass: errors === 0 },
    ],
    runs: runs.map(
      (r, i) =>
        `pair ${i + 1}: toolgate ${perSecond(r.toolgate.rate)} (CPU ${ms(r.toolgate.cpuPerResponse)}), ` +
        `bare ${perSecond(r.bare.rate)} (CPU ${ms(r.bare.cpuPerResponse)}): ${fmt(r.toolgate.rate / r.bare.rate, 3)}`,
    ),
    notes: [],
  };
}
