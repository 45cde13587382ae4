import { compileLinearPattern } from '../linear-regexp.js';
import type { ElicitationAction, JsonObject } from '../records.js';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../text.js';

export interface ContentProblem {
  /** Path inside `content` of the field at fault; empty for the whole value. */
  path: string[];
  message: string;
}

/**
 * The size of an answer's content in bytes of JSON (UTF-8). Infinity for a value JSON cannot hold or one
 * nested too deeply to serialise: such content is too large by any limit.
 */
export function contentBytes(content: unknown): number {
  if (content === null || content === undefined) return 0;
  try {
    return Buffer.byteLength(JSON.stringify(content), 'utf8');
  } catch {
    return Infinity;
  }
}

/**
 * Checks an answer's content against the elicitation's requestedSchema, MCP's restricted schema: a flat
 * object whose properties are strings (lengths, format, enum, titled oneOf), numbers or integers (range),
 * booleans, or arrays of enum strings (multi-select, item count). Content must be an object with only
 * known properties of the right types. `required` applies to ACCEPT (the form was submitted); DECLINE may
 * carry partial content or none. CANCEL takes no content. With `maxBytes`, content larger than that is refused
 * too (the API checks size itself first, as INVALID_INPUT, before it looks the elicitation up).
 */
export function validateContent(
  schema: JsonObject,
  action: ElicitationAction,
  content: unknown,
  maxBytes?: number,
): ContentProblem | null {
  const properties = (isObject(schema.properties) ? schema.properties : {}) as Record<string, unknown>;
  const required = Array.isArray(schema.required)
    ? schema.required.filter((k): k is string => typeof k === 'string')
    : [];
  if (content === null || content === undefined) {
    const missing = action === 'ACCEPT' ? required[0] : undefined;
    return missing === undefined ? null : { path: [missing], message: `${missing} is required.` };
  }
  if (action === 'CANCEL') return { path: [], message: 'CANCEL takes no content.' };
  if (!isObject(content)) return { path: [], message: 'content must be an object.' };
  if (maxBytes !== undefined && contentBytes(content) > maxBytes)
    return { path: [], message: `content is larger than ${maxBytes} bytes.` };
  const known = Object.keys(properties);
  for (const [key, value] of Object.entries(content)) {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (!isObject(property)) {
      return {
        path: [key],
        message: `Unknown field "${shown(key)}"; expected ${known.map((k) => `"${k}"`).join(', ') || 'none'}.`,
      };
    }
    const problem = checkValue(property, value);
    if (problem) return { path: [key], message: `${key}: ${problem}` };
  }
  if (action === 'ACCEPT') {
    for (const key of required) {
      if (!Object.hasOwn(content, key)) return { path: [key], message: `${key} is required.` };
    }
  }
  return null;
}

function checkValue(property: Record<string, unknown>, value: unknown): string | null {
  switch (property.type) {
    case 'string':
      return checkString(property, value);
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a number, not ${kindOf(value)}.`;
      if (property.type === 'integer' && !Number.isInteger(value)) return 'must be an integer.';
      if (typeof property.minimum === 'number' && value < property.minimum)
        return `must be at least ${property.minimum}.`;
      if (typeof property.maximum === 'number' && value > property.maximum)
        return `must be at most ${property.maximum}.`;
      if (Array.isArray(property.enum) && !property.enum.includes(value))
        return `must be one of ${property.enum.join(', ')}.`;
      return null;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : `must be a boolean, not ${kindOf(value)}.`;
    case 'array':
      return checkMultiSelect(property, value);
    default:
      return 'has a type this server cannot check.';
  }
}

function checkString(property: Record<string, unknown>, value: unknown): string | null {
  if (typeof value !== 'string') return `must be a string, not ${kindOf(value)}.`;
  if (!isStorableText(value)) return `${UNSTORABLE_TEXT_MESSAGE}.`;
  // Lengths in characters (code points), as a user counts them, not UTF-16 units.
  const length = value.length <= 1 ? value.length : [...value].length;
  if (typeof property.minLength === 'number' && length < property.minLength)
    return `must be at least ${property.minLength} characters.`;
  if (typeof property.maxLength === 'number' && length > property.maxLength)
    return `must be at most ${property.maxLength} characters.`;
  const allowed = choices(property);
  if (allowed && !allowed.includes(value)) return `must be one of ${allowed.map((c) => `"${c}"`).join(', ')}.`;
  if (typeof property.format === 'string' && !FORMATS[property.format]?.(value))
    return `must be a valid ${property.format}.`;
  return null;
}

function checkMultiSelect(property: Record<string, unknown>, value: unknown): string | null {
  if (!Array.isArray(value)) return `must be a list of strings, not ${kindOf(value)}.`;
  const allowed = isObject(property.items) ? choices(property.items) : null;
  if (!allowed) return 'has a type this server cannot check.';
  for (const item of value) {
    if (typeof item !== 'string' || !allowed.includes(item))
      return `may only hold ${allowed.map((c) => `"${c}"`).join(', ')}.`;
  }
  if (new Set(value).size !== value.length) return 'must not repeat a choice.';
  if (typeof property.minItems === 'number' && value.length < property.minItems)
    return `must hold at least ${property.minItems} choices.`;
  if (typeof property.maxItems === 'number' && value.length > property.maxItems)
    return `must hold at most ${property.maxItems} choices.`;
  return null;
}

/** The allowed values of an enum: `enum`, or the `const`s of titled `oneOf` / `anyOf` options; null when free. */
function choices(schema: Record<string, unknown>): string[] | null {
  if (Array.isArray(schema.enum)) return schema.enum.filter((c): c is string => typeof c === 'string');
  const options = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (!options) return null;
  return options.flatMap((o) => (isObject(o) && typeof o.const === 'string' ? [o.const] : []));
}

// In linear time: V8 backtracks on this one quadratically (an answer of 50,000 dots takes seconds).
const EMAIL = compileLinearPattern('^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$');

/** The string formats MCP's restricted schema names. */
const FORMATS: Record<string, (value: string) => boolean> = {
  email: (v) => EMAIL.test(v),
  uri: (v) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(v) && URL.canParse(v),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && isRealDate(v),
  'date-time': (v) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v) &&
    isRealDate(v.slice(0, 10)) &&
    !Number.isNaN(Date.parse(v)),
};

function isRealDate(day: string): boolean {
  const date = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A field name as it goes into a message: bounded, so a hostile key does not fill the answer. */
function shown(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}
