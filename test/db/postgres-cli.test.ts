// The real entry point (src/cli.ts) choosing PostgreSQL: TOOLGATE_DB or the config's `database` section. An unreachable
// database is one line on stderr and exit 1; a reachable one is migrated and served, the demo working on it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/harness.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';
import { until } from '../support/wait.js';

let database: TestDatabase | undefined;
const temp = tempDir();
afterAll(() => temp.cleanup());
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

describe('the CLI on PostgreSQL', { timeout: 120_000 }, () => {
  it('does not start when TOOLGATE_DB names a PostgreSQL that cannot be reached: one line without the password, exit 1', async () => {
    const run = await runCli({ LOG_LEVEL: 'info', TOOLGATE_DB: 'postgres://toolgate:hunter2@127.0.0.1:5999/toolgate' })
      .done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'toolgate: TOOLGATE_DB: PostgreSQL at 127.0.0.1:5999/toolgate cannot be reached (connection refused)\n',
    );
    expect(run.stdout).toBe('');
  });

  it("names the config file's database.url when the database does not exist", async () => {
    const file = join(temp.dir, 'missing-db.json');
    writeFileSync(
      file,
      JSON.stringify({ ...demoConfig, database: { url: 'postgres://postgres@127.0.0.1:5432/toolgate_none' } }),
    );
    const run = await runCli({ LOG_LEVEL: 'info', TOOLGATE_CONFIG: file }).done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `toolgate: ${file}: database.url: PostgreSQL at 127.0.0.1:5432/toolgate_none cannot be reached (database "toolgate_none" does not exist)\n`,
    );
  });

  it('a config refused at start (an agent naming a tool no source lists) leaves the database as it was: no tables', async () => {
    database = await freshPostgresDatabase();
    const file = join(temp.dir, 'refused.json');
    const agents = [{ ...demoConfig.agents[0]!, tools: ['demo:no_such_tool'] }];
    writeFileSync(file, JSON.stringify({ ...demoConfig, agents, database: { url: database.url } }));
    const run = await runCli({ LOG_LEVEL: 'info', TOOLGATE_CONFIG: file }).done;
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^toolgate: .*agents\[0\]\.tools\[0\]: no tool source lists "demo:no_such_tool"/);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("serves the demo on the config's database: migrated at start, a pause stored there, SIGTERM ends it", async () => {
    database = await freshPostgresDatabase();
    const file = join(temp.dir, 'postgres.json');
    writeFileSync(file, JSON.stringify({ ...demoConfig, database: { url: database.url, poolSize: 3 } }));
    const { child, out, done } = runCli({ LOG_LEVEL: 'info', TOOLGATE_CONFIG: file });
    await until(() => out.stdout.includes('"serving ') || child.exitCode !== null, 'the CLI to listen', 60_000);
    const url = /"url":"([^"]+)"/.exec(out.stdout)![1]!;
    expect(out.stdout).toContain(`(database 127.0.0.1:5432/${new URL(database.url).pathname.slice(1)})`);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'mutation { startTurn(input: {agentId: "demo", message: "delete entities 1"}) { turn { id status } } }',
      }),
    });
    const { data } = (await response.json()) as { data: { startTurn: { turn: { id: string; status: string } } } };
    expect(data.startTurn.turn.status).toBe('PAUSED');
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT status FROM turns WHERE id = $1', [data.startTurn.turn.id]);
      expect(rows).toEqual([{ status: 'PAUSED' }]);
      expect((await client.query('SELECT count(*)::int AS n FROM demo_entities')).rows[0].n).toBe(5);
    } finally {
      await client.end();
    }
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });
});
