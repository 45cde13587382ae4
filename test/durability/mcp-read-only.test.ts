// Crash test of a gateway's read-only call, which runs before anything of it is written and is recorded whole after
// it returns (docs/durability.md): a process killed between the tool's return and that commit leaves no trace of the
// call (no thread, no RUNNING turn for a restart to take over, no half of its decision records), and the client's
// retry runs it and is recorded once. The journal tool's runs file counts the runs across processes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FixtureOptions } from '../fixtures/durability-server.js';
import { dataOf, TEST_BACKEND } from '../support/harness.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { connectClient } from '../mcp/support.js';
import { killAll, readRuns, startFixture, type ServerProcess } from './processes.js';

const CALLS = `query { threads(agentId: "gateway") { edges { node { turns { status text } } } } }`;

let dir: string;
let base: FixtureOptions;
const clients: Client[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-read-only-crash-'));
  const database = TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : join(dir, 'toolgate.db');
  base = { database, runsFile: join(dir, 'runs.log') };
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function mcpClient(server: ServerProcess): Promise<Client> {
  const { client } = await connectClient(new URL('/mcp/gateway', server.url));
  clients.push(client);
  return client;
}

/** The gateway's calls as the local user reads them: each call's turn. */
async function callsOf(server: ServerProcess): Promise<{ status: string; text: string | null }[]> {
  const data = dataOf(await server.gql(CALLS));
  return data.threads.edges.flatMap((edge: any) => edge.node.turns);
}

const readsIn = () => readRuns(base.runsFile).filter((run) => run.kind === 'read');

describe("SIGKILL between a read-only call's return and its record", { timeout: 180_000 }, () => {
  it('leaves nothing of the call; after the restart the retry runs and is recorded once', async () => {
    const first = await startFixture({ ...base, crashAt: { point: 'toolReturned' } });
    let answered = false;
    // The client gets no result: its request dies with the process (the SDK then waits out its timeout).
    void (await mcpClient(first)).callTool({ name: 'count', arguments: {} }).then(
      () => (answered = true),
      () => {},
    );
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(answered).toBe(false);
    expect(readsIn().map((run) => run.pid)).toEqual([first.pid]);

    const second = await startFixture(base);
    // Nothing of it was written: no call to show, none RUNNING for the restart to take over.
    expect(await callsOf(second)).toEqual([]);
    const retried = await (await mcpClient(second)).callTool({ name: 'count', arguments: {} });
    expect(retried).toMatchObject({ content: [{ type: 'text', text: 'Counted.' }], isError: false });
    expect(await callsOf(second)).toEqual([{ status: 'COMPLETED', text: 'Counted.' }]);
    expect(readsIn().map((run) => run.pid)).toEqual([first.pid, second.pid]);
  });
});
