// `toolgate mcp` (src/cli.ts mcp, the run's bundle of it) in its own process: JSON-RPC lines on its stdin and
// stdout, forwarded to a real server's /mcp unchanged; a server it cannot use is one line on stderr and exit code 1; a
// server that restarted (and so no longer knows the session) gets a new session from the bridge, and the client goes
// on.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeArgsFor } from '../support/entries.js';
import { startHarness, type Harness } from '../support/harness.js';
import type { CountingToolSource } from '../support/tools.js';
import {
  ALICE_TOKEN,
  countingTools,
  GATEWAY_ID,
  gatewayConfig,
  INITIALIZE,
  mcpUrl,
  PING,
  startGateway,
} from './support.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BRIDGE = [...nodeArgsFor('src/cli.ts'), 'mcp'];

interface Bridge {
  child: ChildProcess;
  /** The next JSON-RPC message on stdout. */
  next(): Promise<any>;
  write(message: object): void;
  stderr(): string;
  exited: Promise<number | null>;
}

function startBridge(env: Record<string, string>): Bridge {
  const child = spawn(process.execPath, BRIDGE, {
    cwd: ROOT,
    env: { ...process.env, TOOLGATE_URL: '', TOOLGATE_TOKEN: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      const taker = waiting.shift();
      if (taker) taker(line);
      else lines.push(line);
    }
  });
  return {
    child,
    next: () =>
      new Promise((done) => {
        const line = lines.shift();
        if (line !== undefined) done(JSON.parse(line));
        else waiting.push((taken) => done(JSON.parse(taken)));
      }),
    write: (message) => child.stdin!.write(`${JSON.stringify(message)}\n`),
    stderr: () => stderr,
    exited: new Promise((done) => child.once('exit', (code) => done(code))),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as { port: number };
  await new Promise((closed) => server.close(closed));
  return port;
}

describe('the stdio bridge', () => {
  let local: Harness;
  let withTokens: Harness;
  let tools: CountingToolSource;
  beforeAll(async () => {
    ({ h: local } = await startGateway({ local: true }));
    ({ h: withTokens, tools } = await startGateway());
  });
  afterAll(async () => {
    await local?.close();
    await withTokens?.close();
  });

  it('forwards initialize and its answer unchanged, then requests of the session; ends at end of input', async () => {
    const bridge = startBridge({ TOOLGATE_URL: mcpUrl(local).href });
    bridge.write(INITIALIZE);
    const initialized = await bridge.next();
    expect(initialized).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: INITIALIZE.params.protocolVersion,
        capabilities: {
          tools: { listChanged: true },
          tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
          resources: { subscribe: true, listChanged: true },
          prompts: { listChanged: true },
          completions: {},
          logging: {},
        },
        serverInfo: { name: 'toolgate', version: '0.1.0' },
      },
    });
    bridge.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    bridge.write(PING);
    expect(await bridge.next()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    bridge.child.stdin!.end();
    expect(await bridge.exited).toBe(0);
    expect(bridge.stderr()).toBe('');
  });

  it('sends TOOLGATE_TOKEN as the bearer token', async () => {
    const bridge = startBridge({ TOOLGATE_URL: mcpUrl(withTokens).href, TOOLGATE_TOKEN: ALICE_TOKEN });
    bridge.write(INITIALIZE);
    expect((await bridge.next()).result.serverInfo.name).toBe('toolgate');
    bridge.child.stdin!.end();
    expect(await bridge.exited).toBe(0);
  });

  it('a token the server refuses: one line on stderr, exit 1', async () => {
    const url = mcpUrl(withTokens).href;
    const bridge = startBridge({ TOOLGATE_URL: url, TOOLGATE_TOKEN: 'not-a-token-of-this-server' });
    bridge.write(INITIALIZE);
    expect(await bridge.exited).toBe(1);
    expect(bridge.stderr()).toBe(
      `toolgate mcp: ${url} refused the credentials (401); set TOOLGATE_TOKEN to a token of the server's config\n`,
    );
  });

  it('a server that cannot be reached: one line on stderr, exit 1', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const bridge = startBridge({ TOOLGATE_URL: url });
    bridge.write(INITIALIZE);
    expect(await bridge.exited).toBe(1);
    expect(bridge.stderr()).toBe(`toolgate mcp: cannot reach toolgate at ${url} (connection refused)\n`);
  });

  it('TOOLGATE_URL that is not a URL: one line on stderr, exit 1', async () => {
    const bridge = startBridge({ TOOLGATE_URL: 'localhost 4000' });
    expect(await bridge.exited).toBe(1);
    expect(bridge.stderr()).toBe('toolgate mcp: TOOLGATE_URL: "localhost 4000" is not a URL\n');
  });

  it("passes elicitation/create through: the client's own answer runs the call, whose result carries its receipt", async () => {
    const client = new Client({ name: 'stdio-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked: any[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return { action: 'accept' };
    });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: BRIDGE,
        cwd: ROOT,
        env: {
          ...process.env,
          TOOLGATE_URL: mcpUrl(withTokens, `/mcp/${GATEWAY_ID}`).href,
          TOOLGATE_TOKEN: ALICE_TOKEN,
        } as Record<string, string>,
      }),
    );
    const result = await client.callTool({ name: 'drop', arguments: { ids: [7] } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [7]' }], isError: false });
    // The result as the server gave it, its receipt too (docs/receipts.md).
    expect(result._meta?.['dev.toolgate/receipt']).toMatchObject({ kind: 'ACCEPTED', actor: { id: 'alice' } });
    expect(tools.count('drop')).toBe(1);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: 'form', message: expect.stringContaining('Drop') });
    await client.close();
  });
});

describe('the stdio bridge when toolgate restarts', () => {
  /** The same server again, on the same port and database, as a restart of `toolgate` would have it. */
  async function restart(h: Harness, options: { local?: boolean } = {}): Promise<Harness> {
    await h.close();
    const port = Number(new URL(h.url).port);
    const config = gatewayConfig(options);
    return startHarness({ config, toolSources: [countingTools()], database: h.database, port });
  }

  it("starts a new session by itself: the client's next calls go on, and the client is not restarted", async () => {
    let h = await startHarness({ config: gatewayConfig(), toolSources: [countingTools()] });
    const client = new Client({ name: 'stdio-client', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: BRIDGE,
      cwd: ROOT,
      env: {
        ...process.env,
        TOOLGATE_URL: mcpUrl(h, `/mcp/${GATEWAY_ID}`).href,
        TOOLGATE_TOKEN: ALICE_TOKEN,
      } as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr!.on('data', (chunk) => (stderr += chunk));
    try {
      await client.connect(transport);
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['drop', 'look']);
      h = await restart(h);
      const result = await client.callTool({ name: 'look', arguments: {} });
      expect(result).toMatchObject({ content: [{ type: 'text', text: 'look ran with {}' }], isError: false });
      expect((await client.listTools()).tools).toHaveLength(2);
      expect(stderr).toContain('toolgate mcp: toolgate no longer knew the session');
    } finally {
      await client.close();
      await h.close();
    }
  });

  it('a client that sends initialize again after the restart gets a new session, not "Session not found"', async () => {
    let h = await startHarness({ config: gatewayConfig({ local: true }), toolSources: [countingTools()] });
    const bridge = startBridge({ TOOLGATE_URL: mcpUrl(h).href });
    try {
      bridge.write(INITIALIZE);
      expect((await bridge.next()).result.serverInfo.name).toBe('toolgate');
      bridge.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
      // Answered once the notification before it was delivered: the restart comes after both.
      bridge.write(PING);
      expect(await bridge.next()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
      h = await restart(h, { local: true });
      bridge.write({ ...INITIALIZE, id: 3 });
      expect(await bridge.next()).toMatchObject({ id: 3, result: { serverInfo: { name: 'toolgate' } } });
      bridge.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
      bridge.write({ ...PING, id: 4 });
      expect(await bridge.next()).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
      bridge.child.stdin!.end();
      expect(await bridge.exited).toBe(0);
    } finally {
      bridge.child.kill();
      await h.close();
    }
  });
});
