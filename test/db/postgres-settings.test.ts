// What the PostgreSQL store makes sure of on every connection, whatever the server, the database or the URL say:
// commits durable when they return (the tool-start journal), and a clock offset not skewed by a busy pool.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore, toIso, withDurableCommits } from '../../src/db/postgres/postgres-store.js';
import { freshPostgresDatabase, TEST_POSTGRES, type TestDatabase } from '../support/postgres.js';

let database: TestDatabase | undefined;
let store: PostgresStore | undefined;
afterEach(async () => {
  await store?.close();
  await database?.drop();
  store = database = undefined;
});

describe('the PostgreSQL store on every connection', () => {
  it('runs with synchronous_commit on though the database defaults to off and the URL sets it off among other options', async () => {
    database = await freshPostgresDatabase();
    const name = new URL(database.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
    await admin.end();
    const url = new URL(database.url);
    url.searchParams.set('options', '-c statement_timeout=30000 -c synchronous_commit=off');
    store = await PostgresStore.open(url.toString(), { poolSize: 3 });
    // Every connection of the pool, not just the first.
    const clients = await Promise.all([0, 1, 2].map(() => store!.pool.connect()));
    try {
      for (const client of clients) {
        const { rows } = await client.query<{ setting: string; timeout: string }>(
          "SELECT current_setting('synchronous_commit') AS setting, current_setting('statement_timeout') AS timeout",
        );
        expect(rows[0]).toEqual({ setting: 'on', timeout: '30s' });
      }
    } finally {
      for (const client of clients) client.release();
    }
    expect(await store.ping()).toBeNull();
  });

  it('asks for synchronous_commit in the startup options, after the ones the URL gives, with no query of its own', () => {
    expect(withDurableCommits('postgres://h:5432/db')).toEqual({
      connectionString: 'postgres://h:5432/db?options=-c+synchronous_commit%3Don',
    });
    const withOptions = withDurableCommits('postgres://u@h/db?sslmode=disable&options=-c%20synchronous_commit%3Doff');
    const url = new URL(withOptions.connectionString);
    expect(url.searchParams.get('sslmode')).toBe('disable');
    expect(url.searchParams.get('options')).toBe('-c synchronous_commit=off -c synchronous_commit=on'); // the last wins
    // A socket path is not a URL: the option goes in the pool's config, which pg sends when the string has none.
    expect(withDurableCommits('/var/run/postgresql test')).toEqual({
      connectionString: '/var/run/postgresql test',
      options: '-c synchronous_commit=on',
    });
  });

  it("measures the database clock's offset without the time spent waiting for a free connection", async () => {
    database = await freshPostgresDatabase();
    store = await PostgresStore.open(database.url, { poolSize: 1 });
    const busy = await store.pool.connect();
    const offset = store.clockOffsetMs();
    await new Promise((resolve) => setTimeout(resolve, 500));
    busy.release();
    // Same host, same clock: the offset is the measurement's own error, far below the 500 ms the pool made it wait.
    expect(Math.abs(await offset)).toBeLessThan(100);
  });
});

describe('times read from PostgreSQL', () => {
  it('are the ISO-8601 strings the domain writes, whatever the session time zone', async () => {
    const client = new pg.Client({ connectionString: TEST_POSTGRES });
    await client.connect();
    try {
      const written = [
        '2026-01-01T00:00:00.000Z',
        '2026-12-05T13:05:50.120Z',
        '2026-12-05T13:05:50.007Z',
        '0099-03-01T23:59:59.999Z',
      ];
      for (const zone of ['UTC', 'Europe/Berlin', 'America/St_Johns']) {
        await client.query(`SET TIME ZONE '${zone}'`);
        for (const time of written) {
          const { rows } = await client.query<{ text: string }>('SELECT $1::timestamptz(3)::text AS text', [time]);
          expect(toIso(rows[0]!.text)).toBe(time);
        }
      }
    } finally {
      await client.end();
    }
  });
});
