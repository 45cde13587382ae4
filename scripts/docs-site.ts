// `npm run docs:check`'s build of the docs site (VitePress, which fails on a link into docs/ that leads nowhere): with
// --if-stale only when something the build reads changed since its last build passed, as the inbox's build does.
// The hash of those inputs is written into the build when it passes; VitePress empties the folder when it builds
// again, so a failed build leaves no hash and the next check builds.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { inputsHash, recordedHash, recordHash, ROOT, STAMP_FILE } from './inputs-hash.js';

const OUT = 'docs/.vitepress/dist';
const STAMP = join(ROOT, OUT, STAMP_FILE);
/** The pages and the site's config, the slug rule its config imports, and the locked VitePress. */
const INPUTS = ['docs', 'scripts/docs/slug.ts', 'package-lock.json'];

const inputs = inputsHash(INPUTS, [OUT, 'docs/.vitepress/cache']);
if (process.argv.includes('--if-stale') && recordedHash(STAMP) === inputs) {
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
  recordHash(STAMP, inputs);
}
