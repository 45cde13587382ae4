// Publish → receive latency of subscriptions over graphql-ws on loopback, for 1 and 100 subscribers (one
// WebSocket each). Not a test: `npx tsx bench/live-latency.ts [rounds]`.
//
// The server (createServer: the built-in demo, a temp SQLite file) runs in this process; the subscribers run in a
// child process, so that client work does not sit on the server's event loop. Each round publishes one turn
// record with `pubsub.publish('turn', …)` (what the runner does on every change) carrying the publish time in its
// `text`; each subscriber computes receive time − publish time on the system-wide monotonic clock
// (process.hrtime, CLOCK_MONOTONIC on Linux). The next round starts when every subscriber has the event.
//
// Two selections: `{ id status text }` (fields of the published record: no database read) and the same plus
// `messages` and `pendingElicitations` (two SQLite reads per subscriber per event, as a live UI would ask).
import { fork } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELECTIONS = {
  'record fields only': 'id status text',
  'with messages + pendingElicitations (DB reads)':
    'id status text messages { id role text } pendingElicitations { id message }',
} as const;

type ToChild =
  { type: 'subscribe'; url: string; turnId: string; subscribers: number; selection: string } | { type: 'stop' };
type FromChild = { type: 'ready' } | { type: 'round'; latenciesMs: number[] };

const nowNs = () => process.hrtime.bigint();

if (process.argv.includes('--subscribers')) await subscriberProcess();
else await main();

/** A server to measure: where clients subscribe, and how to publish one turn record carrying `text`. */
interface Target {
  name: string;
  url: string;
  turnId: string;
  publish(text: string): void;
  close(): Promise<void>;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 300);
  const warmup = 30;
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-live-bench-'));
  const targets = [await bareGraphqlWs(), await toolgate(join(dir, 'bench.db'))];

  console.log(
    `subscription latency over graphql-ws on loopback; ${cpus()[0]?.model ?? 'unknown CPU'} x${cpus().length}, node ${process.version}, ${new Date().toISOString()}`,
  );
  console.log(
    `from the publish call to the subscriber's 'next' callback; ${rounds} rounds after ${warmup} warm-up rounds; ms. ` +
      'Server CPU: user+system time of the server process per event.\n',
  );
  console.log(
    '| server | selection | subscribers | p50 per delivery | p99 per delivery | p50 until the last subscriber has it | server CPU per event |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  // LIVE_BENCH_SUBSCRIBERS=100 LIVE_BENCH_SELECTIONS=1: fewer cases (for a profile).
  const counts = process.env.LIVE_BENCH_SUBSCRIBERS ? [Number(process.env.LIVE_BENCH_SUBSCRIBERS)] : [1, 100];
  for (const target of targets) {
    const selections = target.name.startsWith('bare')
      ? Object.entries(SELECTIONS).slice(0, 1)
      : Object.entries(SELECTIONS).slice(0, Number(process.env.LIVE_BENCH_SELECTIONS ?? 2));
    for (const [name, selection] of selections) {
      for (const subscribers of counts) {
        const row = await measure(target, selection, subscribers, warmup, rounds);
        const f = (ms: number) => ms.toFixed(3);
        console.log(
          `| ${target.name} | ${name} | ${subscribers} | ${f(row.p50)} | ${f(row.p99)} | ${f(row.lastP50)} | ${f(row.cpuMs)} |`,
        );
      }
    }
    await target.close();
  }
  rmSync(dir, { recursive: true, force: true });
}

async function measure(target: Target, selection: string, subscribers: number, warmup: number, rounds: number) {
  const child = fork(fileURLToPath(import.meta.url), ['--subscribers'], { execArgv: ['--import', 'tsx'] });
  const messages: FromChild[] = [];
  let wake: (() => void) | null = null;
  child.on('message', (message: FromChild) => {
    messages.push(message);
    wake?.();
  });
  const nextMessage = async (): Promise<FromChild> => {
    while (messages.length === 0)
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    return messages.shift()!;
  };
  child.send({ type: 'subscribe', url: target.url, turnId: target.turnId, subscribers, selection } satisfies ToChild);
  await nextMessage(); // ready: every subscriber has its first event
  const perDelivery: number[] = [];
  const untilLast: number[] = [];
  let cpuMicros = 0;
  for (let round = 0; round < warmup + rounds; round++) {
    const cpu = process.cpuUsage();
    target.publish(String(nowNs()));
    const result = (await nextMessage()) as Extract<FromChild, { type: 'round' }>;
    const used = process.cpuUsage(cpu);
    if (round >= warmup) {
      cpuMicros += used.user + used.system;
      perDelivery.push(...result.latenciesMs);
      untilLast.push(Math.max(...result.latenciesMs));
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  child.send({ type: 'stop' } satisfies ToChild);
  await new Promise((resolve) => child.once('exit', resolve));
  return {
    p50: percentile(perDelivery, 50),
    p99: percentile(perDelivery, 99),
    lastP50: percentile(untilLast, 50),
    cpuMs: cpuMicros / rounds / 1000,
  };
}

/** toolgate as it runs: createServer, a paused demo turn, its record published as the runner does. */
async function toolgate(database: string): Promise<Target> {
  const { createServer } = await import('../src/server.js');
  const server = await createServer({ database, sweepIntervalSeconds: 0, onError: (e) => console.error(e) });
  const url = await server.listen(0, '127.0.0.1');
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation { startTurn(input: {agentId: "demo", message: "delete entities 1"}) { turn { id status } } }',
    }),
  });
  const paused = ((await response.json()) as { data: { startTurn: { turn: { id: string } } } }).data.startTurn.turn;
  const record = (await server.services.store.loadTurn(paused.id))!;
  return {
    name: 'toolgate',
    url,
    turnId: paused.id,
    publish: (text) => server.services.pubsub.publish('turn', record.id, { ...record, text }),
    close: () => server.close(),
  };
}

/**
 * The limit to compare with, in the same run: graphql-ws's useServer with graphql-js's own execute/subscribe, a
 * one-type schema, Yoga's createPubSub; no Yoga, no envelop, no Pothos, no database.
 */
async function bareGraphqlWs(): Promise<Target> {
  const { createServer } = await import('node:http');
  const { GraphQLID, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } = await import('graphql');
  const { useServer } = await import('graphql-ws/use/ws');
  const { WebSocketServer } = await import('ws');
  const { createPubSub } = await import('graphql-yoga');
  const eventTarget = new EventTarget();
  setMaxListeners(0, eventTarget);
  const pubsub = createPubSub<{ turn: [string, { id: string; status: string; text: string }] }>({
    eventTarget: eventTarget as never,
  });
  const Turn = new GraphQLObjectType({
    name: 'Turn',
    fields: {
      id: { type: new GraphQLNonNull(GraphQLID) },
      status: { type: GraphQLString },
      text: { type: GraphQLString },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { hello: { type: GraphQLString, resolve: () => 'hi' } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        turnUpdated: {
          type: new GraphQLNonNull(Turn),
          args: { turnId: { type: new GraphQLNonNull(GraphQLID) } },
          subscribe: async function* (_root: unknown, args: { turnId: string }) {
            yield { id: args.turnId, status: 'PAUSED', text: 'first' };
            yield* pubsub.subscribe('turn', args.turnId);
          },
          resolve: (turn: unknown) => turn,
        },
      },
    }),
  });
  const httpServer = createServer((_req, res) => res.writeHead(404).end());
  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql' });
  const disposable = useServer({ schema }, wsServer);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const port = (httpServer.address() as { port: number }).port;
  return {
    name: 'bare graphql-ws',
    url: `http://127.0.0.1:${port}/graphql`,
    turnId: 'trn_bare',
    publish: (text) => pubsub.publish('turn', 'trn_bare', { id: 'trn_bare', status: 'PAUSED', text }),
    close: async () => {
      await disposable.dispose();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}

async function subscriberProcess(): Promise<void> {
  const { createClient } = await import('graphql-ws');
  const { default: WebSocket } = await import('ws');
  const send = (message: FromChild) => process.send!(message);
  const clients: { dispose(): void | Promise<void> }[] = [];
  process.on('message', async (message: ToChild) => {
    if (message.type === 'stop') {
      await Promise.all(clients.map((client) => client.dispose()));
      process.exit(0);
    }
    let round: number[] = [];
    let ready = 0;
    for (let i = 0; i < message.subscribers; i++) {
      const client = createClient({
        url: message.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        retryAttempts: 0,
      });
      clients.push(client);
      let first = true;
      client.subscribe<{ turnUpdated: { text: string } }>(
        {
          query: `subscription($id: ID!) { turnUpdated(turnId: $id) { ${message.selection} } }`,
          variables: { id: message.turnId },
        },
        {
          next: (result) => {
            const received = nowNs();
            if (first) {
              first = false;
              if (++ready === message.subscribers) send({ type: 'ready' });
              return;
            }
            round.push(Number(received - BigInt(result.data!.turnUpdated.text)) / 1e6);
            if (round.length === message.subscribers) {
              send({ type: 'round', latenciesMs: round });
              round = [];
            }
          },
          error: (error) => {
            console.error('subscription error', error);
            process.exit(1);
          },
          complete: () => {},
        },
      );
    }
  });
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
