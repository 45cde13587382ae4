// An install of the packed package, as its test and the bench's installed setup make it: npm and the installed command
// run without the npm_* variables an `npm run` gives its script, and better-sqlite3 (which installs with
// prebuild-install: a prebuilt binary downloaded from GitHub, or else SQLite compiled, over a minute of CPU) is offered
// the binary this checkout built or downloaded for the same version, Node and platform as prebuild-install's local
// prebuild, as a warm download cache would; without one the install compiles.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** This process's environment without npm's npm_* variables, with `extra`. */
export function withoutNpmVariables(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  return { ...env, ...extra };
}

/** npm's environment for an install that may take the checkout's better-sqlite3 binary; {} when there is none. */
export function betterSqlitePrebuilds(root: string, dir: string): Record<string, string> {
  const module = join(root, 'node_modules', 'better-sqlite3');
  if (!existsSync(join(module, 'build', 'Release', 'better_sqlite3.node'))) return {};
  const { version } = JSON.parse(readFileSync(join(module, 'package.json'), 'utf8')) as { version: string };
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  const libc = process.platform === 'linux' && !glibc ? 'musl' : '';
  mkdirSync(dir, { recursive: true });
  const file = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['-czf', join(dir, file), '-C', module, 'build/Release/better_sqlite3.node']);
  return tar.status === 0 ? { npm_config_better_sqlite3_local_prebuilds: dir } : {};
}
