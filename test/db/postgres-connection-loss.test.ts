// PostgreSQL going away under a running server: the connections the pool holds are killed (as a database restart or
// a failover does). Nothing crashes, the next requests get new connections, a paused turn is answered and its tool
// runs once; a request in flight while the connections die fails whole, and repeating it is safe.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf } from '../support/harness.js';
import { freshPostgresDatabase, TEST_POSTGRES, type TestDatabase } from '../support/postgres.js';
import { call, callStep, startScenario, textStep, TURN_QUERY, type Scenario } from '../support/scenario.js';

let s: Scenario | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await s?.close();
  await database?.drop();
  s = database = undefined;
});

/** Ends every connection to the database but our own: what a restart of PostgreSQL does to the server's pool. */
async function killConnections(url: string): Promise<number> {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: TEST_POSTGRES });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ killed: boolean }>(
      'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    return rows.filter((r) => r.killed).length;
  } finally {
    await admin.end();
  }
}

describe('PostgreSQL connections lost while the server runs', () => {
  it('the server stays up; the next requests reconnect; the paused turn is answered and its tool runs once', async () => {
    database = await freshPostgresDatabase();
    s = await startScenario({
      database: database.url,
      tools: [{ name: 'wipe' }],
      script: [callStep(call('wipe')), textStep('Wiped.')],
    });
    const { turn } = await s.start('wipe it');
    expect(turn.status).toBe('PAUSED');

    expect(await killConnections(database.url)).toBeGreaterThan(0);
    // The pool drops the dead connections (their error is an event, not a crash) and opens new ones. The first
    // request after the kill may still be handed a connection whose death was not noticed yet: it fails whole
    // ("Unexpected error.", nothing written), and the answer is idempotent, so the client repeats it.
    let answered: any;
    for (let attempt = 0; attempt < 3 && !answered; attempt++) {
      const response = await s.h.gql(
        'mutation($input: ResolveElicitationInput!) { resolveElicitation(input: $input) { turn { id status } userErrors { code } } }',
        { input: { elicitationId: turn.pendingElicitations[0].id, action: 'ACCEPT' } },
      );
      if (response.errors) expect(response.errors[0]!.message).toBe('Unexpected error.');
      else answered = response.data.resolveElicitation;
    }
    expect(answered).toEqual({ turn: { id: turn.id, status: 'COMPLETED' }, userErrors: [] });
    expect(s.tools.count('wipe')).toBe(1);
    const final = dataOf(await s.h.gql(TURN_QUERY, { id: turn.id })).turn;
    expect(final.messages.filter((m: any) => m.role === 'TOOL')).toHaveLength(1);
    expect((await fetch(new URL('/readyz', s.h.url))).status).toBe(200);
  });
});
