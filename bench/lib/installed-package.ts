// toolgate as a user runs the package (docs/package.md): `npm pack` (its prepack builds), the tarball installed into
// an empty folder as the Dockerfile installs it (`npm install --omit=dev`), and the `toolgate` command it installs
// started with its environment only, logging at info (its default) to a file, as `toolgate > file` would.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { betterSqlitePrebuilds, withoutNpmVariables } from '../../scripts/packed-install.js';
import { freePort, untilAnswering, type ServerChild } from './processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface InstalledPackage {
  /** The installed `toolgate` command. */
  command: string;
  dir: string;
  remove(): void;
}

/** Packs this checkout and installs the tarball into a new folder. */
export async function installPackage(): Promise<InstalledPackage> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-package-'));
  const run = (args: string[], cwd: string, env: Record<string, string> = {}) =>
    promisify(execFile)('npm', args, { cwd, env: withoutNpmVariables(env), maxBuffer: 32 * 1024 * 1024 });
  try {
    await run(['pack', '--pack-destination', dir], ROOT);
    const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'))!;
    const app = join(dir, 'app');
    mkdirSync(app);
    const install = ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball)];
    await run(install, app, betterSqlitePrebuilds(ROOT, join(dir, 'prebuilds')));
    return {
      command: join(app, 'node_modules', '.bin', 'toolgate'),
      dir,
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The installed command serving the built-in demo on `database`, its log appended to `logFile`; ready once
 * /readyz answers 200. It has no IPC: `call` is refused.
 */
export async function startInstalled(
  installed: InstalledPackage,
  database: string,
  logFile: string,
  timeoutMs = 60_000,
): Promise<ServerChild> {
  const port = await freePort();
  const log = openSync(logFile, 'a');
  const child = spawn(installed.command, [], {
    cwd: join(installed.dir, 'app'),
    env: withoutNpmVariables({ HOST: '127.0.0.1', PORT: String(port), TOOLGATE_DB: database }),
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  await untilAnswering(child, `${base}/readyz`, `the installed toolgate (log: ${logFile})`, timeoutMs).catch(
    (error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    },
  );
  return {
    url: `${base}/graphql`,
    pid: child.pid!,
    call: () => Promise.reject(new Error('the installed toolgate has no IPC')),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
