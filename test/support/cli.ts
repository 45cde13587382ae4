// The real entry point in a process of its own, as the tests that start it with an environment of their own run it:
// `node --import tsx src/cli.ts` from the repository, on a port the system picks, its output collected.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** src/cli.ts with `env` over this process's; `out` grows as it writes, `done` resolves when it exits. */
export function runCli(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts'], {
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
