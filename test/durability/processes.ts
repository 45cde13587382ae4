// Real server processes for the crash tests: start one on a database file, talk GraphQL to it over HTTP, SIGKILL
// it, start another on the same file. Every child is one node process (plain node on the run's bundle of the entry
// point, test/support/entries.ts, or on a compiled build), so a kill reaches the server itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { FixtureOptions } from '../fixtures/durability-server.js';
import type { GraphQLResponse } from '../support/harness.js';
import { nodeArgsFor } from '../support/entries.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  leaseOwner: string | null;
  /** Resolves when the process has exited, with its exit code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  gql<T = any>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>>;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  /** Everything it wrote to stderr (for failure messages). */
  stderr(): string;
}

const children = new Set<ChildProcess>();

/** SIGKILLs every child still alive (afterEach), so a failing test leaves no server behind. */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
      }
    }),
  );
  children.clear();
}

/** test/fixtures/durability-server.ts with these options. */
export function startFixture(options: FixtureOptions): Promise<ServerProcess> {
  return start(nodeArgsFor('test/fixtures/durability-server.ts'), { FIXTURE: JSON.stringify(options) }, (line) => {
    const parsed = JSON.parse(line) as { url: string; pid: number; leaseOwner: string };
    return { url: parsed.url, leaseOwner: parsed.leaseOwner };
  });
}

/** The real entry point, src/cli.ts (the built-in demo unless TOOLGATE_CONFIG is set), on a random port. */
export function startCli(database: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  return start(nodeArgsFor('src/cli.ts'), { ...cliEnv(database), ...env }, cliListening);
}

/**
 * A compiled entry point (`npm run build`'s `<out>/src/cli.js`) with plain node, as one deploys it, from `cwd`:
 * the built-in demo on a random port.
 */
export function startBuiltCli(entry: string, database: string, cwd: string): Promise<ServerProcess> {
  return start([entry], cliEnv(database), cliListening, cwd);
}

function cliEnv(database: string): Record<string, string> {
  return { TOOLGATE_DB: database, HOST: '127.0.0.1', PORT: '0' };
}

/** The CLI's "serving … at <url>" log line. */
function cliListening(line: string): { url: string; leaseOwner: null } | null {
  const match = / at (http:\/\/\S+\/graphql)/.exec(line);
  return match ? { url: match[1]!, leaseOwner: null } : null;
}

/** `node <nodeArgs>` from `cwd`, until `ready` finds its URL in a line of its stdout. */
async function start(
  nodeArgs: string[],
  env: Record<string, string>,
  ready: (line: string) => { url: string; leaseOwner: string | null } | null,
  cwd = ROOT,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, nodeArgs, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  const started = await new Promise<{ url: string; leaseOwner: string | null }>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      for (const line of out.split('\n').slice(0, -1)) {
        const found = safely(() => ready(line));
        if (found) resolve(found);
      }
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`server process exited before it listened (${code ?? signal}): ${stderr}`)),
    );
  });
  return {
    child,
    pid: child.pid!,
    ...started,
    exited,
    async gql(query, variables) {
      const response = await fetch(started.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphQLResponse;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stderr: () => stderr,
  };
}

function safely<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

/** Polls `probe` until it returns a value other than undefined/null/false; fails after `timeoutMs` with `what`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The journal tool's lines, parsed: which calls started and ended, in which process. */
export function readRuns(
  file: string,
): { kind: 'start' | 'end' | 'read' | 'crash'; callId: string; line: string; pid: number }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((text) => {
      const parts = text.split(' ');
      if (parts[0] === 'crash') return { kind: 'crash', callId: '', line: parts[1]!, pid: Number(parts[2]) };
      return { kind: parts[0] as 'start' | 'end' | 'read', callId: parts[1]!, line: parts[2]!, pid: Number(parts[3]) };
    });
}

/** How often the journal tool started for `line`. */
export function runsOf(file: string, line: string): number {
  return readRuns(file).filter((run) => run.kind === 'start' && run.line === line).length;
}

/**
 * Runs the fixture until it dies (it is expected to SIGKILL itself at `crashAt`, possibly while recovering at
 * start, before it listens) and returns how it ended.
 */
export async function runUntilCrash(
  options: FixtureOptions,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, nodeArgsFor('test/fixtures/durability-server.ts'), {
    cwd: ROOT,
    env: { ...process.env, FIXTURE: JSON.stringify(options) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
}

/**
 * Every line of the runs file, in file order, split into words: the journal tool's, the fixture's `logLifecycle`
 * lines ("expired", "interrupted", "sweep", "swept") and any marker a test appended.
 */
export function readLog(file: string): string[][] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((text) => text.split(' '));
}
