// `npm run inbox:build` builds the approval inbox (web/inbox) into web/inbox/dist with Vite; with --if-stale (what
// `npm start` and `npm run build` run) only when the build is missing or its inputs changed since: a hash of
// web/inbox's sources and package-lock.json is kept beside the build. Tests and the screenshot script call buildInbox
// too, sometimes several processes at once: each builds into a folder of its own and swaps it in whole, so that a
// server never serves half a build.
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inputsHash, recordedHash, recordHash, ROOT, STAMP_FILE } from './inputs-hash.js';

const webRoot = join(ROOT, 'web', 'inbox');
export const INBOX_BUILD_DIR = join(webRoot, 'dist');
const STAMP = join(INBOX_BUILD_DIR, STAMP_FILE);
/** Modules of the server's that the inbox imports too (one rule in one place), so part of what the build reads. */
const SHARED_SOURCES = ['src/domain/visible-text.ts'];

/** A hash of everything the build reads: the app's files (not its build), shared sources, locked dependencies. */
export function inboxInputsHash(): string {
  return inputsHash(['web/inbox', ...SHARED_SOURCES, 'package-lock.json'], ['web/inbox/dist']);
}

/** Builds the inbox (or, with ifStale, only when needed); returns whether it built. */
export async function buildInbox(options: { ifStale?: boolean } = {}): Promise<boolean> {
  const inputs = inboxInputsHash();
  if (options.ifStale && recordedHash(STAMP) === inputs) return false;
  const { build } = await import('vite');
  // Outside web/inbox, whose files the hash reads; .scratch/ is ignored by git and the tools.
  const scratch = join(ROOT, '.scratch');
  mkdirSync(scratch, { recursive: true });
  const staging = join(scratch, `inbox-build-${process.pid}-${Date.now()}`);
  const previous = `${staging}-previous`;
  try {
    await build({
      configFile: join(webRoot, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir: staging, emptyOutDir: true },
    });
    recordHash(join(staging, STAMP_FILE), inputs);
    // Two renames: the old build is out of the way for an instant only, and never half written. Another process
    // may swap in its own build between them (the same inputs, the same build): then ours is dropped.
    ignoring(['ENOENT'], () => renameSync(INBOX_BUILD_DIR, previous));
    ignoring(['ENOTEMPTY', 'EEXIST'], () => renameSync(staging, INBOX_BUILD_DIR));
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(previous, { recursive: true, force: true });
  }
  return true;
}

function ignoring(codes: string[], action: () => void): void {
  try {
    action();
  } catch (error) {
    if (!codes.includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const ifStale = process.argv.includes('--if-stale');
  // `npm run build` (the package's build) must fail with the inbox; `npm start` starts the API without it.
  const failOnError = !ifStale || process.argv.includes('--fail-on-error');
  const started = performance.now();
  try {
    const built = await buildInbox({ ifStale });
    console.log(
      built
        ? `inbox: built web/inbox/dist in ${Math.round(performance.now() - started)} ms`
        : 'inbox: web/inbox/dist is current',
    );
  } catch (error) {
    console.error(
      `inbox: the build failed (${error instanceof Error ? error.message : String(error)}); /inbox answers 503 until it builds`,
    );
    // Before `npm start` a failed build must not keep the API from starting.
    process.exit(failOnError ? 1 : 0);
  }
}
