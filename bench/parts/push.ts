// 4. Subscription push: from the server publishing a new confirmation request to each graphql-ws subscriber
// receiving it, for 1 and 1,000 subscribers (each its own WebSocket, in this process).
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { gql } from '../lib/load.js';
import { ELICITATION_REQUESTED, START_TURN, startTurnBody, type StartTurnData } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import { cpuTimeOf, type ServerChild } from '../lib/processes.js';
import { fmt, ms, type PartResult } from '../lib/report.js';
import { median, medianOf, percentile, wallNow } from '../lib/stats.js';
import { startBareYoga, startToolgate, type ToolgateUnderTest } from '../lib/toolgate.js';

const DELIVERY_TIMEOUT_MS = 15_000;
/** V8's young generation at 64 MiB per semi-space instead of its default (16 MiB at most): fewer scavenges. */
const SEMI_SPACE = '--max-semi-space-size=64';

interface PushRun {
  subscribers: number;
  events: number;
  deliveries: number;
  missed: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU milliseconds per delivery: of the server, and of this process (the subscribers). */
  serverCpu: number;
  clientCpu: number;
}

/** Receive times of each elicitation id, and a way to wait until every subscriber has it. */
class Inbox {
  readonly #received = new Map<string, number[]>();
  readonly #waiters = new Map<string, { count: number; resolve(): void }>();

  record(id: string, at: number): void {
    const times = this.#received.get(id) ?? [];
    times.push(at);
    this.#received.set(id, times);
    const waiter = this.#waiters.get(id);
    if (waiter && times.length >= waiter.count) {
      this.#waiters.delete(id);
      waiter.resolve();
    }
  }

  /** Resolves when `count` subscribers received `id`, or after the timeout (then fewer did). */
  async waitFor(id: string, count: number, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<number[]> {
    if ((this.#received.get(id)?.length ?? 0) < count) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.set(id, { count, resolve });
        timer = setTimeout(() => {
          this.#waiters.delete(id);
          resolve();
        }, timeoutMs);
      });
      clearTimeout(timer);
    }
    const times = this.#received.get(id) ?? [];
    this.#received.delete(id);
    return times;
  }
}

/** The server's clock minus ours, from the IPC round trip with the least delay. */
async function clockOffset(server: ServerChild): Promise<{ offset: number; uncertainty: number }> {
  let best = { offset: 0, uncertainty: Infinity };
  for (let i = 0; i < 20; i++) {
    const sent = wallNow();
    const theirs = await server.call<number>('clock');
    const back = wallNow();
    if ((back - sent) / 2 < best.uncertainty)
      best = { offset: theirs - (sent + back) / 2, uncertainty: (back - sent) / 2 };
  }
  return best;
}

/** What is measured: a server, the subscription its clients start, and how one event is published there. */
interface PushTarget {
  server: ServerChild;
  query: string;
  /** The event's id in a subscription result. */
  idOf(data: Record<string, { id: string }> | null | undefined): string | undefined;
  /** Publishes one event; its id and when the server published it (server clock). */
  publish(): Promise<{ id: string; publishedAt: number }>;
  /** Called before the first and after the last event. */
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
}

function toolgateTarget(server: ServerChild): PushTarget {
  return {
    server,
    query: ELICITATION_REQUESTED,
    idOf: (data) => data?.elicitationRequested?.id,
    async publish() {
      const id = await publishOne(server.url);
      const publishedAt = (await server.call<Record<string, number>>('published', { ids: [id] }))[id];
      if (publishedAt === undefined) throw new Error(`the server did not record publishing ${id}`);
      return { id, publishedAt };
    },
    setUp: async () => {
      await server.call('stamp', { on: true });
    },
    tearDown: async () => {
      await server.call('stamp', { on: false });
    },
  };
}

/** bench/bare-yoga.ts: the same kind of payload from Yoga's createPubSub through graphql-ws, published over IPC. */
function bareTarget(server: ServerChild): PushTarget {
  let n = 0;
  return {
    server,
    query: 'subscription { requested { id status message toolCall { name toolId arguments } } }',
    idOf: (data) => data?.requested?.id,
    async publish() {
      const id = `evt_${++n}`;
      return { id, publishedAt: await server.call<number>('publish', { id }) };
    },
    setUp: async () => {},
    tearDown: async () => {},
  };
}

async function connectSubscribers(
  target: PushTarget,
  count: number,
  inbox: Inbox,
): Promise<{ clients: Client[]; failures: string[] }> {
  const wsUrl = target.server.url.replace(/^http/, 'ws');
  const clients: Client[] = [];
  const failures: string[] = [];
  for (let i = 0; i < count; i++) {
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    client.subscribe<Record<string, { id: string }>>(
      { query: target.query },
      {
        next: (result) => {
          const at = wallNow();
          const id = target.idOf(result.data);
          if (id) inbox.record(id, at);
        },
        error: (error) => {
          if (failures.length < 5) failures.push(error instanceof Error ? error.message : JSON.stringify(error));
        },
        complete: () => {},
      },
    );
    clients.push(client);
    // Connect in batches, so the server is not hit by a thousand handshakes in one tick.
    if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { clients, failures };
}

/** Starts a turn that pauses: its elicitation is published to every subscriber of the viewer. */
async function publishOne(url: string): Promise<string> {
  const data = await gql<StartTurnData>(url, START_TURN, startTurnBody().variables);
  const id = data.startTurn.turn?.pendingElicitations[0]?.id;
  if (!id) throw new Error(`startTurn did not pause: ${JSON.stringify(data)}`);
  return id;
}

async function runPush(
  target: PushTarget,
  subscribers: number,
  events: number,
  runs: number,
): Promise<{ runs: PushRun[]; failures: string[]; offset: { offset: number; uncertainty: number } }> {
  const { server } = target;
  const inbox = new Inbox();
  await target.setUp();
  const { clients, failures } = await connectSubscribers(target, subscribers, inbox);
  const results: PushRun[] = [];
  let offset: { offset: number; uncertainty: number };
  try {
    // Warm-up events until one reaches every subscriber: then every subscription is live on the server (a client
    // cannot tell when its subscribe message has been handled; the protocol has no acknowledgement).
    let arrived = 0;
    for (const deadline = Date.now() + 60_000; arrived < subscribers && Date.now() < deadline;) {
      const warm = await target.publish();
      arrived = (await inbox.waitFor(warm.id, subscribers, 1_000)).length;
    }
    if (arrived < subscribers)
      throw new Error(
        `only ${arrived} of ${subscribers} subscribers received a warm-up event${failures.length ? `: ${failures.join('; ')}` : ''}`,
      );
    offset = await clockOffset(server);
    for (let run = 0; run < runs; run++) {
      const latencies: number[] = [];
      let missed = 0;
      const serverCpu = cpuTimeOf(server.pid);
      const clientCpu = process.cpuUsage();
      for (let e = 0; e < events; e++) {
        const { id, publishedAt } = await target.publish();
        const times = await inbox.waitFor(id, subscribers);
        missed += subscribers - times.length;
        // The server's clock is ours plus `offset`.
        for (const at of times) latencies.push(at - (publishedAt - offset.offset));
        // Let the server and the clients settle between events (the next one measures a quiet start again).
        await new Promise((resolve) => setTimeout(resolve, subscribers > 100 ? 100 : 5));
      }
      const client = process.cpuUsage(clientCpu);
      results.push({
        subscribers,
        events,
        deliveries: latencies.length,
        missed,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: percentile(latencies, 100),
        serverCpu: (cpuTimeOf(server.pid) - serverCpu) / latencies.length,
        clientCpu: (client.user + client.system) / 1000 / latencies.length,
      });
    }
  } finally {
    await Promise.allSettled(clients.map((client) => client.dispose()));
    await target.tearDown();
  }
  return { runs: results, failures, offset };
}

export async function benchPush(plan: Plan): Promise<PartResult> {
  const byCount = new Map<number, PushRun[]>();
  const notes: string[] = [];
  const most = Math.max(...plan.subscriberCounts);
  let comparison: PushRun[] = [];
  let bare: PushRun[] = [];
  // After toolgate's figures, for comparison only: the most subscribers on a toolgate whose V8 young generation is
  // larger, and on bare yoga + graphql-ws (the limit).
  const cases = [
    ...plan.subscriberCounts.map((n) => ({ subscribers: n, kind: 'toolgate' as const })),
    { subscribers: most, kind: 'semi-space' as const },
    { subscribers: most, kind: 'bare' as const },
  ];
  for (const { subscribers, kind } of cases) {
    // A fresh server each time, so that each count starts alike: the events of the previous count stay pending
    // (they are never answered). The subscription (no includePending) gets only new requests: each one published.
    const server =
      kind === 'bare'
        ? await startBareYoga()
        : await startToolgate(undefined, { nodeFlags: kind === 'semi-space' ? [SEMI_SPACE] : [] });
    try {
      const target = kind === 'bare' ? bareTarget(server) : toolgateTarget(server);
      const { runs, failures, offset } = await runPush(target, subscribers, plan.pushEvents(subscribers), plan.runs);
      if (kind === 'semi-space') comparison = runs;
      else if (kind === 'bare') bare = runs;
      else byCount.set(subscribers, runs);
      notes.push(
        `${subscribers} subscriber(s), ${kind}: clock offset server - bench ` +
          `${fmt(offset.offset, 3)} ms (± ${fmt(offset.uncertainty, 3)} ms)` +
          (failures.length ? `; subscription errors: ${failures.join('; ')}` : ''),
      );
    } finally {
      await ('close' in server ? (server as ToolgateUnderTest).close() : server.stop());
    }
  }
  const targets: Record<number, number> = { 1: 2, 1000: 20 };
  return {
    part: 4,
    title: 'Subscription push latency (graphql-ws)',
    method:
      'N graphql-ws clients (`createClient`, one WebSocket each, in the bench process) subscribe to `elicitationRequested` as the ' +
      'viewer; then, one at a time, a `startTurn` over HTTP pauses and the server publishes its elicitation. Latency is each ' +
      "subscriber's receive time (in its `next` callback) minus the moment the server called `publish` (bench/server.ts wraps the " +
      "server's pubsub to stamp it), both `performance.timeOrigin + performance.now()`, corrected by the clock offset between the " +
      "two processes measured over IPC. It includes the subscription's GraphQL execution per subscriber, the WebSocket write, and " +
      `the client's parsing. p50/p99 are over all deliveries of a run (${plan.subscriberCounts.map((n) => `${plan.pushEvents(n)} events × ${n}`).join(', ')}); ` +
      `the figure is the median of ${plan.runs} runs. For comparison, the same with bench/bare-yoga.ts (Yoga's createPubSub and ` +
      'graphql-ws, an event of the same shape published over IPC, so without the startTurn request beside it) and with toolgate ' +
      `started with ${SEMI_SPACE}.`,
    figures: [...byCount]
      .flatMap(([subscribers, runs]) => {
        const p50 = medianOf(runs, (r) => r.p50);
        const target = targets[subscribers];
        const missed = runs.reduce((sum, r) => sum + r.missed, 0);
        return [
          {
            name: `push to ${subscribers.toLocaleString('en-US')} subscriber${subscribers === 1 ? '' : 's'}`,
            value:
              `p50 ${ms(p50)}, p99 ${ms(medianOf(runs, (r) => r.p99))} (last delivery ${ms(median(runs.map((r) => r.max)))})` +
              (missed ? `, ${missed} deliveries missed` : ''),
            ...(target !== undefined ? { target: `p50 <= ${target} ms`, pass: p50 <= target && missed === 0 } : {}),
          },
        ];
      })
      .concat([
        {
          name: `for comparison: bare yoga + graphql-ws, ${most.toLocaleString('en-US')} subscribers (bench/bare-yoga.ts)`,
          value:
            `p50 ${ms(medianOf(bare, (r) => r.p50))}, p99 ${ms(medianOf(bare, (r) => r.p99))}, ` +
            `server CPU ${ms(medianOf(bare, (r) => r.serverCpu))} per delivery (toolgate: ${ms(medianOf(byCount.get(most) ?? [], (r) => r.serverCpu))}, ` +
            'which includes the startTurn that publishes)',
        },
        {
          name: `for comparison: toolgate, ${most.toLocaleString('en-US')} subscribers, server started with ${SEMI_SPACE}`,
          value:
            `p50 ${ms(medianOf(comparison, (r) => r.p50))}, p99 ${ms(medianOf(comparison, (r) => r.p99))}, ` +
            `server CPU ${ms(medianOf(comparison, (r) => r.serverCpu))} per delivery`,
        },
      ]),
    runs: [
      ...byCount.values(),
      comparison.map((r) => ({ ...r, subscribers: `${r.subscribers} (${SEMI_SPACE})` })),
      bare.map((r) => ({ ...r, subscribers: `bare yoga: ${r.subscribers}` })),
    ]
      .flat()
      .map(
        (r) =>
          `${r.subscribers} subscribers, ${r.events} events: p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, ` +
          `max ${ms(r.max)}, ${r.deliveries} deliveries, ${r.missed} missed; CPU per delivery: server ${ms(r.serverCpu)}, ` +
          `subscribers ${ms(r.clientCpu)} (the whole event, including its startTurn, counts)`,
      ),
    notes,
  };
}
