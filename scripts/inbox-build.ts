// `npm run inbox:build` builds the approval inbox (web/inbox) into web/inbox/dist with Vite; with --if-stale (what
// `npm start` runs first) only when the build is missing or its inputs changed since: a hash of web/inbox's sources
// and package-lock.json is kept beside the build. Tests and the screenshot script call buildInbox too.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const webRoot = join(root, 'web', 'inbox');
export const INBOX_BUILD_DIR = join(webRoot, 'dist');
const STAMP = join(INBOX_BUILD_DIR, '.inputs-sha256');
/** Modules of the server's that the inbox imports too (one rule in one place), so part of what the build reads. */
const SHARED_SOURCES = ['src/domain/visible-text.ts'];

/** A hash of everything the build reads: the app's files (not its build), shared sources, locked dependencies. */
export function inboxInputsHash(): string {
  const hash = createHash('sha256');
  const add = (path: string) => hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (path === INBOX_BUILD_DIR) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) add(path);
    }
  };
  walk(webRoot);
  for (const path of SHARED_SOURCES) add(join(root, path));
  hash.update(readFileSync(join(root, 'package-lock.json')));
  return hash.digest('hex');
}

function builtHash(): string | null {
  try {
    return readFileSync(STAMP, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Builds the inbox (or, with ifStale, only when needed); returns whether it built. */
export async function buildInbox(options: { ifStale?: boolean } = {}): Promise<boolean> {
  const inputs = inboxInputsHash();
  if (options.ifStale && builtHash() === inputs) return false;
  const { build } = await import('vite');
  await build({ configFile: join(webRoot, 'vite.config.ts'), logLevel: 'warn' });
  writeFileSync(STAMP, `${inputs}\n`);
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const ifStale = process.argv.includes('--if-stale');
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
    process.exit(ifStale ? 0 : 1);
  }
}
