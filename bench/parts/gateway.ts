// 10. The MCP gateway's hot path: one upstream stdio MCP server (bench/mcp/upstream.mjs) called by the SDK's client
// directly over stdio, through supergateway (a plain stdio-to-HTTP relay, stateful), and through toolgate's /mcp on
// SQLite and on PostgreSQL: a read-only call that runs at once, and a call that asks first, accepted by the client's
// elicitation handler or through the GraphQL API; at 1, 8 and 32 sessions, in interleaved windows.
import { availableParallelism } from 'node:os';
import pg from 'pg';
import { commitCost } from '../lib/fsync.js';
import { runWorkers } from '../lib/http-workers.js';
import { gql } from '../lib/load.js';
import {
  cpuOf,
  descendantsOf,
  httpSession,
  monotonicMs,
  startSupergateway,
  stdioSession,
  UPSTREAM_ARGS,
  UPSTREAM_COMMAND,
  type Relay,
  type Session,
} from '../lib/mcp.js';
import type { Plan } from '../lib/plan.js';
import { backendCpuBetween, BENCH_POSTGRES, postgresAdmin, type BenchDatabase } from '../lib/postgres.js';
import { cpuTimeOf } from '../lib/processes.js';
import { fmt, ms, perSecond, type Figure, type PartResult } from '../lib/report.js';
import { median, percentile } from '../lib/stats.js';
import { startToolgate, type ToolgateUnderTest } from '../lib/toolgate.js';

const SESSION_COUNTS = [1, 8, 32];
/** Poll interval of the API answerer when it found nothing to answer. */
const ANSWERER_IDLE_MS = 2;

const GATEWAY_CONFIG = {
  models: {},
  toolSources: { up: { type: 'mcp', command: UPSTREAM_COMMAND, args: UPSTREAM_ARGS } },
  agents: [
    {
      id: 'gateway',
      name: 'Bench gateway',
      description: 'The bench upstream server behind /mcp: lookup runs at once, record asks.',
      tools: ['up:*'],
      requireToolConfirmation: true,
    },
  ],
};

const PENDING = `query Pending { pendingElicitations(first: 100) { edges { node { id toolCall { arguments } } } } }`;
const RESOLVE = `mutation Resolve($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { userErrors { code message } }
}`;

type Kind = 'direct' | 'supergateway' | 'ungated' | 'elicit' | 'api';

interface Setup {
  label: string;
  short: string;
  kind: Kind;
  /** toolgate's server (its kinds), or undefined. */
  toolgate?: ToolgateUnderTest;
  database?: BenchDatabase;
  relay?: Relay;
  sessions: Session[];
  /** When each gated call's answer left the bench (monotonic ms), by the call's key. */
  answeredAt: Map<string, number>;
}

interface Window {
  rate: number;
  p50: number;
  p99: number;
  calls: number;
  failures: number;
  firstFailure?: string;
  /** Per call, ms: the relay's process (toolgate's or supergateway's); 0 directly. */
  relayCpu: number;
  /** ...PostgreSQL's backends serving toolgate's database (NaN elsewhere). */
  databaseCpu: number;
  /** ...the upstream server processes (the relay's children, or the direct sessions'). */
  upstreamCpu: number;
  /** ...this process: the SDK clients (and the API's answerer), for judging whether the load generator kept up. */
  clientCpu: number;
  /** Gated calls: ms from the answer leaving the bench to the upstream tool's start (p50, p99). */
  decisionP50: number;
  decisionP99: number;
}

/** The CPU readings of a setup's processes. */
async function cpuSnapshot(setup: Setup) {
  const relayPid = setup.relay?.pid ?? setup.toolgate?.pid;
  const upstream = relayPid ? descendantsOf(relayPid) : setup.sessions.map((s) => s.pid!).filter(Boolean);
  return {
    relay: relayPid ? cpuTimeOf(relayPid) : 0,
    upstream: cpuOf(upstream),
    database: setup.database ? await setup.database.backendCpu() : null,
  };
}

function between(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, value] of after) sum += value - (before.get(pid) ?? 0);
  return sum;
}

let nextKey = 0;

async function runWindow(setup: Setup, seconds: number): Promise<Window> {
  const samples: number[] = [];
  const decisions: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const fail = (why: string) => {
    failures++;
    firstFailure ??= `${setup.short}: ${why.slice(0, 300)}`;
  };
  const gated = setup.kind === 'elicit' || setup.kind === 'api';
  const answerer = setup.kind === 'api' ? startAnswerer(setup) : null;
  const before = await cpuSnapshot(setup);
  const clientBefore = process.cpuUsage();
  const elapsed = await runWorkers(setup.sessions.length, seconds, async (worker) => {
    const key = `k${nextKey++}`;
    const t0 = performance.now();
    try {
      const result = await setup.sessions[worker]!.client.callTool(
        gated ? { name: 'record', arguments: { key, value: `v${key}` } } : { name: 'lookup', arguments: { key } },
      );
      const elapsedMs = performance.now() - t0;
      const text = (result.content as { type: string; text?: string }[])[0]?.text ?? '';
      if (result.isError || !text.includes(`"key":"${key}"`)) return fail(`call ${key}: ${JSON.stringify(result)}`);
      samples.push(elapsedMs);
      if (gated) {
        const answered = setup.answeredAt.get(key);
        setup.answeredAt.delete(key);
        const started = Number(JSON.parse(text).started) / 1e6;
        if (answered !== undefined) decisions.push(started - answered);
        else fail(`call ${key}: no answer time recorded`);
      }
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error));
    }
  });
  await answerer?.stop();
  const client = process.cpuUsage(clientBefore);
  const after = await cpuSnapshot(setup);
  const calls = samples.length;
  const per = (value: number) => value / Math.max(1, calls);
  return {
    rate: calls / elapsed,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    calls,
    failures,
    firstFailure,
    relayCpu: per(after.relay - before.relay),
    databaseCpu:
      before.database && after.database ? per(backendCpuBetween(before.database, after.database)) : Number.NaN,
    upstreamCpu: per(between(before.upstream, after.upstream)),
    clientCpu: per((client.user + client.system) / 1000),
    decisionP50: gated ? percentile(decisions, 50) : Number.NaN,
    decisionP99: gated ? percentile(decisions, 99) : Number.NaN,
  };
}

/**
 * The API's answerer, as an inbox or a reviewer's script would be: polls `pendingElicitations` and ACCEPTs each
 * request it finds with `resolveElicitation`, noting when each answer left.
 */
function startAnswerer(setup: Setup): { stop(): Promise<void> } {
  const url = setup.toolgate!.url;
  let running = true;
  const answered = new Set<string>();
  const loop = (async () => {
    while (running) {
      const data = await gql<{
        pendingElicitations: { edges: { node: { id: string; toolCall: { arguments: { key: string } } } }[] };
      }>(url, PENDING).catch(() => null);
      const fresh = (data?.pendingElicitations.edges ?? []).filter(({ node }) => !answered.has(node.id));
      if (fresh.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, ANSWERER_IDLE_MS));
        continue;
      }
      await Promise.all(
        fresh.map(async ({ node }) => {
          answered.add(node.id);
          setup.answeredAt.set(node.toolCall.arguments.key, monotonicMs());
          await gql(url, RESOLVE, { input: { elicitationId: node.id, action: 'ACCEPT' } }).catch(() => {});
        }),
      );
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

async function openSessions(setup: Setup, count: number): Promise<void> {
  const open = async (): Promise<Session> => {
    switch (setup.kind) {
      case 'direct':
        return stdioSession();
      case 'supergateway':
        return httpSession(setup.relay!.url);
      case 'elicit':
        return httpSession(`${new URL('/mcp', setup.toolgate!.url)}`, (params) => {
          const call = (params._meta as Record<string, { arguments?: { key?: string } }> | undefined)?.[
            'toolgate.dev/tool_call'
          ];
          if (call?.arguments?.key) setup.answeredAt.set(call.arguments.key, monotonicMs());
          return { action: 'accept' };
        });
      default:
        return httpSession(`${new URL('/mcp', setup.toolgate!.url)}`);
    }
  };
  // A few at a time: each direct or supergateway session starts a node process.
  for (let i = 0; i < count; i += 4) {
    setup.sessions.push(...(await Promise.all(Array.from({ length: Math.min(4, count - i) }, open))));
  }
}

async function closeSessions(setup: Setup): Promise<void> {
  await Promise.allSettled(setup.sessions.map((s) => s.close()));
  setup.sessions = [];
  setup.answeredAt.clear();
}

/** Milliseconds per durable commit of a one-row insert on PostgreSQL (autocommit, its synchronous_commit). */
async function postgresCommitCost(url: string, commits = 100): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE TABLE bench_commit_cost (id serial PRIMARY KEY, v text)');
    const samples: number[] = [];
    for (let i = 0; i < commits; i++) {
      const t0 = performance.now();
      await client.query('INSERT INTO bench_commit_cost (v) VALUES ($1)', ['x'.repeat(200)]);
      samples.push(performance.now() - t0);
    }
    await client.query('DROP TABLE bench_commit_cost');
    return median(samples);
  } finally {
    await client.end();
  }
}

interface Spread {
  median: number;
  min: number;
  max: number;
  values: number[];
}
const spreadOf = (values: number[]): Spread => {
  const finite = values.filter(Number.isFinite);
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), values };
};
const showSpread = (s: Spread, digits = 2) =>
  `${fmt(s.median, digits)} (rounds ${fmt(s.min, digits)}-${fmt(s.max, digits)})`;

export async function benchGateway(plan: Plan): Promise<PartResult> {
  // 24 windows per round (8 setups, 3 session counts): short ones, so that --quick stays under about two minutes.
  const seconds = plan.quick ? 0.5 : Math.min(plan.seconds, 3);
  const warmUpSeconds = plan.quick ? 0.3 : 1.5;
  const admin = await postgresAdmin();
  const setups: Setup[] = [];
  const servers: ToolgateUnderTest[] = [];
  let relay: Relay | undefined;
  /** results[level][round][setup] */
  const results: Window[][][] = [];
  let sqliteCommit: number;
  let postgresCommit: number;
  try {
    const database = await admin.createDatabase();
    const sqlite = await startToolgate(undefined, { config: GATEWAY_CONFIG });
    servers.push(sqlite);
    const postgres = await startToolgate(database.url, { config: GATEWAY_CONFIG });
    servers.push(postgres);
    relay = await startSupergateway();
    const setup = (label: string, short: string, kind: Kind, extra: Partial<Setup> = {}): Setup => ({
      label,
      short,
      kind,
      sessions: [],
      answeredAt: new Map(),
      ...extra,
    });
    setups.push(
      setup('directly over stdio', 'direct', 'direct'),
      setup('supergateway', 'supergateway', 'supergateway', { relay }),
      setup('toolgate on SQLite, read-only call (runs at once)', 'SQLite', 'ungated', { toolgate: sqlite }),
      setup('toolgate on SQLite, gated call accepted by elicitation', 'SQLite elicit', 'elicit', { toolgate: sqlite }),
      setup('toolgate on SQLite, gated call accepted through the API', 'SQLite API', 'api', { toolgate: sqlite }),
      setup('toolgate on PostgreSQL, read-only call (runs at once)', 'PostgreSQL', 'ungated', {
        toolgate: postgres,
        database,
      }),
      setup('toolgate on PostgreSQL, gated call accepted by elicitation', 'PostgreSQL elicit', 'elicit', {
        toolgate: postgres,
        database,
      }),
      setup('toolgate on PostgreSQL, gated call accepted through the API', 'PostgreSQL API', 'api', {
        toolgate: postgres,
        database,
      }),
    );

    for (const count of SESSION_COUNTS) {
      for (const s of setups) await openSessions(s, count);
      for (const s of setups) await runWindow(s, warmUpSeconds);
      const rounds: Window[][] = [];
      for (let r = 0; r < plan.runs; r++) {
        const round: Window[] = [];
        // Rotating order, so that no setup is always first or last in a round.
        for (let j = 0; j < setups.length; j++) {
          const s = (r + j) % setups.length;
          round[s] = await runWindow(setups[s]!, seconds);
        }
        rounds.push(round);
      }
      results.push(rounds);
      for (const s of setups) await closeSessions(s);
    }
    sqliteCommit = commitCost(sqlite.database).full;
    postgresCommit = await postgresCommitCost(database.url);
  } finally {
    await Promise.allSettled(setups.map(closeSessions));
    await Promise.allSettled([...servers.map((s) => s.close()), relay?.stop()]);
    await admin.close();
  }

  const figures: Figure[] = [];
  const runs: string[] = [];
  const notes: string[] = [];
  const SUPERGATEWAY = 1;
  const CORES = availableParallelism();
  const failures = results.flat(2).reduce((sum, w) => sum + w.failures, 0);
  const firstFailure = results.flat(2).find((w) => w.firstFailure)?.firstFailure;
  const perRound = (level: number, pick: (round: Window[]) => number) => spreadOf(results[level]!.map(pick));

  SESSION_COUNTS.forEach((count, level) => {
    setups.forEach((setup, s) => {
      const of = (pick: (w: Window) => number) => perRound(level, (round) => pick(round[s]!));
      const rate = of((w) => w.rate);
      const cpu =
        setup.kind === 'direct'
          ? `upstream ${ms(of((w) => w.upstreamCpu).median)}`
          : `${setup.toolgate ? 'toolgate' : 'supergateway'} ${ms(of((w) => w.relayCpu).median)}` +
            (setup.database ? ` + PostgreSQL ${ms(of((w) => w.databaseCpu).median)}` : '') +
            `, upstream ${ms(of((w) => w.upstreamCpu).median)}`;
      const client = `; the bench's clients ${ms(of((w) => w.clientCpu).median)}`;
      const gated = setup.kind === 'elicit' || setup.kind === 'api';
      const ratio =
        s === SUPERGATEWAY
          ? ''
          : `; / supergateway's rate ${showSpread(perRound(level, (round) => round[s]!.rate / round[SUPERGATEWAY]!.rate))}`;
      figures.push({
        name: `${count} session${count > 1 ? 's' : ''}, ${setup.label}`,
        value:
          `${perSecond(rate.median)} (rounds ${fmt(rate.min, 0)}-${fmt(rate.max, 0)}), p50 ${ms(of((w) => w.p50).median)}, ` +
          `p99 ${ms(of((w) => w.p99).median)}; CPU per call: ${cpu}${client}` +
          (gated
            ? `; answer to tool start p50 ${ms(of((w) => w.decisionP50).median)}, p99 ${ms(of((w) => w.decisionP99).median)}`
            : '') +
          ratio,
      });
    });
    results[level]!.forEach((round, r) =>
      runs.push(
        `${count} session${count > 1 ? 's' : ''}, round ${r + 1}: ` +
          round
            .map(
              (w, s) =>
                `${setups[s]!.short} ${perSecond(w.rate)} (p50 ${ms(w.p50)}, p99 ${ms(w.p99)}, ${w.calls} calls, ` +
                `${w.failures} failed, relay CPU ${ms(w.relayCpu)}${Number.isFinite(w.databaseCpu) ? ` + PostgreSQL ${ms(w.databaseCpu)}` : ''}, upstream ${ms(w.upstreamCpu)}, clients ${ms(w.clientCpu)})`,
            )
            .join('; '),
      ),
    );
  });

  // Targets, per store, each from the per-round ratios against supergateway in the same round.
  /** The server's CPU per call: the relay's process and, on PostgreSQL, the backends serving toolgate's database. */
  const serverCpu = (w: Window) => w.relayCpu + (Number.isFinite(w.databaseCpu) ? w.databaseCpu : 0);
  const stores = [
    { name: 'SQLite', ungated: 2, elicit: 3, commit: sqliteCommit },
    { name: 'PostgreSQL', ungated: 5, elicit: 6, commit: postgresCommit },
  ];
  for (const store of stores) {
    SESSION_COUNTS.forEach((count, level) => {
      const want = count === 1 ? 1 : 2;
      const ratio = perRound(level, (round) => round[store.ungated]!.rate / round[SUPERGATEWAY]!.rate);
      figures.push({
        name: `${store.name}: read-only call rate / supergateway's, ${count} session${count > 1 ? 's' : ''}`,
        value: showSpread(ratio),
        target: `≥ ${want}`,
        pass: ratio.median >= want,
      });
    });
    // What the rate target leaves the server: at twice supergateway's rate, this machine's cores over the calls made,
    // less what each call costs the bench's own clients and the upstream server on the same cores. An upper bound: it
    // gives every core to the bench, none to the machine's other processes.
    SESSION_COUNTS.forEach((count, level) => {
      if (count === 1) return;
      const budget = perRound(level, (round) => {
        const call = round[store.ungated]!;
        return (CORES * 1000) / (2 * round[SUPERGATEWAY]!.rate) - call.clientCpu - call.upstreamCpu;
      });
      const used = perRound(level, (round) => serverCpu(round[store.ungated]!));
      figures.push({
        name:
          `${store.name}: server CPU per read-only call that twice supergateway's rate leaves on ${CORES} cores, ` +
          `${count} sessions`,
        value: `${ms(budget.median)} (rounds ${ms(budget.min)} to ${ms(budget.max)}); toolgate's: ${ms(used.median)}`,
      });
    });
    SESSION_COUNTS.forEach((count, level) => {
      // Server CPU: toolgate's process and, on PostgreSQL, the backends serving its database; supergateway's process.
      // The upstream servers' CPU is apart (the same tool in both; supergateway runs one server per session).
      const ratio = perRound(level, (round) => serverCpu(round[store.ungated]!) / round[SUPERGATEWAY]!.relayCpu);
      figures.push({
        name: `${store.name}: server CPU per read-only call / supergateway's, ${count} session${count > 1 ? 's' : ''}`,
        value: showSpread(ratio),
        target: '≤ 1',
        pass: ratio.median <= 1,
      });
    });
    const level8 = SESSION_COUNTS.indexOf(8);
    const p99 = perRound(level8, (round) => round[store.ungated]!.p99 / round[SUPERGATEWAY]!.p99);
    figures.push({
      name: `${store.name}: read-only call p99 / supergateway's, 8 sessions`,
      value: showSpread(p99),
      target: '≤ 2',
      pass: p99.median <= 2,
    });
    const gated = perRound(0, (round) => round[store.elicit]!.p50 / (round[store.ungated]!.p50 + store.commit));
    figures.push({
      name: `${store.name}: gated round trip (elicitation) p50 / (read-only call p50 + one durable commit, ${ms(store.commit)}), 1 session`,
      value: showSpread(gated),
      target: '≤ 2',
      pass: gated.median <= 2,
    });
  }
  figures.push({ name: 'failed calls', value: String(failures), target: '0', pass: failures === 0 });
  if (firstFailure) notes.push(`First failure: ${firstFailure}`);
  notes.push(
    'Server CPU (the targets): the relay process, toolgate or supergateway, from /proc per completed call, plus on ' +
      "PostgreSQL the backends serving toolgate's database. The upstream servers' CPU is shown apart: toolgate " +
      'shares one upstream process among its sessions, supergateway (stateful) starts one per session, directly each ' +
      'session has its own.',
    "The gated call through the API includes the answerer's polling (pendingElicitations, then resolveElicitation; " +
      `${ANSWERER_IDLE_MS} ms between empty polls), and its queries count in toolgate's CPU per call.`,
    `What twice supergateway's rate leaves the server: ${CORES} cores' CPU time divided by twice supergateway's calls ` +
      "in the same round, less the CPU per call of the bench's clients and the upstream server measured in toolgate's " +
      'window: an upper bound, as if nothing else ran on the machine.',
    `Durable commit: a one-row insert, WAL with synchronous FULL next to toolgate's SQLite file (${ms(sqliteCommit)}), ` +
      `and autocommit on ${BENCH_POSTGRES.replace(/\/\/[^@/]*@/, '//')} (${ms(postgresCommit)}), the median of 200 and 100.`,
  );
  return {
    part: 10,
    title: 'The MCP gateway: toolgate /mcp vs supergateway vs direct stdio',
    method:
      "One upstream MCP server (bench/mcp/upstream.mjs, the SDK's McpServer over stdio: `lookup` is read-only, `record` " +
      "is not) called by the SDK's Client, each session its own client and connection: (a) directly over stdio, one " +
      'upstream process per session; (b) through supergateway 4.0.0 (`--outputTransport streamableHttp --stateful`, ' +
      "one upstream process per session) over Streamable HTTP; (c-h) through toolgate's /mcp (bench/server.ts with a " +
      'gateway config naming the upstream: one upstream process for all sessions) on SQLite and on PostgreSQL: ' +
      "`lookup`, which runs at once, and `record`, which asks first and is accepted by the client's elicitation handler, " +
      'or by a second client polling pendingElicitations and calling resolveElicitation. Every call has arguments ' +
      `of its own. At ${SESSION_COUNTS.join(', ')} sessions, each session one call in flight at a time, ${seconds} s ` +
      `windows of the eight setups in a rotating order, ${plan.runs} rounds after a ${warmUpSeconds} s warm-up each; ` +
      'figures are medians over rounds, ratios are taken per round against supergateway in the same round and shown ' +
      "with their spread (min-max). Answer to tool start: the upstream tool's start (its result carries it, " +
      'process.hrtime, the same monotonic clock in every process) minus when the answer left the bench process (the ' +
      'elicitation handler returned, or resolveElicitation was sent).',
    figures,
    runs,
    notes,
  };
}
