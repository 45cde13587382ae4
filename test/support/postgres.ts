// PostgreSQL for tests: a fresh database per call on the machine's server (TOOLGATE_TEST_POSTGRES, default the local
// one with trust auth), dropped again by `drop()`. Tests that need PostgreSQL fail when it does not answer:
// `.ci/run` says so before the suite starts.
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const TEST_POSTGRES = process.env.TOOLGATE_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  /** The connection string of the new database. */
  url: string;
  /** Its name, to copy it (`template`). */
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES });
  await client.connect().catch((error: unknown) => {
    throw new Error(
      `PostgreSQL for the tests (TOOLGATE_TEST_POSTGRES=${TEST_POSTGRES}) does not answer: ${(error as Error).message}`,
    );
  });
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * This test run's mark in database names (set by the global setup before the test processes start), so that the
 * teardown drops this run's databases and not those of another run on the same server.
 */
const RUN = /^[a-z0-9]{1,12}$/.test(process.env.TOOLGATE_TEST_RUN ?? '') ? process.env.TOOLGATE_TEST_RUN! : 'norun';

export function newTestRun(): string {
  return randomUUID().replaceAll('-', '').slice(0, 8);
}

/**
 * A new, empty database; with `template`, a copy of that one (which nobody may be connected to meanwhile): a migrated
 * database copied is ready at once, where migrating each anew costs about a hundred statements.
 */
export async function freshPostgresDatabase(options: { template?: string } = {}): Promise<TestDatabase> {
  const name = `toolgate_t_${RUN}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const template = options.template ? ` TEMPLATE ${options.template}` : '';
  await admin((client) => client.query(`CREATE DATABASE ${name}${template}`));
  const url = new URL(TEST_POSTGRES);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/** Drops every database freshPostgresDatabase created in test run `run`. */
export async function dropTestDatabases(run: string): Promise<void> {
  await admin(async (client) => {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `toolgate\\_t\\_${run}\\_%`,
    ]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  }).catch(() => {
    /* PostgreSQL not there: the tests that needed it have failed and said so */
  });
}
