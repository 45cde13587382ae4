// Crash test of a gateway's read-only call, which runs before anything of it is written and is recorded whole after
// it returns (docs/durability.md): a process killed between the tool's return and that commit leaves no trace of the
// call (no thread, no RUNNING turn for a restart to take over, no half of its decision records), and the client's
// retry runs it and is recorded once. The journal tool's runs file counts the runs across processes.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { dataOf } from '../support/harness.js';
import { connectClient } from '../mcp/support.js';
import { readRuns, startFixture, type ServerProcess } from './processes.js';
import { gatewayCrashScene } from './gateway-scene.js';

const CALLS = `query { threads(agentId: "gateway") { edges { node { turns { status text } } } } }`;

const scene = gatewayCrashScene('toolgate-read-only-crash-');

async function mcpClient(server: ServerProcess): Promise<Client> {
  const { client } = await connectClient(new URL('/mcp/gateway', server.url));
  return scene.track(client);
}

/** The gateway's calls as the local user reads them: each call's turn. */
async function callsOf(server: ServerProcess): Promise<{ status: string; text: string | null }[]> {
  const data = dataOf(await server.gql(CALLS));
  return data.threads.edges.flatMap((edge: any) => edge.node.turns);
}

const readsIn = () => readRuns(scene.base.runsFile).filter((run) => run.kind === 'read');

describe("SIGKILL between a read-only call's return and its record", { timeout: 180_000 }, () => {
  it('leaves nothing of the call; after the restart the retry runs and is recorded once', async () => {
    const first = await startFixture({ ...scene.base, crashAt: { point: 'toolReturned' } });
    let answered = false;
    // The client gets no result: its request dies with the process (the SDK then waits out its timeout).
    void (await mcpClient(first)).callTool({ name: 'count', arguments: {} }).then(
      () => (answered = true),
      () => {},
    );
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(answered).toBe(false);
    expect(readsIn().map((run) => run.pid)).toEqual([first.pid]);

    const second = await startFixture(scene.base);
    // Nothing of it was written: no call to show, none RUNNING for the restart to take over.
    expect(await callsOf(second)).toEqual([]);
    const retried = await (await mcpClient(second)).callTool({ name: 'count', arguments: {} });
    expect(retried).toMatchObject({ content: [{ type: 'text', text: 'Counted.' }], isError: false });
    expect(await callsOf(second)).toEqual([{ status: 'COMPLETED', text: 'Counted.' }]);
    expect(readsIn().map((run) => run.pid)).toEqual([first.pid, second.pid]);
  });
});
