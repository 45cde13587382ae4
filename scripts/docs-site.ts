// `npm run docs:check`'s build of the docs site (VitePress, which fails on a link into docs/ that leads nowhere): with
// --if-changed only when something the build reads changed since its last build passed, as the inbox's build does.
// The hash of those inputs is written into the build when it passes; VitePress empties the folder when it builds
// again, so a failed build leaves no hash and the next check builds.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inputsHash, ROOT } from './inputs-hash.js';

const OUT = 'docs/.vitepress/dist';
const STAMP = join(ROOT, OUT, '.inputs-sha256');
/** The pages and the site's config, the slug rule its config imports, and the locked VitePress. */
const INPUTS = ['docs', 'scripts/docs/slug.ts', 'package-lock.json'];

function lastPassed(): string | null {
  try {
    return readFileSync(STAMP, 'utf8').trim();
  } catch {
    return null;
  }
}

const inputs = inputsHash(INPUTS, [OUT, 'docs/.vitepress/cache']);
if (process.argv.includes('--if-changed') && lastPassed() === inputs) {
  console.log(`docs: the site's inputs are those of its last passing build (${OUT}): not built again`);
} else {
  const built = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'vitepress', 'bin', 'vitepress.js'), 'build', 'docs'],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
  if (built.status !== 0) process.exit(built.status ?? 1);
  writeFileSync(STAMP, `${inputs}\n`);
}
