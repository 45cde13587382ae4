// How a test starts one of toolgate's entry points as its own node process. Under tsx each child spends about two
// CPU-seconds compiling and resolving the sources before it starts; the crash, CLI and instance tests start hundreds.
// So the global setup bundles each entry point once per run (esbuild, the packages left external, as tsx would load
// them), and a child runs the bundle with plain node. `npm start` itself (tsx on src/cli.ts) keeps tests of its own
// (test/cli/commands.test.ts, test/config/cli.test.ts's `npx tsx`).
import { buildSync } from 'esbuild';
import { existsSync, renameSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Inside the package, so that the bundle finds toolgate's package.json (its migrations, the inbox) from there. */
const BUNDLES = join(ROOT, '.scratch', 'test-entries');

/** The entry points tests start as processes, relative to the repository. */
export const ENTRIES = ['src/cli.ts', 'test/fixtures/durability-server.ts'] as const;
export type Entry = (typeof ENTRIES)[number];

const bundleOf = (entry: Entry) => join(BUNDLES, `${entry.replaceAll('/', '_').replace(/\.ts$/, '')}.mjs`);

/** Bundles every entry point (the global setup, once per run); a bundle replaces the last one whole. */
export function bundleEntries(): void {
  for (const entry of ENTRIES) {
    const out = bundleOf(entry);
    const partial = `${out}.${process.pid}.tmp`;
    buildSync({
      entryPoints: [join(ROOT, entry)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outfile: partial,
      logLevel: 'error',
      // Sources under their own paths in stack traces, as tsx would show them.
      sourcemap: 'inline',
      sourceRoot: relative(BUNDLES, ROOT),
    });
    renameSync(partial, out);
  }
}

/** The node arguments that run `entry`: its bundle, or the sources under tsx when no bundle was made. */
export function nodeArgsFor(entry: Entry): string[] {
  const bundle = bundleOf(entry);
  return existsSync(bundle) ? ['--enable-source-maps', bundle] : ['--import', 'tsx', join(ROOT, entry)];
}
