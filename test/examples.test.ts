// The embedding examples (examples/embed-*.ts), each run as its own program the way the docs say, against the real
// server it starts: the node:http app with toolgate mounted in it, and the gateway of a TypeScript-function tool next
// to an MCP server's tools. Each ends cleanly on SIGTERM. And the client examples (examples/client-*.ts), each run as
// its own program against the demo served by createServer: the round trip through `toolgate/client`'s documents.
// And the MCP examples (examples/mcp-*.ts), each an agent framework's MCP client with a scripted model calling a gated
// tool through the demo's /mcp: the call waits until a reviewer accepts it (here through the API), then runs once.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EMBEDDING_EXAMPLES, javascriptExample } from '../scripts/examples-js.js';
import { createServer } from '../src/index.js';
import { startServing, type Serving } from './support/cli.js';
import { dataOf, RESOLVE, START_TURN, tempDir, type GraphQLResponse } from './support/harness.js';
import { connectWs, subscribeWs } from './support/live.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const temp = tempDir();
afterAll(() => temp.cleanup());

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** `node --import tsx examples/<name>` from the checkout, on a random port; resolves once it printed its URL. */
function runExample(name: string, env: Record<string, string>): Promise<Serving> {
  return startServing(process.execPath, ['--import', 'tsx', join('examples', name)], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
    running,
  });
}

async function gql<T = any>(url: URL, query: string, variables?: object): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return dataOf((await response.json()) as GraphQLResponse<T>);
}

describe('examples/embed-http.ts: toolgate mounted in a node:http app', { timeout: 60_000 }, () => {
  it("serves the app's routes and toolgate's (GraphQL, WebSocket, health) on one port; the demo round trip works", async () => {
    const example = await runExample('embed-http.ts', { TOOLGATE_DB: join(temp.dir, 'embed-http.db') });
    const base = example.url.origin;
    expect(await (await fetch(`${base}/`)).text()).toContain('My app.');
    expect(await (await fetch(`${base}/api/status`)).json()).toEqual({ app: 'ok' });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    const graphql = new URL('/graphql', base);
    const started = (await gql(graphql, START_TURN, { input: { agentId: 'demo', message: 'delete entities 2' } }))
      .startTurn.turn;
    expect(started.status).toBe('PAUSED');
    let closeCode: number | undefined;
    const client = connectWs(graphql.href, undefined, {
      on: { closed: (event) => (closeCode = (event as { code: number }).code) },
    });
    const updates = subscribeWs(client, 'subscription($id: ID!) { turnUpdated(turnId: $id) { status } }', {
      id: started.id,
    });
    await updates.waitFor((event) => event.data?.turnUpdated.status === 'PAUSED');
    const resolved = (
      await gql(graphql, RESOLVE, { input: { elicitationId: started.pendingElicitations[0].id, action: 'ACCEPT' } })
    ).resolveElicitation.turn;
    expect(resolved).toMatchObject({ status: 'COMPLETED', text: expect.stringContaining('Deleted 1 entity (2)') });
    await updates.waitFor((event) => event.data?.turnUpdated.status === 'COMPLETED');

    example.child.kill('SIGTERM');
    expect(await example.exited).toBe(0);
    await updates.done;
    expect(closeCode).toBe(1001);
    await client.dispose();
  });
});

describe('examples/embed-*.mjs: the embedding examples as plain JavaScript', () => {
  // They run with plain node on the installed package in test/package.test.ts.
  for (const name of EMBEDDING_EXAMPLES)
    it(`examples/${name}.mjs is examples/${name}.ts without its types (npm run examples:js)`, async () => {
      expect(readFileSync(join(ROOT, 'examples', `${name}.mjs`), 'utf8')).toBe(await javascriptExample(name));
    });
});

describe('examples/embed-tools.ts: a TypeScript-function tool next to MCP tools', { timeout: 60_000 }, () => {
  it('an MCP client lists both; the read-only ones run at once, a change waits for a human and runs once', async () => {
    const example = await runExample('embed-tools.ts', {
      TOOLGATE_DB: join(temp.dir, 'embed-tools.db'),
      MEMORY_FILE_PATH: join(temp.dir, 'memory.jsonl'),
    });
    const graphql = new URL('/graphql', example.url);
    const client = new Client({ name: 'examples-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(example.url));
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['list_tickets', 'close_ticket', 'read_graph', 'create_entities']));

      const text = (result: any) => result.content.map((block: any) => block.text).join('');
      expect(text(await client.callTool({ name: 'list_tickets', arguments: {} }))).toBe(
        '#1 Printer on fire (open)\n#2 VPN drops every hour (open)',
      );
      expect(JSON.parse(text(await client.callTool({ name: 'read_graph', arguments: {} })))).toEqual({
        entities: [],
        relations: [],
      });

      // The function's call waits for an answer: here through the API, as the inbox gives it.
      const closing = client.callTool({ name: 'close_ticket', arguments: { id: 2, resolution: 'new router' } });
      const pending = await waitForPending(graphql);
      expect(pending.toolCall).toEqual({
        toolId: 'helpdesk:close_ticket',
        arguments: { id: 2, resolution: 'new router' },
      });
      await gql(graphql, RESOLVE, { input: { elicitationId: pending.id, action: 'ACCEPT' } });
      expect(text(await closing)).toBe('Closed #2 VPN drops every hour: new router.');
      expect(text(await client.callTool({ name: 'list_tickets', arguments: {} }))).toContain(
        '#2 VPN drops every hour (closed)',
      );

      // The MCP server's tool waits alike; declined, it does not run.
      const creating = client.callTool({
        name: 'create_entities',
        arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] },
      });
      const declined = await waitForPending(graphql);
      expect(declined.toolCall.toolId).toBe('memory:create_entities');
      await gql(graphql, RESOLVE, { input: { elicitationId: declined.id, action: 'DECLINE' } });
      expect(await creating).toMatchObject({ isError: true });
      expect(JSON.parse(text(await client.callTool({ name: 'read_graph', arguments: {} }))).entities).toEqual([]);
    } finally {
      await client.close();
    }
    example.child.kill('SIGTERM');
    expect(await example.exited).toBe(0);
  });
});

/** The one pending confirmation request, once there is one. */
async function waitForPending(graphql: URL): Promise<any> {
  const query = '{ pendingElicitations(first: 5) { edges { node { id toolCall { toolId arguments } } } } }';
  for (let tries = 0; tries < 400; tries++) {
    const edges = (await gql(graphql, query)).pendingElicitations.edges;
    if (edges.length > 0) {
      expect(edges).toHaveLength(1);
      return edges[0].node;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no confirmation request appeared');
}

/** `node --import tsx examples/<name>` from the checkout, to its end: its exit status and output. */
async function runToEnd(name: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join('examples', name)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  running.delete(child);
  return { code, output };
}

describe('examples/client-*.ts: a frontend’s round trip through toolgate/client', { timeout: 60_000 }, () => {
  for (const name of ['client-polling.ts', 'client-subscription.ts']) {
    it(`${name}: starts a demo turn, finds its request, accepts it, reads the turn COMPLETED`, async () => {
      // The demo, as `npx toolgate` serves it: createServer without a config, on SQLite, on loopback.
      const toolgate = await createServer({ database: join(temp.dir, `${name}.db`) });
      try {
        const url = await toolgate.listen(0, '127.0.0.1');
        const { code, output } = await runToEnd(name, { TOOLGATE_GRAPHQL_URL: url });
        expect(code, output).toBe(0);
        let at = 0;
        const steps = [
          /: RUNNING\n/, // startTurn in the background
          /asks: Allow the agent to run "Delete entities"\?/,
          /answered: ACCEPTED\n/,
          /: COMPLETED: Done\. Deleted 1 entity \(1\)\.\n$/,
        ];
        for (const step of steps) {
          const match = step.exec(output.slice(at));
          expect(match, `${step} after ${JSON.stringify(output.slice(0, at))}:\n${output}`).not.toBeNull();
          at += match!.index + match![0].length;
        }
        // What the example did is the server's state: the turn completed, nothing waits.
        const turnId = /turn (trn_\w+)/.exec(output)![1];
        const read = await gql(new URL(url), `{ turn(id: "${turnId}") { status } pendingElicitations { totalCount } }`);
        expect(read).toEqual({ turn: { status: 'COMPLETED' }, pendingElicitations: { totalCount: 0 } });
      } finally {
        await toolgate.close();
      }
    });
  }
});

describe('examples/mcp-*.ts: agents calling a gated tool through the demo’s /mcp', { timeout: 60_000 }, () => {
  for (const name of ['mcp-ai-sdk.ts', 'mcp-openai-agents.ts', 'mcp-langgraph.ts']) {
    it(`${name}: lists the tools, its call waits for a reviewer, and prints the result once accepted`, async () => {
      // The demo, as `npx toolgate` serves it: createServer without a config, its gateway at /mcp.
      const toolgate = await createServer({ database: join(temp.dir, `${name}.db`) });
      try {
        const url = new URL(await toolgate.listen(0, '127.0.0.1'));
        const example = runToEnd(name, { TOOLGATE_MCP_URL: new URL('/mcp', url).href });
        const pending = await waitForPending(url);
        expect(pending.toolCall).toEqual({ toolId: 'demo:delete_entities', arguments: { ids: [2] } });
        await gql(url, RESOLVE, { input: { elicitationId: pending.id, action: 'ACCEPT' } });
        const { code, output } = await example;
        expect(code, output).toBe(0);
        expect(output).toBe(
          [
            'tools: create_entity, delete_entities, list_entities',
            `calling delete_entities {"ids":[2]}: it waits for a person's answer`,
            'result: Deleted 1 entity (2).',
            'model: Done: I asked to delete entity 2, and toolgate answered.',
            '',
          ].join('\n'),
        );
      } finally {
        await toolgate.close();
      }
    });
  }
});
