// Programs the tests start in processes of their own: the real entry point as the tests that give it an environment
// of their own run it (node on the run's bundle of src/cli.ts, test/support/entries.ts, from the repository, on a
// port the system picks, its output collected), and any program that serves and prints its URL.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nodeArgsFor } from './entries.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** src/cli.ts with `env` over this process's; `out` grows as it writes, `done` resolves when it exits. */
export function runCli(env: Record<string, string>) {
  const child = spawn(process.execPath, nodeArgsFor('src/cli.ts'), {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const done = new Promise<CliRun>((resolve) => child.on('close', (code) => resolve({ code, ...out })));
  return { child, out, done };
}

export interface Serving {
  child: ChildProcess;
  /** The first URL it printed; one on every interface (0.0.0.0) is asked on loopback. */
  url: URL;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * `command` with `env` (the whole environment) from `cwd`, once it printed a URL; `running` holds it until it exits,
 * for the test's afterEach to kill.
 */
export async function startServing(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; running: Set<ChildProcess> },
): Promise<Serving> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  options.running.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      options.running.delete(child);
      resolve(code);
    }),
  );
  const url = await new Promise<URL>((resolve, reject) => {
    const look = () => {
      const match = /http:\/\/[\d.]+:(\d+)(\/[^\s"',;]*)/.exec(output);
      if (match) resolve(new URL(`http://127.0.0.1:${match[1]}${match[2]}`));
    };
    child.stdout!.on('data', look);
    void exited.then((code) => reject(new Error(`${command} exited (${code}) before it printed its URL:\n${output}`)));
  });
  return { child, url, output: () => output, exited };
}
