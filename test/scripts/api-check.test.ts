// The API breaking-change check (scripts/api-diff.ts, scripts/api-check.ts) against schema/released.graphql.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildASTSchema, parse, print, visit, type GraphQLSchema } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { apiReport, compareApi, loadSchema, RELEASED_SCHEMA_FILE } from '../../scripts/api-diff.js';
import { printSortedSchema, schema } from '../../src/graphql/schema.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const released = loadSchema(RELEASED_SCHEMA_FILE);

/** The current schema with the SDL of one of its object types rewritten by `edit`. */
function editedSchema(typeName: string, edit: (sdl: string) => string): GraphQLSchema {
  const document = visit(parse(printSortedSchema()), {
    ObjectTypeDefinition(node) {
      return node.name.value === typeName ? parse(edit(print(node))).definitions[0] : undefined;
    },
  });
  return buildASTSchema(document);
}

describe('compareApi', () => {
  it('finds the current code compatible with schema/released.graphql', () => {
    const diff = compareApi(released, schema);
    expect(diff.breaking).toEqual([]);
    expect(apiReport(diff).lines[0]).toBe('api: compatible with schema/released.graphql');
  });

  it('reports a removed field as breaking, by name', () => {
    const modified = visit(parse(printSortedSchema()), {
      ObjectTypeDefinition(node) {
        if (node.name.value !== 'Query') return undefined;
        return { ...node, fields: node.fields?.filter((field) => field.name.value !== 'pendingElicitations') };
      },
    });
    const diff = compareApi(released, buildASTSchema(modified));
    expect(diff.breaking).toEqual([{ type: 'FIELD_REMOVED', description: 'Query.pendingElicitations was removed.' }]);
    const report = apiReport(diff);
    expect(report.ok).toBe(false);
    expect(report.lines).toContain('api: BREAKING FIELD_REMOVED: Query.pendingElicitations was removed.');
  });

  it('reports a retyped field as breaking', () => {
    const modified = editedSchema('Turn', (sdl) => sdl.replace(/^(\s+text): String$/m, '$1: Int'));
    const diff = compareApi(released, modified);
    expect(diff.breaking).toEqual([
      { type: 'FIELD_CHANGED_KIND', description: 'Turn.text changed type from String to Int.' },
    ]);
    expect(apiReport(diff).ok).toBe(false);
  });

  it('takes a new optional argument with a default as compatible (a warning), a new required one as breaking', () => {
    const optional = editedSchema('Query', (sdl) =>
      sdl.replace('turn(id: ID!)', 'turn(id: ID!, verbose: Boolean = false)'),
    );
    const withOptional = compareApi(released, optional);
    expect(withOptional.breaking).toEqual([]);
    expect(withOptional.dangerous).toContainEqual({
      type: 'OPTIONAL_ARG_ADDED',
      description: 'An optional arg verbose on Query.turn was added.',
    });
    expect(apiReport(withOptional).ok).toBe(true);

    const required = editedSchema('Query', (sdl) => sdl.replace('turn(id: ID!)', 'turn(id: ID!, verbose: Boolean!)'));
    expect(compareApi(released, required).breaking).toEqual([
      { type: 'REQUIRED_ARG_ADDED', description: 'A required arg verbose on Query.turn was added.' },
    ]);
  });
});

describe('npm run api:check (scripts/api-check.ts as a process)', () => {
  const run = promisify(execFile);
  const scratch = mkdtempSync(join(tmpdir(), 'toolgate-api-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('exits 0 and says the API is compatible with schema/released.graphql', async () => {
    const { stdout } = await run('npx', ['tsx', 'scripts/api-check.ts'], { cwd: ROOT });
    expect(stdout.split('\n')).toContain('api: compatible with schema/released.graphql');
  });

  it('exits 1 with one line per breaking change against a baseline the code breaks', async () => {
    const baseline = join(scratch, 'released.graphql');
    writeFileSync(baseline, printSortedSchema().replace(/^type Viewer \{$/m, 'type Viewer {\n  nickname: String'));
    const failure = await run('npx', ['tsx', 'scripts/api-check.ts', baseline], { cwd: ROOT }).then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toContain('api: BREAKING FIELD_REMOVED: Viewer.nickname was removed.');
  });
});
