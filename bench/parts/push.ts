// 4. Subscription push: from the server publishing a new confirmation request to each graphql-ws subscriber
// receiving it, for 1 and 1,000 subscribers (each its own WebSocket, in this process).
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { gql } from '../lib/load.js';
import { ELICITATION_REQUESTED, START_TURN, startTurnBody, type StartTurnData } from '../lib/operations.js';
import type { Plan } from '../lib/plan.js';
import type { ServerChild } from '../lib/processes.js';
import { fmt, ms, type PartResult } from '../lib/report.js';
import { median, medianOf, percentile, wallNow } from '../lib/stats.js';
import { startToolgate } from '../lib/toolgate.js';

const DELIVERY_TIMEOUT_MS = 15_000;

interface PushRun {
  subscribers: number;
  events: number;
  deliveries: number;
  missed: number;
  p50: number;
  p99: number;
  max: number;
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
    if (waiter && times.length >= waiter.count) { this.#waiters.delete(id); waiter.resolve(); }
  }

  /** Resolves when `count` subscribers received `id`, or after the timeout (then fewer did). */
  async waitFor(id: string, count: number, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<number[]> {
    if ((this.#received.get(id)?.length ?? 0) < count) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.set(id, { count, resolve });
        timer = setTimeout(() => { this.#waiters.delete(id); resolve(); }, timeoutMs);
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
    if ((back - sent) / 2 < best.uncertainty) best = { offset: theirs - (sent + back) / 2, uncertainty: (back - sent) / 2 };
  }
  return best;
}

async function connectSubscribers(url: string, count: number, inbox: Inbox): Promise<{ clients: Client[]; failures: string[] }> {
  const wsUrl = url.replace(/^http/, 'ws');
  const clients: Client[] = [];
  const failures: string[] = [];
  for (let i = 0; i < count; i++) {
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    client.subscribe<{ elicitationRequested: { id: string } }>({ query: ELICITATION_REQUESTED }, {
      next: (result) => {
        const at = wallNow();
        const id = result.data?.elicitationRequested.id;
        if (id) inbox.record(id, at);
      },
      error: (error) => { if (failures.length < 5) failures.push(error instanceof Error ? error.message : JSON.stringify(error)); },
      complete: () => {},
    });
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

async function runPush(server: ServerChild, subscribers: number, events: number, runs: number): Promise<{ runs: PushRun[]; failures: string[]; offset: { offset: number; uncertainty: number } }> {
  const inbox = new Inbox();
  await server.call('stamp', { on: true });
  const { clients, failures } = await connectSubscribers(server.url, subscribers, inbox);
  const results: PushRun[] = [];
  let offset = { offset: 0, uncertainty: Infinity };
  try {
    // Warm-up event: when every subscriber has it, every subscription is live on the server.
    const warm = await publishOne(server.url);
    const arrived = await inbox.waitFor(warm, subscribers, 60_000);
    if (arrived.length < subscribers) throw new Error(`only ${arrived.length} of ${subscribers} subscribers received the first event${failures.length ? `: ${failures.join('; ')}` : ''}`);
    offset = await clockOffset(server);
    for (let run = 0; run < runs; run++) {
      const latencies: number[] = [];
      let missed = 0;
      for (let e = 0; e < events; e++) {
        const id = await publishOne(server.url);
        const times = await inbox.waitFor(id, subscribers);
        missed += subscribers - times.length;
        const published = (await server.call<Record<string, number>>('published', { ids: [id] }))[id];
        if (published === undefined) throw new Error(`the server did not record publishing ${id}`);
        // The server's clock is ours plus `offset`.
        for (const at of times) latencies.push(at - (published - offset.offset));
        // Let the server and the clients settle between events (the next one measures a quiet start again).
        await new Promise((resolve) => setTimeout(resolve, subscribers > 100 ? 100 : 5));
      }
      results.push({
        subscribers, events, deliveries: latencies.length, missed,
        p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100),
      });
    }
  } finally {
    await Promise.allSettled(clients.map((client) => client.dispose()));
    await server.call('stamp', { on: false });
  }
  return { runs: results, failures, offset };
}

export async function benchPush(plan: Plan): Promise<PartResult> {
  const server = await startToolgate();
  const byCount = new Map<number, PushRun[]>();
  const notes: string[] = [];
  try {
    for (const subscribers of plan.subscriberCounts) {
      const { runs, failures, offset } = await runPush(server, subscribers, plan.pushEvents(subscribers), plan.runs);
      byCount.set(subscribers, runs);
      notes.push(`${subscribers} subscriber(s): clock offset server - bench ${fmt(offset.offset, 3)} ms (± ${fmt(offset.uncertainty, 3)} ms)`
        + (failures.length ? `; subscription errors: ${failures.join('; ')}` : ''));
    }
  } finally {
    await server.close();
  }
  const targets: Record<number, number> = { 1: 2, 1000: 20 };
  return {
    part: 4,
    title: 'Subscription push latency (graphql-ws)',
    method: 'N graphql-ws clients (`createClient`, one WebSocket each, in the bench process) subscribe to `elicitationRequested` as the '
      + 'viewer; then, one at a time, a `startTurn` over HTTP pauses and the server publishes its elicitation. Latency is each '
      + 'subscriber\'s receive time (in its `next` callback) minus the moment the server called `publish` (bench/server.ts wraps the '
      + 'server\'s pubsub to stamp it), both `performance.timeOrigin + performance.now()`, corrected by the clock offset between the '
      + 'two processes measured over IPC. It includes the subscription\'s GraphQL execution per subscriber, the WebSocket write, and '
      + `the client's parsing. p50/p99 are over all deliveries of a run (${plan.subscriberCounts.map((n) => `${plan.pushEvents(n)} events × ${n}`).join(', ')}); `
      + `the figure is the median of ${plan.runs} runs.`,
    figures: [...byCount].flatMap(([subscribers, runs]) => {
      const p50 = medianOf(runs, (r) => r.p50);
      const target = targets[subscribers];
      const missed = runs.reduce((sum, r) => sum + r.missed, 0);
      return [{
        name: `push to ${subscribers.toLocaleString('en-US')} subscriber${subscribers === 1 ? '' : 's'}`,
        value: `p50 ${ms(p50)}, p99 ${ms(medianOf(runs, (r) => r.p99))} (last delivery ${ms(median(runs.map((r) => r.max)))})`
          + (missed ? `, ${missed} deliveries missed` : ''),
        ...(target !== undefined ? { target: `p50 <= ${target} ms`, pass: p50 <= target && missed === 0 } : {}),
      }];
    }),
    runs: [...byCount.values()].flat().map((r) => `${r.subscribers} subscribers, ${r.events} events: p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, `
      + `max ${ms(r.max)}, ${r.deliveries} deliveries, ${r.missed} missed`),
    notes,
  };
}
