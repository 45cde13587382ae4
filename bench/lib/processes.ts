// Starts the servers under test as child processes (never in the load generator's process), talks to them over
// IPC for what HTTP cannot tell (RSS reset, GC, publish times), and makes sure every one of them ends.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
const live = new Set<ChildProcess>();

export interface ServerChild {
  /** http://127.0.0.1:<port>/graphql */
  url: string;
  pid: number;
  /** One request over IPC; rejects after `timeoutMs`. */
  call<T = unknown>(command: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

export interface ReadyMessage {
  type: 'ready';
  url: string;
}
export interface ReplyMessage {
  type: 'reply';
  id: number;
  result?: unknown;
  error?: string;
}
export interface CallMessage {
  type: 'call';
  id: number;
  command: string;
  args: Record<string, unknown>;
}

/** Forks bench/<file> under tsx with --expose-gc (and `nodeFlags`) and waits for it to report its URL. */
export async function startChild(
  file: string,
  env: Record<string, string>,
  nodeFlags: string[] = [],
  timeoutMs = 60_000,
): Promise<ServerChild> {
  const child = fork(`${BENCH_DIR}${file}`, [], {
    // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each server, written when it stops (for finding misses).
    execArgv: [
      '--import',
      'tsx',
      '--expose-gc',
      ...nodeFlags,
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start within ${timeoutMs} ms`)), timeoutMs);
    child.on('message', (message: ReadyMessage | ReplyMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message.url);
        return;
      }
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error));
      else waiter.resolve(message.result);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const error = new Error(`${file} exited (code ${code}, signal ${signal})`);
      reject(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
    });
  }).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });

  return {
    url,
    pid: child.pid!,
    call<T>(command: string, args: Record<string, unknown> = {}, callTimeoutMs = 30_000): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${file}: ${command} timed out`));
        }, callTimeoutMs);
        pending.set(id, {
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value as T);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        child.send({ type: 'call', id, command, args } satisfies CallMessage);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Ends every child still running (the bench's own, by pid); for exits on error or deadline. */
export function killAllChildren(): void {
  for (const child of live) child.kill('SIGKILL');
}

/** Resident set size now and its peak (VmHWM) in bytes, read from /proc. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Resets the peak RSS (VmHWM) of a process to its current RSS (Linux clear_refs); false where not allowed. */
export function resetPeakMemory(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * A process's CPU time (user + system) so far in milliseconds, and when it started (in clock ticks since boot: with
 * the pid, it tells a process from a later one given the same pid). From /proc, 10 ms ticks.
 */
export function processStatOf(pid: number): { cpuMs: number; startedAt: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14, 15 and 22 of stat (utime, stime, starttime) are at 11, 12 and 19 after the command name.
  return { cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100, startedAt: Number(fields[19]) };
}

/** CPU time (user + system) a process has used so far, in milliseconds. */
export function cpuTimeOf(pid: number): number {
  return processStatOf(pid).cpuMs;
}

/** Bytes a process caused to be sent to the storage layer so far (/proc/<pid>/io write_bytes: pages it dirtied). */
export function writeBytesOf(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/^write_bytes:\s+(\d+)/m.exec(io)?.[1] ?? Number.NaN);
}

/**
 * Resolves once `url` answers 2xx (polled every 50 ms); rejects when `child` exits first or after `timeoutMs`, naming
 * `what`. The caller stops the child on a rejection.
 */
export async function untilAnswering(child: ChildProcess, url: string, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited (code ${child.exitCode})`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (performance.now() > deadline) throw new Error(`${what} did not answer at ${url} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A port nothing listens on now, on 127.0.0.1, for a child that takes its port from its environment. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
