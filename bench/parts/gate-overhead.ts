// 5. The gate's overhead: the same tool loop (startTurn -> model calls demo:delete_entities -> it runs -> the
// model answers -> COMPLETED) with confirmation off, and on with a NEVER override for that tool (so the gate
// runs its whole matrix and still lets the call through). Same server, interleaved runs.
import type autocannon from 'autocannon';
import { gql, runLoad, type LoadResult } from '../lib/load.js';
import { startTurnBody, UPDATE_AGENT } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { fmt, ms, perSecond, type PartResult } from '../lib/report.js';
import { median, medianOf } from '../lib/stats.js';
import { startToolgate } from '../lib/toolgate.js';

type Mode = 'off' | 'on+NEVER';

interface AgentData {
  updateAgent: {
    agent: {
      requireToolConfirmation: boolean;
      tools: { toolId: string; confirmation: string; requiresConfirmation: boolean }[];
    } | null;
    userErrors: { code: string; message: string }[];
  };
}

async function setMode(url: string, mode: Mode): Promise<void> {
  const input =
    mode === 'off'
      ? { agentId: 'demo', requireToolConfirmation: false }
      : {
          agentId: 'demo',
          requireToolConfirmation: true,
          toolConfirmation: [{ toolId: 'demo:delete_entities', mode: 'NEVER' }],
        };
  const data = await gql<AgentData>(url, UPDATE_AGENT, { input });
  const tool = data.updateAgent.agent?.tools.find((t) => t.toolId === 'demo:delete_entities');
  if (
    data.updateAgent.userErrors.length ||
    !tool ||
    tool.requiresConfirmation ||
    data.updateAgent.agent!.requireToolConfirmation !== (mode !== 'off')
  ) {
    throw new Error(`updateAgent did not set ${mode}: ${JSON.stringify(data)}`);
  }
}

/** Turns that run the tool without pausing, back to back on every connection; a turn that does not complete is a failure. */
async function runLoop(
  url: string,
  plan: Plan,
  pid: number,
  seconds: number,
): Promise<LoadResult & { failures: number }> {
  let failures = 0;
  const requests: autocannon.Request[] = [
    {
      body: JSON.stringify(startTurnBody()),
      onResponse: (_status, body) => {
        if (!body.includes('"status":"COMPLETED"')) failures++;
      },
    },
  ];
  const result = await runLoad({
    url,
    connections: plan.connections,
    durationSeconds: seconds,
    requests,
    serverPid: pid,
  });
  return { ...result, failures };
}

type Run = LoadResult & { failures: number };
interface Pair {
  first: Run;
  second: Run;
}

/**
 * One run of each slot; which goes first follows ABBA over the pairs (A B, B A, B A, A B, ...), so that a drift of
 * the machine, or of the server warming up, weighs on both slots alike.
 */
async function measurePair(
  url: string,
  pid: number,
  plan: Plan,
  slots: [Mode, Mode],
  index: number,
  seconds: number,
): Promise<Pair> {
  const pair: Partial<Pair> = {};
  const firstGoesFirst = index % 4 === 0 || index % 4 === 3;
  for (const slot of firstGoesFirst ? (['first', 'second'] as const) : (['second', 'first'] as const)) {
    await setMode(url, slots[slot === 'first' ? 0 : 1]);
    pair[slot] = await runLoop(url, plan, pid, seconds);
  }
  return pair as Pair;
}

export async function benchGateOverhead(plan: Plan): Promise<PartResult> {
  const server = await startToolgate();
  // Many short runs and a longer warm-up: the figure is a few percent, while this machine has slow spells of a few
  // seconds (other jobs: CPU per turn up 30-40 % in both modes) and a server's first seconds under load are slower
  // (JIT, caches). With three 5 s pairs after 1 s of warm-up (off first in two) an A/A test read -10 %; with six 3 s
  // pairs a spell could fall on one mode's runs (+12.5 % once, control 1.1 %); twelve 1 s pairs read -3.7 to +2.4 %
  // in three runs, their controls -1.2 to +2.5 %.
  const pairs = plan.runs * 4;
  const seconds = Math.max(1, Math.round(plan.seconds / 5));
  const real: Pair[] = [];
  const control: Pair[] = [];
  try {
    for (const mode of ['off', 'on+NEVER'] as const) {
      await setMode(server.url, mode);
      await runLoop(server.url, plan, server.pid, plan.quick ? 1 : 3); // warm-up
    }
    // The pairs of the comparison and of the control (both slots off) alternate, so they see the same machine.
    for (let i = 0; i < pairs; i++) {
      real.push(await measurePair(server.url, server.pid, plan, ['off', 'on+NEVER'], i, seconds));
      control.push(await measurePair(server.url, server.pid, plan, ['off', 'off'], i, seconds));
    }
  } finally {
    await server.close();
  }
  const runs = real.map((pair) => ({ off: pair.first, on: pair.second }));
  // Overhead = how much longer a turn takes with the gate on: rate(off) / rate(on) - 1.
  const overhead = median(runs.map((r) => r.off.rate / r.on.rate - 1));
  const cpuOverhead = median(runs.map((r) => r.on.cpuPerResponse / r.off.cpuPerResponse - 1));
  const noise = median(control.map((pair) => pair.first.rate / pair.second.rate - 1));
  const cpuNoise = median(control.map((pair) => pair.second.cpuPerResponse / pair.first.cpuPerResponse - 1));
  const failures = [...real, ...control].reduce(
    (sum, pair) => sum + pair.first.failures + pair.second.failures + pair.first.errors + pair.second.errors,
    0,
  );
  const pct = (x: number) => `${fmt(x * 100, 1)} %`;
  return {
    part: 5,
    title: 'Gate overhead (confirmation off vs on with NEVER)',
    method:
      `\`startTurn\` ("${startTurnBody().variables.input.message}", new thread): the scripted model calls demo:delete_entities, it runs, ` +
      'the model answers, the turn completes, in one request. Confirmation is switched with `updateAgent` over HTTP: off ' +
      '(requireToolConfirmation false) or on with the override demo:delete_entities = NEVER. ' +
      `${plan.connections} connections for ${seconds} s per run, ${pairs} pairs (off, on) in ABBA order, after a warm-up in each mode. Overhead is ` +
      'rate(off) / rate(on) - 1 per pair, median of the pairs; the same from server CPU time per turn is shown beside it. ' +
      `A control (an A/A test) runs ${pairs} pairs the same way with confirmation off in both slots, each control pair right after a ` +
      'real one: what it reads is the noise of the figure on this machine.',
    figures: [
      {
        name: 'turns, confirmation off',
        value: `${perSecond(medianOf(runs, (r) => r.off.rate))}, p50 ${ms(medianOf(runs, (r) => r.off.p50))}, server CPU ${ms(medianOf(runs, (r) => r.off.cpuPerResponse))} per turn`,
      },
      {
        name: 'turns, confirmation on + NEVER',
        value: `${perSecond(medianOf(runs, (r) => r.on.rate))}, p50 ${ms(medianOf(runs, (r) => r.on.p50))}, server CPU ${ms(medianOf(runs, (r) => r.on.cpuPerResponse))} per turn`,
      },
      {
        name: 'gate overhead (throughput)',
        value: `${pct(overhead)} (by server CPU per turn: ${pct(cpuOverhead)})`,
        target: '<= 5 %',
        pass: overhead <= 0.05,
      },
      {
        name: 'control: the same procedure with confirmation off in both slots (noise of the figure)',
        value:
          `${pct(noise)} (pairs from ${pct(Math.min(...control.map((p) => p.first.rate / p.second.rate - 1)))} ` +
          `to ${pct(Math.max(...control.map((p) => p.first.rate / p.second.rate - 1)))}; by server CPU per turn: ${pct(cpuNoise)})`,
      },
      { name: 'turns that did not complete, HTTP errors', value: String(failures), target: '0', pass: failures === 0 },
    ],
    runs: [
      ...runs.map(
        (r, i) =>
          `pair ${i + 1}: off ${perSecond(r.off.rate)} (CPU ${ms(r.off.cpuPerResponse)}), on+NEVER ${perSecond(r.on.rate)} ` +
          `(CPU ${ms(r.on.cpuPerResponse)}): ${pct(r.off.rate / r.on.rate - 1)}`,
      ),
      ...control.map(
        (pair, i) =>
          `control pair ${i + 1}: off ${perSecond(pair.first.rate)} (CPU ${ms(pair.first.cpuPerResponse)}), ` +
          `off ${perSecond(pair.second.rate)} (CPU ${ms(pair.second.cpuPerResponse)}): ${pct(pair.first.rate / pair.second.rate - 1)}`,
      ),
    ],
    notes: [],
  };
}
