// A toolgate server under test: a child process on a fresh SQLite file in a temp directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, type ServerChild } from './processes.js';

export interface ToolgateUnderTest extends ServerChild {
  database: string;
  /** Stops the server and deletes its database. */
  close(): Promise<void>;
}

/**
 * Starts bench/server.ts on `database` (default: a new file in a new temp directory; a postgres:// URL is
 * PostgreSQL). `synchronous: 'NORMAL'` starts it with that option (responses do not wait for the WAL fsync) and
 * `nodeFlags` are given to node: both only for figures marked "for comparison" (what the fsync before each response,
 * or V8's default young generation, costs). Part 8: `redis` is the config's `pubsub` section, `countSql` counts the
 * server's SQL (IPC `sqlCounts`).
 */
export async function startToolgate(
  database?: string,
  options: {
    synchronous?: 'NORMAL';
    nodeFlags?: string[];
    redis?: { url: string; prefix: string };
    countSql?: boolean;
    /** Part 10: a config of its own in place of the demo's (JSON-serialisable, as in a config file). */
    config?: unknown;
  } = {},
): Promise<ToolgateUnderTest> {
  const dir = database ? null : mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const file = database ?? join(dir!, 'toolgate.db');
  const child = await startChild(
    'server.ts',
    {
      BENCH_DB: file,
      BENCH_SERVER_SYNCHRONOUS: options.synchronous ?? '',
      BENCH_REDIS: options.redis?.url ?? '',
      BENCH_REDIS_PREFIX: options.redis?.prefix ?? '',
      BENCH_COUNT_SQL: options.countSql ? '1' : '',
      BENCH_CONFIG: options.config === undefined ? '' : JSON.stringify(options.config),
    },
    options.nodeFlags,
  );
  return {
    ...child,
    database: file,
    async close() {
      await child.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startBareYoga(): Promise<ServerChild> {
  return startChild('bare-yoga.ts', {});
}

/** A temp directory for a database the bench seeds before a server opens it. */
export function benchDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
