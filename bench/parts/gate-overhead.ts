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
    agent: { requireToolConfirmation: boolean; tools: { toolId: string; confirmation: string; requiresConfirmation: boolean }[] } | null;
    userErrors: { code: string; message: string }[];
  };
}

async function setMode(url: string, mode: Mode): Promise<void> {
  const input = mode === 'off'
    ? { agentId: 'demo', requireToolConfirmation: false }
    : { agentId: 'demo', requireToolConfirmation: true, toolConfirmation: [{ toolId: 'demo:delete_entities', mode: 'NEVER' }] };
  const data = await gql<AgentData>(url, UPDATE_AGENT, { input });
  const tool = data.updateAgent.agent?.tools.find((t) => t.toolId === 'demo:delete_entities');
  if (data.updateAgent.userErrors.length || !tool || tool.requiresConfirmation
    || data.updateAgent.agent!.requireToolConfirmation !== (mode !== 'off')) {
    throw new Error(`updateAgent did not set ${mode}: ${JSON.stringify(data)}`);
  }
}

/** Turns that run the tool without pausing, back to back on every connection; a turn that does not complete is a failure. */
async function runLoop(url: string, plan: Plan, pid: number, seconds: number): Promise<LoadResult & { failures: number }> {
  let failures = 0;
  const requests: autocannon.Request[] = [{
    body: JSON.stringify(startTurnBody()),
    onResponse: (_status, body) => { if (!body.includes('"status":"COMPLETED"')) failures++; },
  }];
  const result = await runLoad({ url, connections: plan.connections, durationSeconds: seconds, requests, serverPid: pid });
  return { ...result, failures };
}

export async function benchGateOverhead(plan: Plan): Promise<PartResult> {
  const server = await startToolgate();
  const runs: { off: LoadResult & { failures: number }; on: LoadResult & { failures: number } }[] = [];
  try {
    for (const mode of ['off', 'on+NEVER'] as const) {
      await setMode(server.url, mode);
      await runLoop(server.url, plan, server.pid, 1); // warm-up
    }
    for (let i = 0; i < plan.runs; i++) {
      // Alternate which goes first, so a drift of the machine during a pair does not favour one side.
      const order: Mode[] = i % 2 === 0 ? ['off', 'on+NEVER'] : ['on+NEVER', 'off'];
      const pair: Partial<Record<Mode, LoadResult & { failures: number }>> = {};
      for (const mode of order) {
        await setMode(server.url, mode);
        pair[mode] = await runLoop(server.url, plan, server.pid, plan.seconds);
      }
      runs.push({ off: pair.off!, on: pair['on+NEVER']! });
    }
  } finally {
    await server.close();
  }
  // Overhead = how much longer a turn takes with the gate on: rate(off) / rate(on) - 1.
  const overhead = median(runs.map((r) => r.off.rate / r.on.rate - 1));
  const cpuOverhead = median(runs.map((r) => r.on.cpuPerResponse / r.off.cpuPerResponse - 1));
  const failures = runs.reduce((sum, r) => sum + r.off.failures + r.on.failures + r.off.errors + r.on.errors, 0);
  const pct = (x: number) => `${fmt(x * 100, 1)} %`;
  return {
    part: 5,
    title: 'Gate overhead (confirmation off vs on with NEVER)',
    method: `\`startTurn\` ("${startTurnBody().variables.input.message}", new thread): the scripted model calls demo:delete_entities, it runs, `
      + 'the model answers, the turn completes, in one request. Confirmation is switched with `updateAgent` over HTTP: off '
      + '(requireToolConfirmation false) or on with the override demo:delete_entities = NEVER. '
      + `${plan.connections} connections for ${plan.seconds} s per mode, the two modes alternating, ${plan.runs} pairs. Overhead is `
      + 'rate(off) / rate(on) - 1 per pair, median of the pairs; the same from server CPU time per turn is shown beside it.',
    figures: [
      {
        name: 'turns, confirmation off',
        value: `${perSecond(medianOf(runs, (r) => r.off.rate))}, p50 ${ms(medianOf(runs, (r) => r.off.p50))}, server CPU ${ms(medianOf(runs, (r) => r.off.cpuPerResponse))} per turn`,
      },
      {
        name: 'turns, confirmation on + NEVER',
        value: `${perSecond(medianOf(runs, (r) => r.on.rate))}, p50 ${ms(medianOf(runs, (r) => r.on.p50))}, server CPU ${ms(medianOf(runs, (r) => r.on.cpuPerResponse))} per turn`,
      },
      { name: 'gate overhead (throughput)', value: `${pct(overhead)} (by server CPU per turn: ${pct(cpuOverhead)})`, target: '<= 5 %', pass: overhead <= 0.05 },
      { name: 'turns that did not complete, HTTP errors', value: String(failures), target: '0', pass: failures === 0 },
    ],
    runs: runs.map((r, i) => `pair ${i + 1}: off ${perSecond(r.off.rate)} (CPU ${ms(r.off.cpuPerResponse)}), on+NEVER ${perSecond(r.on.rate)} `
      + `(CPU ${ms(r.on.cpuPerResponse)}): ${pct(r.off.rate / r.on.rate - 1)}`),
    notes: [],
  };
}
