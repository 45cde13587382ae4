// Child process of `npm run bench`: one toolgate server (createServer, the built-in demo config: scripted model,
// builtin demo tools, confirmation on) on 127.0.0.1, on BENCH_DB: an SQLite file, or a postgres:// URL (part 8).
// bench/run.ts drives it over HTTP and WebSocket from its own process; IPC only carries what the wire cannot tell.
// Part 8 only: BENCH_REDIS (and BENCH_REDIS_PREFIX) give the config a `pubsub` section (several instances on one
// PostgreSQL database), and BENCH_COUNT_SQL=1 counts the SQL it executes (bench/lib/sql-count.ts). Part 10 only:
// BENCH_CONFIG is a config (JSON, read as a config file is) in place of the demo's: a gateway on an upstream server.
import '../src/node-env.js'; // first, as in src/cli.ts: the server under test runs as `npm start` runs it
import { openSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { demoConfig } from '../src/config/demo.js';
import { parseConfig } from '../src/config/load.js';
import type { SqliteStore } from '../src/db/sqlite/sqlite-store.js';
import type { ElicitationRecord } from '../src/domain/records.js';
import { createLogger } from '../src/observability/logger.js';
import { createServer } from '../src/server.js';
import type { CallMessage, ReplyMessage } from './lib/processes.js';
import { installSqlCounters, type SqlCounts } from './lib/sql-count.js';
import { wallNow } from './lib/stats.js';

const database = process.env.BENCH_DB;
if (!database || !process.send) throw new Error('bench/server.ts is started by bench/run.ts (BENCH_DB, IPC)');
// Before createServer, so that nothing the server runs escapes them.
const sqlCounts: (() => SqlCounts) | null = process.env.BENCH_COUNT_SQL === '1' ? installSqlCounters() : null;
const redis = process.env.BENCH_REDIS;
const config = process.env.BENCH_CONFIG ? parseConfig(JSON.parse(process.env.BENCH_CONFIG), 'BENCH_CONFIG') : undefined;

// BENCH_SERVER_SYNCHRONOUS=NORMAL (set by startToolgate for one comparison only): the server's `synchronous: 'NORMAL'`
// option, under which responses and events do not wait for the WAL fsync (the tool start still does). Every other
// figure is the default, FULL.
const synchronous = process.env.BENCH_SERVER_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : undefined;
const server = await createServer({
  database,
  synchronous,
  // Part 4 subscribes 1,000 clients of one viewer: past the default cap on one user's subscriptions (500), an
  // operator's limit that is not what the part measures.
  limits: { maxSubscriptionsPerUser: 10_000 },
  ...(config && { config }),
  ...(redis && { config: { ...demoConfig, pubsub: { redis, prefix: process.env.BENCH_REDIS_PREFIX || undefined } } }),
  onError: (error) => console.error('bench server:', error),
  // BENCH_LOG=<file>: the log `npm start` writes (info, JSON lines), appended to that file as `npm start > file`
  // would; else warnings only, as createServer logs by default.
  ...(process.env.BENCH_LOG && {
    logger: createLogger({ level: 'info', destination: openSync(process.env.BENCH_LOG, 'a'), pretty: false }),
  }),
});

// When each elicitation was published (wall clock, comparable with the subscribers' process): push latency.
// Only while the push part runs (`stamp` on), so that the other parts measure the server without this map.
const MAX_STAMPS = 100_000;
const publishedAt = new Map<string, number>();
let stamping = false;
const pubsub = server.services.pubsub;
const publish = pubsub.publish.bind(pubsub);
pubsub.publish = ((...args: Parameters<typeof publish>) => {
  if (stamping && args[0] === 'elicitations' && publishedAt.size < MAX_STAMPS)
    publishedAt.set((args[2] as ElicitationRecord).id, wallNow());
  return publish(...args);
}) as typeof pubsub.publish;

/** The SQLite store, or null on PostgreSQL. */
const sqliteStore = 'sqlite' in server.services.store ? (server.services.store as SqliteStore) : null;
const sqliteOnly = (): SqliteStore => {
  if (!sqliteStore) throw new Error('not an SQLite server');
  return sqliteStore;
};
const commands: Record<string, (args: Record<string, unknown>) => unknown> = {
  clock: () => wallNow(),
  gc: () => {
    globalThis.gc?.();
    globalThis.gc?.();
    return process.memoryUsage();
  },
  /** Rows inserted, updated or deleted by the server's connection since it opened. */
  changes: () => (sqliteOnly().sqlite.prepare('SELECT total_changes() AS n').get() as { n: number }).n,
  /** Commits, writes and WAL fsyncs of the store so far (group commit); null on PostgreSQL. */
  writeStats: () => sqliteStore?.writeStats ?? null,
  /** SQL statements, PostgreSQL queries and Redis commands so far (BENCH_COUNT_SQL=1; else null). */
  sqlCounts: () => sqlCounts?.() ?? null,
  stamp: (args) => {
    stamping = args.on === true;
    publishedAt.clear();
    return stamping;
  },
  /** BENCH_HEAP_SNAPSHOTS=<dir>: writes a heap snapshot there (for finding what a part leaves in memory). */
  heapSnapshot: (args) =>
    process.env.BENCH_HEAP_SNAPSHOTS
      ? writeHeapSnapshot(`${process.env.BENCH_HEAP_SNAPSHOTS}/${String(args.name)}.heapsnapshot`)
      : null,
  published: (args) => {
    const ids = args.ids as string[];
    const found = Object.fromEntries(ids.filter((id) => publishedAt.has(id)).map((id) => [id, publishedAt.get(id)!]));
    for (const id of ids) publishedAt.delete(id);
    return found;
  },
};

process.on('message', (message: CallMessage) => {
  if (message.type !== 'call') return;
  const reply = (fields: Omit<ReplyMessage, 'type' | 'id'>) =>
    process.send!({ type: 'reply', id: message.id, ...fields } satisfies ReplyMessage);
  try {
    const command = commands[message.command];
    if (!command) throw new Error(`unknown command ${message.command}`);
    reply({ result: command(message.args) });
  } catch (error) {
    reply({ error: error instanceof Error ? error.message : String(error) });
  }
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 10_000).unref();
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('disconnect', stop); // the bench died: do not outlive it

const url = await server.listen(0, '127.0.0.1');
process.send({ type: 'ready', url });
