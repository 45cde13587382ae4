// Starts a real toolgate server on 127.0.0.1 (random port) and talks GraphQL to it over real HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type ServerOptions, type ToolgateServer } from '../../src/server.js';
import { migratedPostgresDatabase } from './postgres.js';

/**
 * TOOLGATE_TEST_BACKEND=postgres: a harness without a database of its own gets a fresh PostgreSQL database (dropped
 * by the global teardown, test/support/global-setup.ts) instead of an SQLite file: `npm run test:postgres` runs the
 * GraphQL suites so.
 */
export const TEST_BACKEND = process.env.TOOLGATE_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

export interface GraphQLResponse<T = any> {
  data?: T;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export interface Harness {
  server: ToolgateServer;
  url: string;
  /** The SQLite file or PostgreSQL URL; reuse it to start a fresh server on the same state. */
  database: string;
  gql<T = any>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

/** A temp directory removed when the test file ends (call `cleanup` in afterAll). */
export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A database of the test's backend no one has used: a PostgreSQL database, or an SQLite file in a temp directory. */
export async function freshDatabase(): Promise<string> {
  return TEST_BACKEND === 'postgres'
    ? (await migratedPostgresDatabase()).url
    : join(mkdtempSync(join(tmpdir(), 'toolgate-db-')), 'toolgate.db');
}

export async function startHarness(
  options: Partial<ServerOptions> & { database?: string; port?: number } = {},
): Promise<Harness> {
  const database = options.database ?? (await freshDatabase());
  const server = await createServer({ sweepIntervalSeconds: 0, ...options, database });
  const url = await server.listen(options.port ?? 0, '127.0.0.1');
  return {
    server,
    url,
    database,
    async gql(query, variables, headers) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphQLResponse;
    },
    close: () => server.close(),
  };
}

/** Throws with the GraphQL errors when there are any, so a test fails with the server's own words. */
export function dataOf<T>(response: GraphQLResponse<T>): T {
  if (response.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(response.errors)}`);
  return response.data as T;
}

export const TURN_FIELDS = `
  id status text error iterations expiresAt
  messages { id role text toolCallId toolCalls { id name toolId arguments } }
  pendingElicitations { id status message requestedSchema _meta mcpRequest toolCall { name toolId arguments annotations { readOnlyHint destructiveHint } } expiresAt }
  elicitations { id status response { action content } resolvedAt }
`;

export const START_TURN = `mutation Start($input: StartTurnInput!) {
  startTurn(input: $input) { turn { ${TURN_FIELDS} } thread { id } userErrors { code message field } }
}`;

export const RESOLVE = `mutation Resolve($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    elicitation { id status response { action content } resolvedBy resolvedAt }
    turn { ${TURN_FIELDS} }
    userErrors { code message field }
  }
}`;
