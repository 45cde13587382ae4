// Edited arguments (edit, then accept) are checked against the tool's trusted inputSchema before they are recorded:
// what the user typed must be a call the tool accepts, and a problem names the field at fault.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { canonicalJson } from '../canonical-json.js';
import { linearPatterns } from '../linear-regexp.js';
import type { JsonObject } from '../records.js';
import { toStorableJson, UNSTORABLE_TEXT_MESSAGE } from '../text.js';
import type { ContentProblem } from './content.js';

// Tool schemas come from MCP servers of every kind: unknown keywords and formats are not errors here (the MCP SDK
// validates the same way); the schema is the server's, the arguments are what is checked.
// addUsedSchema: false: a schema's `$id` is not registered, so two versions of a tool's schema with one `$id` (a server
// upgrade) both compile. Patterns match in linear time (src/domain/linear-regexp.ts): the schema is an MCP server's,
// the strings are what a user typed; a schema whose pattern cannot be matched so does not compile (edits refused).
const ajv = new Ajv({
  strict: false,
  validateSchema: false,
  validateFormats: false,
  allErrors: false,
  addUsedSchema: false,
  code: linearPatterns(),
});

/** Compiled validators by schema (canonical JSON), with the schema object ajv caches them under. */
const compiled = new Map<string, { schema: JsonObject; validate: ValidateFunction }>();
const MAX_COMPILED = 500;

/** The first problem of `args` against `schema`, or null when the tool accepts them. */
export function validateArguments(schema: JsonObject, args: unknown): ContentProblem | null {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { path: [], message: 'arguments must be a JSON object.' };
  }
  // Refused on every backend alike (src/domain/text.ts), before the schema looks at them.
  if (canonicalJson(toStorableJson(args)) !== canonicalJson(args)) {
    return { path: [], message: `arguments ${UNSTORABLE_TEXT_MESSAGE}.` };
  }
  const validate = validatorFor(schema);
  // Never accepted unchecked: an edit the server cannot check is refused (the model's own arguments can still run).
  if (!validate) {
    return { path: [], message: "arguments cannot be edited: the tool's input schema cannot be used to check them." };
  }
  if (validate(args)) return null;
  return problemOf(validate.errors?.[0]);
}

function validatorFor(schema: JsonObject): ValidateFunction | null {
  const key = canonicalJson(schema);
  const known = compiled.get(key);
  if (known) return known.validate;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch {
    return null;
  }
  if (compiled.size >= MAX_COMPILED) {
    const [oldest, entry] = compiled.entries().next().value!;
    compiled.delete(oldest);
    ajv.removeSchema(entry.schema); // ajv's own cache holds it too
  }
  compiled.set(key, { schema, validate });
  return validate;
}

function problemOf(error: ErrorObject | undefined): ContentProblem {
  if (!error) return { path: [], message: 'arguments do not match the tool’s input schema.' };
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  // A missing property is named by its own path, not its parent's.
  if (error.keyword === 'required') path.push(String((error.params as { missingProperty: string }).missingProperty));
  if (error.keyword === 'additionalProperties') {
    path.push(String((error.params as { additionalProperty: string }).additionalProperty));
    return { path, message: `arguments.${path.join('.')} is not a parameter of this tool.` };
  }
  const where = path.length ? `arguments.${path.join('.')}` : 'arguments';
  return { path, message: error.keyword === 'required' ? `${where} is required.` : `${where} ${error.message}.` };
}
