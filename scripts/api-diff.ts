// The API breaking-change check: the released schema against the current one, with graphql-js's own rules.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSchema, findBreakingChanges, findDangerousChanges, type GraphQLSchema } from 'graphql';

/** The API of the last release: at a release, schema.graphql is copied here. */
export const RELEASED_SCHEMA_FILE = fileURLToPath(new URL('../schema/released.graphql', import.meta.url));

export interface ApiChange {
  type: string;
  description: string;
}

export interface ApiDiff {
  /** Changes that break a client written against the released API (removed fields, changed types, …). */
  breaking: ApiChange[];
  /** Changes that may change what such a client sees (new enum values, new optional arguments, …); warnings only. */
  dangerous: ApiChange[];
}

/** What changed from `released` to `current`, by graphql-js's findBreakingChanges and findDangerousChanges. */
export function compareApi(released: GraphQLSchema, current: GraphQLSchema): ApiDiff {
  const plain = ({ type, description }: ApiChange): ApiChange => ({ type, description });
  return {
    breaking: findBreakingChanges(released, current).map(plain),
    dangerous: findDangerousChanges(released, current).map(plain),
  };
}

/** The lines `npm run api:check` prints for a diff, and whether the API is compatible. */
export function apiReport(diff: ApiDiff, baseline = 'schema/released.graphql'): { ok: boolean; lines: string[] } {
  const warnings = diff.dangerous.map((c) => `api: warning ${c.type}: ${c.description}`);
  if (diff.breaking.length === 0) return { ok: true, lines: [`api: compatible with ${baseline}`, ...warnings] };
  return {
    ok: false,
    lines: [
      ...diff.breaking.map((c) => `api: BREAKING ${c.type}: ${c.description}`),
      ...warnings,
      `api: ${diff.breaking.length} breaking change(s) against ${baseline}`,
    ],
  };
}

/** A schema from SDL on disk (the released API). Throws when the file is missing or does not build. */
export function loadSchema(file: string): GraphQLSchema {
  return buildSchema(readFileSync(file, 'utf8'));
}
