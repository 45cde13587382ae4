// PostgreSQL for part 8: a fresh database per server setup on the machine's server (BENCH_POSTGRES, default the
// local one with trust auth, as the tests use), dropped at the end; and the CPU time of the backends serving it.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { cpuTimeOf } from './processes.js';

export const BENCH_POSTGRES =
  process.env.BENCH_POSTGRES ?? process.env.TOOLGATE_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  /** The connection string of the new database. */
  url: string;
  name: string;
  /** CPU milliseconds used so far by each backend process now serving this database (from /proc), by pid. */
  backendCpu(): Promise<Map<number, number>>;
  /** Drops the database (its connections are cut: WITH (FORCE)). */
  drop(): Promise<void>;
}

/** An admin connection to BENCH_POSTGRES, for creating and dropping databases and listing their backends. */
export async function postgresAdmin(): Promise<{
  createDatabase(): Promise<BenchDatabase>;
  close(): Promise<void>;
}> {
  const admin = new pg.Client({ connectionString: BENCH_POSTGRES, connectionTimeoutMillis: 5_000 });
  await admin.connect().catch((error: unknown) => {
    throw new Error(`PostgreSQL (BENCH_POSTGRES=${BENCH_POSTGRES}) does not answer: ${(error as Error).message}`);
  });
  admin.on('error', () => {});
  const created = new Set<string>();
  const drop = async (name: string) => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    created.delete(name);
  };
  return {
    async createDatabase() {
      const name = `toolgate_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      await admin.query(`CREATE DATABASE ${name}`);
      created.add(name);
      const url = new URL(BENCH_POSTGRES);
      url.pathname = `/${name}`;
      return {
        url: url.toString(),
        name,
        backendCpu: () => readBackends(admin, name, cpuTimeOf),
        drop: () => drop(name),
      };
    },
    async close() {
      for (const name of [...created]) await drop(name).catch(() => {});
      await admin.end().catch(() => {});
    },
  };
}

/**
 * `read` (a /proc reading) of each backend process now serving database `name`, by pid, listed through `client`; a
 * backend gone meanwhile, or on another host, is not counted.
 */
export async function readBackends(
  client: pg.Client,
  name: string,
  read: (pid: number) => number,
): Promise<Map<number, number>> {
  const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]);
  const readings = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      readings.set(pid, read(pid));
    } catch {
      // gone meanwhile, or on another host: not counted
    }
  }
  return readings;
}

/**
 * CPU milliseconds the backends used between two `backendCpu()` readings: those at the end, less what each had at
 * the start (a backend started in between counts whole; one that ended in between is missed).
 */
export function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}
