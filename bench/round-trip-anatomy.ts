// Where the server's time goes in one HITL round trip (part 1 of `npm run bench`), for explaining its figure.
// Not a test, not part of `npm run bench`: `npm run bench:anatomy [round trips]`.
//
// The server (createServer: the built-in demo, FULL durability, a temp SQLite file) runs in this process and the
// round trips go through `yoga.fetch`, 10 at a time: the same GraphQL requests as part 1, without sockets, so
// that what is left is the server's own work. Two passes over the same load:
//   1. CPU time per round trip (process.cpuUsage), and the SQLite part of it measured around the calls: reads
//      outside a transaction (each takes and drops SQLite's WAL read lock), reads inside one, and the write
//      batches (src/db/sqlite/write-batch.ts: the writes' own statements, then BEGIN/SAVEPOINT/COMMIT and the WAL frames);
//   2. a V8 CPU profile (node:inspector) of the main thread, its samples summed by who the running code belongs to.
// For scale, the same passes for `{ __typename }` and for a turn that answers without a tool ("hello").
import '../src/node-env.js'; // first, as in src/cli.ts: the server runs as `npm start` runs it
import { mkdtempSync, rmSync } from 'node:fs';
import { Session, type Profiler } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WriteBatcher } from '../src/db/sqlite/write-batch.js';
import { createServer } from '../src/server.js';
import { RESOLVE, startTurnBody, TRIVIAL } from './lib/operations.js';

const CONCURRENCY = 10;
const roundTrips = Number(process.argv[2] ?? 3000);

// ---- SQLite timing: wrappers installed before the store prepares its statements --------------------------------

const sqliteTime = { reads: 0, readNs: 0n, txReads: 0, txReadNs: 0n, batches: 0, batchNs: 0n, writeWorkNs: 0n };
const resetSqliteTime = () =>
  Object.assign(sqliteTime, {
    reads: 0,
    readNs: 0n,
    txReads: 0,
    txReadNs: 0n,
    batches: 0,
    batchNs: 0n,
    writeWorkNs: 0n,
  });

type AnyFunction = (...args: unknown[]) => unknown;
const databaseProto = Database.prototype as unknown as {
  prepare: (this: Database.Database, source: string) => Database.Statement;
};
const prepare = databaseProto.prepare;
databaseProto.prepare = function (this: Database.Database, source: string) {
  const statement = prepare.call(this, source);
  if (!statement.reader) return statement;
  const db = this; // eslint-disable-line @typescript-eslint/no-this-alias -- the wrappers below have their own `this`
  for (const method of ['get', 'all', 'iterate'] as const) {
    const original = (statement as unknown as Record<string, AnyFunction>)[method]!;
    (statement as unknown as Record<string, AnyFunction>)[method] = function (this: unknown, ...args: unknown[]) {
      const inTransaction = db.inTransaction;
      const started = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        const took = process.hrtime.bigint() - started;
        if (inTransaction) {
          sqliteTime.txReads++;
          sqliteTime.txReadNs += took;
        } else {
          sqliteTime.reads++;
          sqliteTime.readNs += took;
        }
      }
    };
  }
  return statement;
};
const { run, flush } = WriteBatcher.prototype;
WriteBatcher.prototype.run = function <T>(this: WriteBatcher, work: () => T): Promise<T> {
  return run.call(this, () => {
    const started = process.hrtime.bigint();
    try {
      return work();
    } finally {
      sqliteTime.writeWorkNs += process.hrtime.bigint() - started;
    }
  }) as Promise<T>;
};
WriteBatcher.prototype.flush = function (this: WriteBatcher): void {
  const started = process.hrtime.bigint();
  try {
    flush.call(this);
  } finally {
    sqliteTime.batches++;
    sqliteTime.batchNs += process.hrtime.bigint() - started;
  }
};

// ---- the load ---------------------------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'toolgate-anatomy-'));
const server = await createServer({ database: join(dir, 'toolgate.db'), sweepIntervalSeconds: 0 });

async function post(body: unknown): Promise<string> {
  const response = await server.yoga.fetch('http://127.0.0.1/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.text();
}

const operations = {
  'round trip': async () => {
    const started = JSON.parse(await post(startTurnBody())) as {
      data?: { startTurn: { turn: { pendingElicitations: { id: string }[] } } };
    };
    const id = started.data?.startTurn.turn.pendingElicitations[0]?.id;
    if (!id) throw new Error(`startTurn did not pause: ${JSON.stringify(started)}`);
    const resolved = await post({ query: RESOLVE, variables: { input: { elicitationId: id, action: 'ACCEPT' } } });
    if (!resolved.includes('"status":"COMPLETED"')) throw new Error(`resolveElicitation did not complete: ${resolved}`);
  },
  'hello turn': async () => {
    const body = await post(startTurnBody('hello'));
    if (!body.includes('"status":"COMPLETED"')) throw new Error(`the turn did not complete: ${body}`);
  },
  '{ __typename }': async () => {
    await post({ query: TRIVIAL });
  },
};
type Operation = keyof typeof operations;

async function load(operation: Operation, count: number): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await operations[operation]();
    }),
  );
}

// ---- the profile, by owner of the code ----------------------------------------------------------------------

const OWNERS: [owner: string, test: (url: string, name: string) => boolean][] = [
  [
    'SQLite (better-sqlite3, drizzle, src/db)',
    (url) => /node_modules\/(better-sqlite3|drizzle-orm)\/|\/src\/db\//.test(url),
  ],
  [
    'GraphQL and HTTP (yoga, envelop, graphql, whatwg-node, pothos, src/graphql, src/http)',
    (url) =>
      /node_modules\/(graphql|graphql-yoga|@graphql-yoga|@envelop|@graphql-tools|@whatwg-node|@pothos|@escape\.tech|graphql-scalars|lru-cache)\/|\/src\/(graphql|http)\//.test(
        url,
      ),
  ],
  [
    'agent loop, model, tools, events (src/agent, src/models, src/tools, src/events)',
    (url) => /\/src\/(agent|models|tools|events)\//.test(url),
  ],
  ['garbage collector', (_url, name) => name === '(garbage collector)'],
];

/**
 * Each sample goes to the owner of the nearest frame on its stack that has one: native code and Node internals
 * count for the code that called them (a SQLite statement's native run for the store that ran it, a promise
 * reaction for the library that awaited), and what no owned code called is "other".
 */
function byOwner(profile: Profiler.Profile): Map<string, number> {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const ownerOf = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const { url, functionName } = nodes.get(at)!.callFrame;
      const owner = OWNERS.find(([, test]) => test(url, functionName));
      if (owner) return owner[0];
    }
    return 'other (Node internals, microtask and timer queues, this script)';
  };
  const totals = new Map<string, number>();
  profile.samples!.forEach((id, i) => {
    if (nodes.get(id)!.callFrame.functionName === '(idle)') return;
    const owner = ownerOf(id);
    totals.set(owner, (totals.get(owner) ?? 0) + (profile.timeDeltas![i] ?? 0) / 1000);
  });
  return totals;
}

// ---- run ----------------------------------------------------------------------------------------------------

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });

const ms = (ns: bigint, count: number) => Number(ns) / 1e6 / count;
const fixed = (value: number) => value.toFixed(3);

console.log(
  `round-trip anatomy: ${roundTrips} round trips through yoga.fetch, ${CONCURRENCY} at a time, in one process (no sockets)\n`,
);
try {
  for (const [operation, count] of [
    ['round trip', roundTrips],
    ['hello turn', roundTrips * 2],
    ['{ __typename }', roundTrips * 10],
  ] as [Operation, number][]) {
    await load(operation, Math.ceil(count / 5)); // warm-up: JIT, caches
    resetSqliteTime();
    const cpu = process.cpuUsage();
    await load(operation, count);
    const used = process.cpuUsage(cpu);
    const total = (used.user + used.system) / 1000 / count;
    const t = { ...sqliteTime };
    const sqlite = ms(t.readNs + t.txReadNs + t.batchNs, count);
    console.log(
      `${operation}: CPU ${fixed(total)} ms (user ${fixed(used.user / 1000 / count)}, system ${fixed(used.system / 1000 / count)})`,
    );
    if (t.batches > 0 || t.reads > 0) {
      console.log(
        `  SQLite, timed around the calls: ${fixed(sqlite)} ms (${Math.round((sqlite / total) * 100)} % of the CPU time)`,
      );
      console.log(
        `    ${(t.reads / count).toFixed(1)} reads outside a transaction: ${fixed(ms(t.readNs, count))} ms (${(Number(t.readNs) / 1e3 / Math.max(1, t.reads)).toFixed(1)} µs each)`,
      );
      console.log(
        `    ${(t.txReads / count).toFixed(1)} reads inside a write transaction: ${fixed(ms(t.txReadNs, count))} ms`,
      );
      console.log(
        `    ${(t.batches / count).toFixed(2)} write batches: ${fixed(ms(t.batchNs, count))} ms, of which the writes' own statements ` +
          `${fixed(ms(t.writeWorkNs - t.txReadNs, count))} ms and BEGIN/SAVEPOINT/COMMIT with the WAL frames ${fixed(ms(t.batchNs - t.writeWorkNs, count))} ms`,
      );
    }
    const profiled = Math.ceil(count / 2);
    await session.post('Profiler.start');
    await load(operation, profiled);
    const { profile } = await session.post('Profiler.stop');
    const owners = byOwner(profile);
    const busy = [...owners.values()].reduce((sum, value) => sum + value, 0);
    console.log(
      `  main thread busy ${fixed(busy / profiled)} ms (sampled, with the profiler's own cost), by owner of the running code:`,
    );
    for (const [owner, value] of [...owners].sort((a, b) => b[1] - a[1])) {
      console.log(
        `    ${fixed(value / profiled)} ms ${String(Math.round((value / busy) * 100)).padStart(3)} %  ${owner}`,
      );
    }
    console.log('');
  }
} finally {
  session.disconnect();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
