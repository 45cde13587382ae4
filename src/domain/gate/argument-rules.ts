// Argument rules (docs/argument-rules.md): a tool's rules are JSON Schemas matched against a call's arguments with
// ajv. This module checks rules (for the config loader and updateAgent) and matches them, compiling each schema once.
import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { linearPatterns } from '../linear-regexp.js';
import type { ArgumentRule, JsonObject } from '../records.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../text.js';

export const ARGUMENT_RULE_MODES = ['ALWAYS', 'NEVER', 'DENY'] as const;
/** Limits for what an administrator writes: rules are evaluated on every call of the tool. */
export const MAX_RULES_PER_TOOL = 50;
export const MAX_RULE_REASON_LENGTH = 1000;

// Strict: an unknown keyword (a typo such as "patern") would otherwise be ignored and the rule match calls it was
// not meant for. No formats are loaded, so "format" is refused rather than ignored. addUsedSchema: false keeps
// schemas with an $id out of the instance's registry, so two rules may use the same $id. Nothing that changes
// data (defaults, coercion, removal) is on: a rule never alters the arguments it looks at. Patterns match in linear
// time (src/domain/linear-regexp.ts): a rule reads what a model wrote, and gate(arguments:) what any user sends.
const ajv = new Ajv2020({
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  addUsedSchema: false,
  logger: false,
  code: linearPatterns(),
});

/** Compiled validators by the schema's JSON text: a turn reads its agent afresh, so object identity would miss. */
const compiledByText = new Map<string, ValidateFunction>();
/** And by schema object, to skip serialising within one read of an agent (an API page lists every tool). */
let compiledByObject = new WeakMap<object, ValidateFunction>();
const CACHE_SIZE = 1000;

/** The schema of a rule could not be compiled: a config error at start, INVALID_INPUT from updateAgent. */
export class RuleSchemaError extends Error {
  override name = 'RuleSchemaError';
}

function validatorFor(schema: JsonObject): ValidateFunction {
  const known = compiledByObject.get(schema);
  if (known) return known;
  const text = JSON.stringify(schema);
  let validate = compiledByText.get(text);
  if (validate) {
    // Most recently used last: the oldest goes first when the cache is full.
    compiledByText.delete(text);
  } else {
    validate = compile(schema);
    if (compiledByText.size >= CACHE_SIZE) evictOldest();
  }
  compiledByText.set(text, validate);
  compiledByObject.set(schema, validate);
  return validate;
}

function compile(schema: JsonObject): ValidateFunction {
  // A copy: ajv keeps the object it compiled (removed again on eviction), and the caller's may be changed later.
  if (schema.$async !== undefined) throw new RuleSchemaError('asynchronous schemas ($async) are not supported');
  const own = structuredClone(schema);
  try {
    return ajv.compile(own);
  } catch (error) {
    throw new RuleSchemaError((error as Error).message);
  }
}

function evictOldest(): void {
  const [text, validate] = compiledByText.entries().next().value!;
  compiledByText.delete(text);
  ajv.removeSchema(validate.schema as object);
  compiledByObject = new WeakMap();
}

/** Whether the rule's schema accepts the arguments; throws RuleSchemaError when the schema cannot be compiled. */
export function ruleMatches(rule: ArgumentRule, args: JsonObject): boolean {
  return validatorFor(rule.match)(args) === true;
}

export interface RuleProblem {
  /** Inside the rules list: `[1, 'match']` is the second rule's schema; `[]` the list itself. */
  path: (string | number)[];
  message: string;
}

/**
 * What is wrong with a tool's rules, each with its path; none when they can be used. Checks what a type system
 * cannot: the schema compiles, a DENY has a reason (the model reads it), the limits. Compiled schemas stay cached.
 */
export function argumentRuleProblems(rules: readonly ArgumentRule[]): RuleProblem[] {
  const problems: RuleProblem[] = [];
  if (rules.length > MAX_RULES_PER_TOOL)
    problems.push({ path: [], message: `at most ${MAX_RULES_PER_TOOL} rules per tool (${rules.length} given)` });
  rules.forEach((rule, i) => {
    if (!(ARGUMENT_RULE_MODES as readonly string[]).includes(rule.mode))
      problems.push({ path: [i, 'mode'], message: `one of ${ARGUMENT_RULE_MODES.join(', ')}` });
    if (typeof rule.match !== 'object' || rule.match === null || Array.isArray(rule.match)) {
      problems.push({ path: [i, 'match'], message: 'a JSON Schema object ({} matches every call)' });
    } else {
      try {
        validatorFor(rule.match);
      } catch (error) {
        problems.push({ path: [i, 'match'], message: `not a usable JSON Schema: ${(error as Error).message}` });
      }
    }
    // Stored the same on every backend: PostgreSQL's jsonb refuses such text (src/domain/text.ts).
    if (!isStorableJson(rule)) problems.push({ path: [i], message: UNSTORABLE_TEXT_MESSAGE });
    if (rule.reason !== undefined && rule.reason.length > MAX_RULE_REASON_LENGTH)
      problems.push({ path: [i, 'reason'], message: `at most ${MAX_RULE_REASON_LENGTH} characters` });
    if (rule.mode === 'DENY' && !rule.reason?.trim())
      problems.push({ path: [i, 'reason'], message: 'a DENY rule needs a reason: the model is told it' });
  });
  return problems;
}

/** Every string of a JSON value, keys too, is storable text (JSON.stringify would hide NULs as \u escapes). */
function isStorableJson(value: unknown): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).every(([key, item]) => isStorableText(key) && isStorableJson(item));
  return true;
}
