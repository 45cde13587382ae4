// A build's inputs as one SHA-256: every file under the given paths (a folder walked in name order, a file as it is),
// each with its path relative to the repository, minus the folders named in `skip` (the build's own output). A build
// that keeps this hash beside its output can tell later that nothing it reads has changed since. Paths are relative
// to `root`, the repository unless a caller names another.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
/** The file a build keeps its inputs' hash in, inside its output. */
export const STAMP_FILE = '.inputs-sha256';

export function inputsHash(paths: string[], skip: string[] = [], root = ROOT): string {
  const hash = createHash('sha256');
  const skipped = new Set(skip.map((path) => join(root, path)));
  const add = (path: string) => hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (skipped.has(path)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) add(path);
    }
  };
  for (const path of paths.map((each) => join(root, each))) {
    if (statSync(path).isDirectory()) walk(path);
    else add(path);
  }
  return hash.digest('hex');
}

/** The hash a build wrote into `stamp` when it last passed; null when there is none. */
export function recordedHash(stamp: string): string | null {
  try {
    return readFileSync(stamp, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Writes `hash` into `stamp`, for `recordedHash` to read on the next run. */
export function recordHash(stamp: string, hash: string): void {
  writeFileSync(stamp, `${hash}\n`);
}
