import type { ElicitationAction, JsonObject } from './types.js';

export interface ContentProblem {
  /** Path inside `content` of the field at fault; empty for the whole value. */
  path: string[];
  message: string;
}

/**
 * Checks an answer's content against the elicitation's requestedSchema (MCP's restricted schema: a flat
 * object of primitive properties): an object, only known properties, the right types, lengths and ranges,
 * required ones present. CANCEL takes no content.
 */
export function validateContent(schema: JsonObject, action: ElicitationAction, content: unknown, maxBytes: number): ContentProblem | null {
  if (content === null || content === undefined) return null;
  if (action === 'CANCEL') return { path: [], message: 'CANCEL takes no content.' };
  if (typeof content !== 'object' || Array.isArray(content)) return { path: [], message: 'content must be an object.' };
  if (JSON.stringify(content).length > maxBytes) return { path: [], message: `content is larger than ${maxBytes} bytes.` };
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const values = content as Record<string, unknown>;
  for (const [key, value] of Object.entries(values)) {
    const property = properties[key];
    if (!property) return { path: [key], message: `Unknown field "${key}"; expected ${Object.keys(properties).map((k) => `"${k}"`).join(', ') || 'none'}.` };
    const problem = checkValue(property, value);
    if (problem) return { path: [key], message: `${key}: ${problem}` };
  }
  for (const key of (schema.required as string[] | undefined) ?? []) {
    if (!(key in values)) return { path: [key], message: `${key} is required.` };
  }
  return null;
}

function checkValue(property: JsonObject, value: unknown): string | null {
  switch (property.type) {
    case 'string': {
      if (typeof value !== 'string') return 'must be a string.';
      if (typeof property.minLength === 'number' && value.length < property.minLength) return `must be at least ${property.minLength} characters.`;
      if (typeof property.maxLength === 'number' && value.length > property.maxLength) return `must be at most ${property.maxLength} characters.`;
      if (Array.isArray(property.enum) && !property.enum.includes(value)) return `must be one of ${property.enum.join(', ')}.`;
      return null;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number.';
      if (property.type === 'integer' && !Number.isInteger(value)) return 'must be an integer.';
      if (typeof property.minimum === 'number' && value < property.minimum) return `must be at least ${property.minimum}.`;
      if (typeof property.maximum === 'number' && value > property.maximum) return `must be at most ${property.maximum}.`;
      return null;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean.';
    default:
      return 'has a type this server cannot check.';
  }
}
