// Counts the SQL a server child executes, for part 8 (bench/parts/round-trip-backends.ts). Installed inside the
// server child (bench/server.ts, with BENCH_COUNT_SQL=1) before createServer, and read over IPC (`sqlCounts`).
//
// - SQLite: every execution of a better-sqlite3 statement (run, get, all, iterate), wrapped on the Statement
//   prototype, so that the statements better-sqlite3 prepares for itself (the BEGIN / COMMIT / SAVEPOINT / RELEASE
//   of `db.transaction`) count too. Each is a call into the SQLite library in the server's process: no network.
// - PostgreSQL: every call of pg's `Client.prototype.query` (pg.Pool runs its queries on pg.Client, drizzle too).
//   pg sends one query at a time per connection and waits for its ReadyForQuery: one call is one statement and one
//   network round trip to the database (a named statement's first Parse travels in the same round trip).
// - Redis: every command ioredis sends (`Redis.prototype.sendCommand`): PUBLISH, and the SUBSCRIBE of new channels.
//
// Statements are counted by their first keyword; the demo tool's own SQL (demo_entities, with the BEGIN and COMMIT
// of its SQLite transaction) is counted apart, so that the store's statements can be read without it.
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';

export interface SqlCounts {
  /** SELECT (and WITH without a write). */
  reads: number;
  /** INSERT, UPDATE, DELETE (and WITH with one of them). */
  writes: number;
  /** BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE. */
  transactionControl: number;
  /** Anything else (SET LOCAL, PRAGMA, ...). */
  other: number;
  /** The demo tool's own statements (demo_entities), not in the four above. */
  demoTool: number;
  /** Of all the above, how many went to PostgreSQL (one network round trip each). */
  postgresQueries: number;
  /** PostgreSQL transactions that wrote: COMMITs, and writes outside BEGIN ... COMMIT (each its own transaction). */
  postgresCommits: number;
  /** Commands sent to Redis. */
  redisCommands: number;
  redisPublishes: number;
}

export const ZERO_COUNTS: SqlCounts = {
  reads: 0,
  writes: 0,
  transactionControl: 0,
  other: 0,
  demoTool: 0,
  postgresQueries: 0,
  postgresCommits: 0,
  redisCommands: 0,
  redisPublishes: 0,
};

type Kind = 'reads' | 'writes' | 'transactionControl' | 'other' | 'demoTool';

const counts: SqlCounts = { ...ZERO_COUNTS };
const kinds = new Map<string, Kind>();

function kindOf(sql: string): Kind {
  let kind = kinds.get(sql);
  if (kind) return kind;
  const text = sql.trim().toUpperCase();
  const first = /^[A-Z]+/.exec(text)?.[0] ?? '';
  if (/\bDEMO_ENTITIES\b/.test(text)) kind = 'demoTool';
  else if (first === 'SELECT' || first === 'VALUES')
    kind = 'reads'; // SELECT ... FOR UPDATE takes a lock, but is a read
  else if (first === 'INSERT' || first === 'UPDATE' || first === 'DELETE' || first === 'REPLACE') kind = 'writes';
  else if (first === 'WITH') kind = /\b(INSERT|UPDATE|DELETE)\b/.test(text) ? 'writes' : 'reads';
  else if (['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE'].includes(first)) kind = 'transactionControl';
  else kind = 'other';
  if (kinds.size < 10_000) kinds.set(sql, kind);
  return kind;
}

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

/** Installs the counters (once per process) and returns a function that reads them. */
export function installSqlCounters(): () => SqlCounts {
  if (installed) return read;
  installed = true;
  // SQLite. better-sqlite3 runs a transaction's statements synchronously, so a BEGIN followed directly by a
  // demo_entities statement is the demo tool's transaction, up to its COMMIT or ROLLBACK.
  const probe = new Database(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, AnyFunction>;
  probe.close();
  let afterBegin = false;
  let inDemoTransaction = false;
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statementProto[method]!;
    statementProto[method] = function (this: unknown, ...args: unknown[]) {
      const source = (this as { source: string }).source;
      let kind = kindOf(source);
      if (kind === 'transactionControl') {
        if (inDemoTransaction && /^\s*(COMMIT|ROLLBACK|END)\b/i.test(source)) {
          kind = 'demoTool';
          inDemoTransaction = false;
        }
        afterBegin = /^\s*BEGIN\b/i.test(source);
      } else {
        if (afterBegin && kind === 'demoTool') {
          counts.transactionControl--;
          counts.demoTool++;
          inDemoTransaction = true;
        }
        afterBegin = false;
      }
      counts[kind]++;
      return original.apply(this, args);
    };
  }

  // db.exec (a script of statements; the store does not use it per request): one count per call, by its first keyword.
  const databaseProto = Database.prototype as unknown as { exec: AnyFunction };
  const exec = databaseProto.exec;
  databaseProto.exec = function (this: unknown, ...args: unknown[]) {
    counts[kindOf(String(args[0]))]++;
    afterBegin = false;
    return exec.apply(this, args);
  };

  const clientProto = pg.Client.prototype as unknown as { query: AnyFunction };
  const query = clientProto.query;
  const inTransaction = new WeakSet<object>(); // clients between BEGIN and COMMIT / ROLLBACK
  clientProto.query = function (this: object, ...args: unknown[]) {
    const config = args[0];
    const text = typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '');
    const kind = kindOf(text);
    counts[kind]++;
    counts.postgresQueries++;
    if (kind === 'transactionControl') {
      if (/^\s*BEGIN\b/i.test(text)) inTransaction.add(this);
      else if (/^\s*(COMMIT|END|ROLLBACK)\b/i.test(text)) {
        if (!/^\s*ROLLBACK/i.test(text)) counts.postgresCommits++;
        inTransaction.delete(this);
      }
    } else if (!inTransaction.has(this) && (kind === 'writes' || (kind === 'demoTool' && !/^\s*SELECT/i.test(text)))) {
      counts.postgresCommits++;
    }
    return query.apply(this, args);
  } as AnyFunction;

  const redisProto = Redis.prototype as unknown as { sendCommand: AnyFunction };
  const sendCommand = redisProto.sendCommand;
  redisProto.sendCommand = function (this: unknown, ...args: unknown[]) {
    counts.redisCommands++;
    if ((args[0] as { name?: string } | undefined)?.name === 'publish') counts.redisPublishes++;
    return sendCommand.apply(this, args);
  };

  return read;
}

let installed = false;
const read = (): SqlCounts => ({ ...counts });

/** The SQL statements of a count (the demo tool's apart). */
export function storeStatements(c: SqlCounts): number {
  return c.reads + c.writes + c.transactionControl + c.other;
}

export function subtractCounts(after: SqlCounts, before: SqlCounts): SqlCounts {
  const result = { ...ZERO_COUNTS };
  for (const key of Object.keys(result) as (keyof SqlCounts)[]) result[key] = after[key] - before[key];
  return result;
}

export function addCounts(...all: SqlCounts[]): SqlCounts {
  const result = { ...ZERO_COUNTS };
  for (const c of all) for (const key of Object.keys(result) as (keyof SqlCounts)[]) result[key] += c[key];
  return result;
}

export function scaleCounts(c: SqlCounts, by: number): SqlCounts {
  const result = { ...ZERO_COUNTS };
  for (const key of Object.keys(result) as (keyof SqlCounts)[]) result[key] = c[key] / by;
  return result;
}
