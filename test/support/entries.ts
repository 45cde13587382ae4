// How a test starts one of toolgate's entry points as its own node process. Under tsx each child spends about two
// CPU-seconds compiling and resolving the sources before it starts; the crash, CLI and instance tests start hundreds.
// So the global setup bundles each entry point once per run (esbuild), and a child runs the bundle with plain node,
// through test/support/run-bundle.mjs: a CommonJS bundle, so that V8's code cache can spare each child compiling it.
// The packages go into the bundle too: resolving and loading each of their module files cost a child more than
// compiling one file does (docs/contributing.md has the figures). `npm start` itself (tsx on src/cli.ts) keeps tests
// of its own (test/cli/commands.test.ts, test/config/cli.test.ts's `npx tsx`), and the package's test runs the build
// as shipped.
import { buildSync } from 'esbuild';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Inside the package, so that the bundle finds toolgate's package.json (its migrations, the inbox) from there. */
const BUNDLES = join(ROOT, '.scratch', 'test-entries');

/** The entry points tests start as processes, relative to the repository. */
export const ENTRIES = ['src/cli.ts', 'test/fixtures/durability-server.ts'] as const;
export type Entry = (typeof ENTRIES)[number];

/**
 * Left to node: native addons and their optional helpers, and the two large packages the server imports only when
 * they are used (GraphiQL's page, the Unicode names of hidden characters).
 */
const EXTERNAL = [
  'better-sqlite3',
  'pg-native',
  'bufferutil',
  'utf-8-validate',
  '@graphql-yoga/render-graphiql',
  'unicode-name',
];

/**
 * Strict, as the ES modules it is built from are; `import.meta.url` is the bundle's, as it was when the bundle was an
 * ES module itself (src/package-root.ts finds the package from it).
 */
const BANNER = "'use strict'; const __toolgateImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";

const bundleOf = (entry: Entry) => join(BUNDLES, `${entry.replaceAll('/', '_').replace(/\.ts$/, '')}.cjs`);

/** Runs a bundle from V8's code cache (its first child writes the cache). */
const RUN_BUNDLE = join(ROOT, 'test', 'support', 'run-bundle.mjs');

/**
 * Bundles every entry point (the global setup, once per run); a bundle and its map replace the last ones whole, and
 * the code cache of the last bundle goes with it.
 */
export function bundleEntries(): void {
  for (const entry of ENTRIES) {
    const { outputFiles } = buildSync({
      entryPoints: [join(ROOT, entry)],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: EXTERNAL,
      banner: { js: BANNER },
      define: { 'import.meta.url': '__toolgateImportMetaUrl' },
      outfile: bundleOf(entry),
      write: false,
      logLevel: 'error',
      // Sources under their own paths in stack traces, as tsx would show them. A map of its own: node reads a map
      // inline in a bundle of this size slower than the bundle. Without the whitespace node has less to decode and
      // compile in each child, and names stay as written.
      sourcemap: 'linked',
      minifyWhitespace: true,
      sourcesContent: false,
      sourceRoot: relative(BUNDLES, ROOT),
    });
    // The map before the bundle that names it.
    for (const file of outputFiles.sort((a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')))) {
      const partial = `${file.path}.${process.pid}.tmp`;
      mkdirSync(dirname(file.path), { recursive: true });
      writeFileSync(partial, file.contents);
      renameSync(partial, file.path);
    }
    rmSync(`${bundleOf(entry)}.v8-cache`, { force: true });
  }
}

/** The node arguments that run `entry`: its bundle, or the sources under tsx when no bundle was made. */
export function nodeArgsFor(entry: Entry): string[] {
  const bundle = bundleOf(entry);
  return existsSync(bundle) ? [RUN_BUNDLE, bundle] : ['--import', 'tsx', join(ROOT, entry)];
}
