// PostgreSQL for tests: a fresh database per call on the machine's server (TOOLGATE_TEST_POSTGRES, default the local
// one with trust auth), dropped at the end of the test run. Tests that need PostgreSQL fail when it does not answer:
// `npm test`'s preflight (scripts/test-preflight.ts) says so before the suite starts.
//
// Creating, migrating and dropping a database costs far more than what a test then does with it (DROP DATABASE
// waits for a checkpoint), so: a database that only has to be migrated is copied from a template migrated once per
// run; the store spec's databases are emptied and reused; and the run's databases are dropped together after it.
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { packageRoot } from '../../src/package-root.js';

export const TEST_POSTGRES = process.env.TOOLGATE_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  /** The connection string of the new database. */
  url: string;
  /**
   * Done with it. In a test run (the global setup names it) the database is dropped at the run's end with the
   * others, several at once: a DROP waits for a checkpoint, and one at a time in a busy run they took over 30 s.
   */
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

function urlOf(name: string): string {
  const url = new URL(TEST_POSTGRES);
  url.pathname = `/${name}`;
  return url.toString();
}

function created(name: string): TestDatabase {
  return {
    url: urlOf(name),
    drop: async () => {
      if (RUN === 'norun') await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

const newName = () => `toolgate_t_${RUN}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** A new, empty database: for tests of the migrations themselves (an upgrade, the first start of a build). */
export async function freshPostgresDatabase(): Promise<TestDatabase> {
  const name = newName();
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  return created(name);
}

/** The migrations this checkout has, as a short digest: a template made by other migrations is never used. */
function migrationsDigest(): string {
  const folder = join(packageRoot(), 'drizzle', 'postgres');
  const hash = createHash('sha256');
  for (const file of readdirSync(folder)
    .filter((name) => name.endsWith('.sql'))
    .sort())
    hash.update(file).update(readFileSync(join(folder, file)));
  return hash.digest('hex').slice(0, 8);
}

/** The run's template, and how a copy of it is asked for on this server. */
interface Template {
  name: string;
  /**
   * From PostgreSQL 15 a copy is written to the WAL page by page unless it asks for the file copy of before: for a
   * small database under a busy run, much slower, and its DROP too.
   */
  copyClause: string;
}

let template: Promise<Template> | undefined;

/** This run's migrated template, made once: the test processes take turns under an advisory lock. */
function migratedTemplate(): Promise<Template> {
  template ??= admin(async (client) => {
    const name = `toolgate_t_${RUN}_tpl_${migrationsDigest()}`;
    const version = Number((await client.query('SHOW server_version_num')).rows[0].server_version_num);
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) {
        await client.query(`CREATE DATABASE ${name}`);
        await (await PostgresStore.open(urlOf(name))).close();
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
    return { name, copyClause: version >= 150000 ? ' STRATEGY FILE_COPY' : '' };
  });
  return template;
}

/** A copy of the run's template, by name. */
async function copyOfTemplate(): Promise<string> {
  const source = await migratedTemplate();
  const name = newName();
  await admin((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${source.name}${source.copyClause}`));
  return name;
}

/**
 * A new database with toolgate's schema and no rows, as a server leaves an empty one it has just migrated: a copy of
 * the run's template, dropped at the run's end.
 */
export async function migratedPostgresDatabase(): Promise<TestDatabase> {
  return created(await copyOfTemplate());
}

/** The store spec's databases this process has emptied and may hand out again. */
const spare: string[] = [];

/**
 * A migrated database with no rows, for a test that closes every connection to it before `release()`: then it is
 * emptied (every table of toolgate's) and handed to the next test of this process.
 */
export async function reusablePostgresDatabase(): Promise<{ url: string; release(): Promise<void> }> {
  const name = spare.pop() ?? (await copyOfTemplate());
  const url = urlOf(name);
  return { url, release: () => empty(url).then(() => void spare.push(name)) };
}

/**
 * Deletes every row of the public schema's tables (not drizzle's record of the migrations) and restarts the
 * sequences, as in a database just migrated. DELETE on a few rows costs a few ms where TRUNCATE, which makes new
 * files, costs a hundred; without the superuser's `session_replication_role` (to skip the foreign keys), TRUNCATE.
 */
async function empty(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = (
      await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")
    ).rows.map(({ name }) => `public."${name}"`);
    const sequences = (
      await client.query<{ name: string }>("SELECT sequencename AS name FROM pg_sequences WHERE schemaname = 'public'")
    ).rows.map(({ name }) => `'public."${name}"'`);
    // Scaffolding between tests: the commit need not wait for the WAL to reach the disk.
    await client.query('SET synchronous_commit = off');
    try {
      await client.query(
        `BEGIN; SET LOCAL session_replication_role = replica; ${tables.map((table) => `DELETE FROM ${table};`).join(' ')} ` +
          `${sequences.map((sequence) => `SELECT setval(${sequence}, 1, false);`).join(' ')} COMMIT;`,
      );
    } catch {
      await client.query('ROLLBACK');
      await client.query(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY CASCADE`);
    }
  } finally {
    await client.end();
  }
}

/** Drops every database freshPostgresDatabase created in test run `run`. */
export async function dropTestDatabases(run: string): Promise<void> {
  await admin(async (client) => {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `toolgate\\_t\\_${run}\\_%`,
    ]);
    // Several at once: each DROP waits for a checkpoint, and drops in flight together share one.
    const names = rows.map(({ datname }) => datname);
    const dropNext = async (): Promise<void> => {
      for (let name = names.pop(); name !== undefined; name = names.pop())
        await admin((other) => other.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    };
    await Promise.all(Array.from({ length: 8 }, dropNext));
  }).catch(() => {
    /* PostgreSQL not there: the tests that needed it have failed and said so */
  });
}
