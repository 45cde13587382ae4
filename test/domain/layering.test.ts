// The layers, checked on the source: src/domain/ (records, the Store interface, the rules) depends on nothing of
// toolgate's; the loop (src/agent/) and the stores (src/db/) depend on src/domain/ and never on each other, so each
// store reuses the rules without pulling the loop in, and the loop stays free of SQL. Logs and metrics
// (src/observability/) watch the loop and the stores, not the API: they never import src/graphql/ or src/http/.
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

/** The files of a src/ folder, with the src/ folders their relative imports reach (`agent`, `db`, …). */
function reachedFolders(folder: string): { file: string; specifier: string; reaches: string }[] {
  const dir = join(ROOT, 'src', folder);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) => {
      const file = join(dir, name);
      return importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => {
          const target = relative(join(ROOT, 'src'), resolve(dirname(file), specifier));
          const reaches = target.includes('/') ? target.split('/')[0]! : '(src root)';
          return { file: relative(ROOT, file), specifier, reaches };
        });
    });
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
  });

  it('src/db/ (the stores) does not import src/agent/ (the loop)', () => {
    expect(violations('db', ['db', 'domain'])).toEqual([]);
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
});
