// Runs one of the suite's bundles of an entry point (test/support/entries.ts) as `node <bundle> …` would, compiled
// from V8's code cache: node 20 keeps no compile cache of its own, and compiling the bundle was much of a child's
// start. The first child of a run without a usable cache writes one once it has started (its functions compiled by
// then included); the others read it. Stack traces are mapped to the sources through the bundle's source map with
// node's own SourceMap, read at the first trace (node's --enable-source-maps does not see code compiled by vm).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname, resolve } from 'node:path';
import { constants, Script } from 'node:vm';

const bundle = resolve(process.argv[2]);
process.argv.splice(1, 2, bundle);
const cacheFile = `${bundle}.v8-cache`;

let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
// The wrapper on a line of its own: the bundle's lines move down by one, its columns stay. A hashbang line (src/cli.ts
// has one) is emptied: it is valid only at the start of a file.
const WRAPPER_LINES = 1;
const source = readFileSync(bundle, 'utf8').replace(/^#!.*/, '');
const script = new Script(`(function (exports, require, module, __filename, __dirname) {\n${source}\n})`, {
  filename: bundle,
  cachedData,
  importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});

let sourceMap;
function original(line, column) {
  if (sourceMap === undefined) {
    try {
      sourceMap = new Module.SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
    } catch {
      sourceMap = null;
    }
  }
  const entry = sourceMap?.findEntry(line - 1 - WRAPPER_LINES, column - 1);
  return entry?.originalSource
    ? `${resolve(dirname(bundle), entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`
    : undefined;
}
Error.prepareStackTrace = (error, frames) => {
  let header;
  try {
    header = String(error);
  } catch {
    header = 'Error';
  }
  const lines = frames.map((frame) => {
    const at = frame.getFileName() === bundle && original(frame.getLineNumber(), frame.getColumnNumber());
    if (!at) return `    at ${frame}`;
    const name = frame.getFunctionName() ?? frame.getMethodName();
    return name ? `    at ${name} (${at})` : `    at ${at}`;
  });
  return [header, ...lines].join('\n');
};

const module_ = new Module(bundle);
module_.filename = bundle;
script
  .runInThisContext()
  .call(module_.exports, module_.exports, Module.createRequire(bundle), module_, bundle, dirname(bundle));

if (cachedData === undefined || script.cachedDataRejected) {
  setTimeout(() => {
    const partial = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(partial, script.createCachedData());
    renameSync(partial, cacheFile);
  }, 1000).unref();
}
