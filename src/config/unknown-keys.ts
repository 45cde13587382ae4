// A key the config's schema does not know, worded for the person who wrote it: the key it most likely misspells
// ("did you mean"), else the keys allowed there. The allowed keys are read from the zod schema itself, so they never
// drift from what is validated.
import type { z } from 'zod';

type Schema = z.core.$ZodType;
type Def = z.core.$ZodTypeDef & Record<string, unknown>;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch']);

/** The schema under wrappers that do not change an object's keys. */
function unwrap(schema: Schema): Schema {
  for (;;) {
    const def = schema._zod.def as Def;
    if (WRAPPERS.has(def.type)) schema = def.innerType as Schema;
    else if (def.type === 'pipe') schema = def.in as Schema;
    else if (def.type === 'lazy') schema = (def.getter as () => Schema)();
    else return schema;
  }
}

/** A union's options that `value` fits but for unknown keys; all of them when it fits none so. */
function fittingOptions(options: readonly Schema[], value: unknown): Schema[] {
  const fitting = options.filter((option) => {
    const result = (option as z.ZodType).safeParse(value);
    return result.success || result.error.issues.every((issue) => issue.code === 'unrecognized_keys');
  });
  return fitting.length > 0 ? fitting : [...options];
}

/** The keys allowed at `path` of the config `value` that `schema` validates (none when no object is there). */
export function allowedKeysAt(schema: Schema, path: readonly PropertyKey[], value: unknown): string[] {
  const def = unwrap(schema)._zod.def as Def;
  if (def.type === 'union')
    return [...new Set(fittingOptions(def.options as Schema[], value).flatMap((o) => allowedKeysAt(o, path, value)))];
  if (def.type === 'intersection')
    return [...allowedKeysAt(def.left as Schema, path, value), ...allowedKeysAt(def.right as Schema, path, value)];
  const shape = def.type === 'object' ? (def.shape as Record<string, Schema>) : undefined;
  if (path.length === 0) return shape ? Object.keys(shape) : [];
  const [head, ...rest] = path;
  const inner = (value as Record<PropertyKey, unknown> | undefined)?.[head!];
  if (shape) return shape[String(head)] ? allowedKeysAt(shape[String(head)]!, rest, inner) : [];
  if (def.type === 'record') return allowedKeysAt(def.valueType as Schema, rest, inner);
  if (def.type === 'array') return allowedKeysAt(def.element as Schema, rest, inner);
  return [];
}

/** Edits from `a` to `b`: insertions, deletions, substitutions and swaps of neighbours (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

/** The allowed key `key` most likely misspells: differing in case only, or by at most a third of its letters. */
export function closestKey(key: string, allowed: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of allowed) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance <= Math.max(1, Math.floor(candidate.length / 3)) && (!best || distance < best.distance))
      best = { key: candidate, distance };
  }
  return best?.key;
}

export function unknownKeyMessage(key: string, allowed: readonly string[]): string {
  const suggestion = closestKey(key, allowed);
  if (suggestion) return `unknown key "${key}": did you mean "${suggestion}"?`;
  return allowed.length > 0 ? `unknown key "${key}" (allowed here: ${allowed.join(', ')})` : `unknown key "${key}"`;
}
