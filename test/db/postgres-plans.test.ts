import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { postgresStatements, type PgQuery } from '../../src/db/postgres/statements.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';

// pg prepares each named statement once per connection, and PostgreSQL soon keeps a generic plan for it: one made
// without the parameters' values, often while the tables are still empty. A lookup of one row by id that also
// checks its owner must use the id's unique index under such a plan too: with the owner's index it reads every row
// of that owner, on every answer, and an answer gets slower as its user's history grows.
let database: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  database = await freshPostgresDatabase();
  await (await PostgresStore.open(database.url)).close(); // the schema
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  // The plan a long-lived connection ends up with, made now, on the empty tables.
  await client.query('SET plan_cache_mode = force_generic_plan');
});
afterAll(async () => {
  await client.end();
  await database.drop();
});

type PlanNode = Record<string, unknown>;

/** The statement's generic plan on this connection: its top node. */
async function genericPlan(query: PgQuery): Promise<PlanNode> {
  await client.query(query); // prepares it on this connection, as the store's pool does
  const values = (query.values ?? []).map((v) =>
    client.escapeLiteral(Array.isArray(v) ? `{${v.join(',')}}` : String(v)),
  );
  const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(
    `EXPLAIN (FORMAT JSON) EXECUTE ${query.name}${values.length ? `(${values.join(', ')})` : ''}`,
  );
  return (rows[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
}

describe('PostgreSQL: a lookup by id uses the id under a generic plan', () => {
  /** The indexes the statement's generic plan scans, by table. */
  async function indexesOf(query: PgQuery): Promise<string[]> {
    const found: string[] = [];
    const walk = (node: PlanNode) => {
      if (typeof node['Index Name'] === 'string') found.push(`${String(node['Relation Name'])}:${node['Index Name']}`);
      for (const child of (node.Plans as PlanNode[] | undefined) ?? []) walk(child);
    };
    walk(await genericPlan(query));
    return found;
  }

  const byId = { id: 'x-1', ownerId: 'user-ann' };
  it.each([
    ['ownedElicitation', () => postgresStatements.ownedElicitation(byId), 'elicitations:elicitations_id_unique'],
    [
      'lockTurnOfElicitation',
      () => postgresStatements.lockTurnOfElicitation(byId),
      'elicitations:elicitations_id_unique',
    ],
    [
      'elicitationsWithSibling',
      () => postgresStatements.elicitationsWithSibling(byId),
      'elicitations:elicitations_id_unique',
    ],
    ['ownedThread', () => postgresStatements.ownedThread(byId), 'threads:threads_id_unique'],
    ['lockOwnedThread', () => postgresStatements.lockOwnedThread(byId), 'threads:threads_id_unique'],
    ['ownedTurn', () => postgresStatements.ownedTurn(byId), 'turns:turns_pkey'],
    ['ownedGrant', () => postgresStatements.ownedGrant(byId), 'approval_grants:approval_grants_id_unique'],
    [
      'lockGrantForRevoke',
      () => postgresStatements.lockGrantForRevoke(byId),
      'approval_grants:approval_grants_id_unique',
    ],
  ])('%s', async (_name, query, index) => {
    const indexes = await indexesOf(query());
    const table = index.split(':')[0]!;
    expect(indexes.filter((i) => i.startsWith(`${table}:`))[0]).toBe(index);
  });
});

// The decision records' chain grows with every gated call: each append and each read of a call's records must find
// its rows by an index, not read the chain.
describe('PostgreSQL: the decision records are read by their indexes under a generic plan', () => {
  /** Whether the statement's generic plan reads the whole table (a Seq Scan of it). */
  async function scansWholly(query: PgQuery): Promise<boolean> {
    return JSON.stringify(await genericPlan(query)).includes('"Node Type":"Seq Scan"');
  }

  it.each([
    ['decisionChainHead', () => postgresStatements.decisionChainHead()],
    ['decisionsOfCall', () => postgresStatements.decisionsOfCall({ turnId: 't', toolCallId: 'c' })],
    ['acceptedDecisionsOfTurns', () => postgresStatements.acceptedDecisionsOfTurns({ ids: ['t'] })],
    ['decisionsOfTurns', () => postgresStatements.decisionsOfTurns({ ids: ['t'] })],
  ])('%s', async (_name, query) => {
    expect(await scansWholly(query() as PgQuery)).toBe(false);
  });
});
