// The layers, checked on the source: src/domain/ (records, the Store interface, the rules, the gate's rules in
// domain/gate/) depends on nothing of toolgate's; the loop (src/agent/) and the stores (src/db/) depend on src/domain/
// and never on each other, so each store reuses the rules without pulling the loop in, and the loop stays free of SQL.
// Below the loop, the config and the tools never import it. Above it, the use cases (src/app/) decide who may do what
// and call the loop through its runner and the store; the GraphQL API (src/graphql/) reaches them through src/app/
// only, so another entrance gets the same rules (docs/architecture.md). Logs and metrics (src/observability/) watch
// the loop and the stores, not the API: they never import src/graphql/ or src/http/. No folder's files import each
// other in a cycle, and the folders of src/ do not either.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every module specifier a TypeScript source imports or re-exports, statically or dynamically. */
function importsOf(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** The relative imports of the files of a src/ folder, each with the source file it names (relative to src/). */
function relativeImports(folder: string): { file: string; specifier: string; target: string }[] {
  const dir = join(ROOT, 'src', folder);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) => {
      const file = join(dir, name);
      return importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => ({
          file: relative(join(ROOT, 'src'), file),
          specifier,
          // A `.js` specifier names its `.ts` source.
          target: relative(join(ROOT, 'src'), resolve(dirname(file), specifier)).replace(/\.js$/, '.ts'),
        }));
    });
}

/** The files of a src/ folder, with the src/ folders their relative imports reach (`agent`, `db`, …). */
function reachedFolders(folder: string): { file: string; specifier: string; target: string; reaches: string }[] {
  return relativeImports(folder).map((found) => ({
    ...found,
    reaches: found.target.includes('/') ? found.target.split('/')[0]! : '(src root)',
  }));
}

/** Every cycle of a graph of imports, each as the files around it, once per file it starts from. */
function cyclesOf(imports: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const walk = (file: string, path: string[]) => {
    if (path.includes(file)) {
      if (path[0] === file) cycles.push([...path, file]);
      return;
    }
    for (const next of imports.get(file) ?? []) walk(next, [...path, file]);
  };
  for (const file of imports.keys()) walk(file, []);
  return cycles;
}

/** The import cycles among the files of a src/ folder. */
function importCycles(folder: string): string[][] {
  const imports = new Map<string, string[]>();
  for (const { file, target } of relativeImports(folder)) imports.set(file, [...(imports.get(file) ?? []), target]);
  return cyclesOf(imports);
}

/** The folders of src/ (its files at the root, each by its name) and the other folders each one's imports reach. */
function folderGraph(): Map<string, string[]> {
  const entries = readdirSync(join(ROOT, 'src'), { withFileTypes: true });
  const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const graph = new Map<string, string[]>();
  for (const folder of folders) {
    const reached = reachedFolders(folder).map(({ target }) => (target.includes('/') ? target.split('/')[0]! : target));
    graph.set(folder, [...new Set(reached)].filter((other) => other !== folder).sort());
  }
  for (const entry of entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))) {
    const source = readFileSync(join(ROOT, 'src', entry.name), 'utf8');
    const reached = importsOf(source)
      .filter((specifier) => specifier.startsWith('./'))
      .map((specifier) => specifier.slice(2).split('/')[0]!.replace(/\.js$/, '.ts'));
    graph.set(entry.name, [...new Set(reached)].sort());
  }
  return graph;
}

function violations(folder: string, allowed: string[]): string[] {
  return reachedFolders(folder)
    .filter(({ reaches }) => !allowed.includes(reaches))
    .map(({ file, specifier }) => `${file} imports ${specifier}`);
}

describe('layering', () => {
  it('finds the imports it checks (multi-line, type-only, re-exports, dynamic)', () => {
    const source =
      `import {\n  a,\n  type B,\n} from '../domain/records.js';\nimport type { C } from "../db/store.js";\n` +
      `export { d } from './d.js';\nimport './side-effect.js';\nconst e = await import('../agent/e.js');\n// from '../not/an-import.js'\n`;
    expect(importsOf(source)).toEqual([
      '../domain/records.js',
      '../db/store.js',
      './d.js',
      './side-effect.js',
      '../agent/e.js',
    ]);
    expect(reachedFolders('db').some(({ reaches }) => reaches === 'domain')).toBe(true);
    expect(reachedFolders('agent').some(({ reaches }) => reaches === 'domain')).toBe(true);
    expect(reachedFolders('graphql').some(({ reaches }) => reaches === 'app')).toBe(true);
    expect(reachedFolders('app').some(({ reaches }) => reaches === 'agent')).toBe(true);
    const graph = folderGraph();
    expect(graph.get('graphql')).toContain('app');
    expect(graph.get('server.ts')).toContain('graphql');
    expect(graph.get('cli')).toContain('server.ts');
  });

  it('finds import cycles, long ones too, and nothing in a graph without one', () => {
    const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    expect(cyclesOf(graph({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([
      ['a', 'b', 'c', 'a'],
      ['b', 'c', 'a', 'b'],
      ['c', 'a', 'b', 'c'],
    ]);
    expect(cyclesOf(graph({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
    expect(relativeImports('graphql').some(({ target }) => target === 'graphql/refs.ts')).toBe(true);
  });

  it('src/db/ (the stores) does not import src/agent/ (the loop)', () => {
    // Besides the domain, only where the package's files are (its migrations): a leaf that imports nothing of ours.
    const leaf = 'package-root.ts';
    expect(
      violations('db', ['db', 'domain']).filter((found) => !found.endsWith(`imports ../${leaf.replace('.ts', '.js')}`)),
    ).toEqual([]);
    expect(
      importsOf(readFileSync(join(ROOT, 'src', leaf), 'utf8')).filter((specifier) => specifier.startsWith('.')),
    ).toEqual([]);
  });

  it('src/agent/ (the loop) does not import src/db/: it knows the Store interface of src/domain/ only', () => {
    expect(violations('agent', ['agent', 'domain', 'models', 'tools'])).toEqual([]);
  });

  it('src/observability/ (logs, metrics, health) does not import the API (src/graphql/, src/http/)', () => {
    const api = reachedFolders('observability').filter(({ reaches }) => reaches === 'graphql' || reaches === 'http');
    expect(api.map(({ file, specifier }) => `${file} imports ${specifier}`)).toEqual([]);
  });

  it('src/domain/ imports nothing of toolgate outside itself', () => {
    expect(violations('domain', ['domain'])).toEqual([]);
  });

  it('below the loop, src/config/ and src/tools/ do not import src/agent/', () => {
    const up = ['config', 'tools'].flatMap((folder) =>
      reachedFolders(folder).filter(({ reaches }) => reaches === 'agent'),
    );
    expect(up.map(({ file, specifier }) => `${file} imports ${specifier}`)).toEqual([]);
  });

  it('src/app/ (the use cases) reaches the loop and the domain, and no entrance: no GraphQL, HTTP or MCP', () => {
    expect(violations('app', ['app', 'agent', 'domain', 'tools'])).toEqual([]);
    // Of src/agent/, the runner only: the loop's facade. The gate's rules are the domain's.
    const loop = reachedFolders('app').filter(
      ({ reaches, target }) => reaches === 'agent' && target !== 'agent/runner.ts',
    );
    expect(loop.map(({ file, specifier }) => `${file} imports ${specifier}`)).toEqual([]);
    // Of src/tools/, the definition of a tool only: not the tool sources (the MCP client among them).
    const tools = reachedFolders('app').filter(
      ({ reaches, target }) => reaches === 'tools' && target !== 'tools/tool.ts',
    );
    expect(tools.map(({ file, specifier }) => `${file} imports ${specifier}`)).toEqual([]);
  });

  it('src/graphql/ (the API) reaches the loop and the stores through src/app/ only', () => {
    // At the root, src/services.ts only: the type of what the server hands the API. src/events/: subscriptions.
    expect(violations('graphql', ['graphql', 'app', 'domain', 'events', '(src root)'])).toEqual([]);
    const root = reachedFolders('graphql').filter(
      ({ reaches, target }) => reaches === '(src root)' && target !== 'services.ts',
    );
    expect(root.map(({ file, specifier }) => `${file} imports ${specifier}`)).toEqual([]);
  });

  it('src/mcp/ (the MCP entrance) reaches the loop and the stores through src/app/ only', () => {
    const below = reachedFolders('mcp').filter(({ reaches }) => ['agent', 'db', 'graphql', 'http'].includes(reaches));
    expect(below.map(({ file, specifier }) => `${file} imports ${specifier}`)).toEqual([]);
  });

  it('the loop, the use cases, the deliverer and observability name the Store roles they use, never the whole Store', () => {
    const wholeStore = ['agent', 'app', 'webhooks', 'observability'].flatMap((folder) => {
      const dir = join(ROOT, 'src', folder);
      return readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.ts'))
        .filter((name) => {
          const source = readFileSync(join(dir, name), 'utf8');
          return [...source.matchAll(/import\s[^;]*?\{([^}]*)\}\s*from\s*['"][./]*domain\/store\.js['"]/g)].some((m) =>
            /(^|[\s,])(type\s+)?Store(\s*[,}]|\s*$)/.test(m[1]!),
          );
        })
        .map((name) => `src/${folder}/${name}`);
    });
    expect(wholeStore).toEqual([]);
  });

  it('src/graphql/ has no import cycle: its type modules name each other through refs.ts', () => {
    expect(importCycles('graphql')).toEqual([]);
  });

  it("no folder of src/ has an import cycle among its files (events/: the pub/sub holds its topics' payloads)", () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(folders.map(({ name }) => name)).toContain('events');
    expect(folders.flatMap(({ name }) => importCycles(name))).toEqual([]);
  });

  it('the folders of src/ import each other in no loop', () => {
    expect(cyclesOf(folderGraph())).toEqual([]);
  });
});
