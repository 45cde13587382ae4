// Part 10's MCP pieces: the upstream server (bench/mcp/upstream.mjs), supergateway in front of it as a child
// process, the SDK client's sessions (over stdio straight to the upstream, or over Streamable HTTP to a relay), and
// the CPU of a process's descendants (the upstream servers a relay started).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { cpuTimeOf, freePort, untilAnswering } from './processes.js';

/** The upstream server's file and the command that starts it (the same for every setup). */
export const UPSTREAM_FILE = fileURLToPath(new URL('../mcp/upstream.mjs', import.meta.url));
export const UPSTREAM_COMMAND = process.execPath;
export const UPSTREAM_ARGS = [UPSTREAM_FILE];
const SUPERGATEWAY = fileURLToPath(new URL('../../node_modules/supergateway/dist/index.js', import.meta.url));

/** The machine's monotonic clock in milliseconds (CLOCK_MONOTONIC: the same in every process here). */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

export interface Session {
  client: Client;
  /** The upstream server's pid, for a stdio session (its own process); else undefined. */
  pid?: number;
  close(): Promise<void>;
}

/** A session straight to a new upstream server process over stdio. */
export async function stdioSession(): Promise<Session> {
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: UPSTREAM_COMMAND, args: UPSTREAM_ARGS, stderr: 'inherit' });
  await client.connect(transport);
  return { client, pid: transport.pid ?? undefined, close: () => client.close() };
}

/** A session over Streamable HTTP; `elicit` declares elicitation (form) and answers each elicitation/create. */
export async function httpSession(
  url: string,
  elicit?: (params: ElicitRequest['params']) => ElicitResult,
): Promise<Session> {
  const client = new Client(
    { name: 'toolgate-bench', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params));
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return {
    client,
    async close() {
      // DELETE ends the session at the relay (supergateway then stops its upstream process).
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

export interface Relay {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** supergateway (stdio to Streamable HTTP, stateful: one upstream process per session) on 127.0.0.1. */
export async function startSupergateway(timeoutMs = 30_000): Promise<Relay> {
  const port = await freePort();
  const command = [UPSTREAM_COMMAND, ...UPSTREAM_ARGS].map((part) => `'${part}'`).join(' ');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      SUPERGATEWAY,
      '--stdio',
      command,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
      '--logLevel',
      'none',
      '--healthEndpoint',
      '/healthz',
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  await untilAnswering(child, `http://127.0.0.1:${port}/healthz`, 'supergateway', timeoutMs).catch(async (error) => {
    await stop();
    throw error;
  });
  return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid!, stop };
}

/** Every process descending from `pid` (children, theirs, ...), read from /proc. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(entry));
      children.set(parent, list);
    } catch {
      // ended meanwhile
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** CPU milliseconds used so far by each of `pids` (one that ended is left out). */
export function cpuOf(pids: readonly number[]): Map<number, number> {
  const readings = new Map<number, number>();
  for (const pid of pids) {
    try {
      readings.set(pid, cpuTimeOf(pid));
    } catch {
      // ended
    }
  }
  return readings;
}
