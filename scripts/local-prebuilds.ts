// better-sqlite3 installs with prebuild-install, which downloads a prebuilt binary from GitHub, or else compiles
// SQLite (over a minute of CPU). An install of the packed package (its test, the bench's installed setup) is offered
// the binary this checkout built or downloaded for the same version, Node and platform as prebuild-install's local
// prebuild, as a warm download cache would; without one the install compiles.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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
