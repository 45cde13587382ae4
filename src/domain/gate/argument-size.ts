// The size and depth limits on a tool call's arguments as the model wrote them. A call over either is refused where
// the model's calls are read, before anything is decided on them or stored: its arguments are dropped, it never
// reaches the listeners, the user or the tool, and its TOOL message tells the model why. The turn goes on.
import { nestedDeeperThan } from '../json-depth.js';
import type { JsonObject, ToolCall } from '../records.js';
import { toStorableJson } from '../text.js';
import { toolText } from './messages.js';

/** 256 KiB of JSON: far more than any tool needs, far less than what stalls the server when stored and published. */
export const DEFAULT_MAX_TOOL_ARGUMENTS_BYTES = 262_144;

/**
 * Levels of objects and arrays, the arguments object being the first: far deeper than any tool's schema, and below
 * serde_json's limit (128), so that an MCP server written in Rust reads any call that passes. The functions that walk
 * arguments (storing, comparing, showing them) recurse once per level: a bound keeps them off the stack's end.
 */
export const DEFAULT_MAX_TOOL_ARGUMENTS_DEPTH = 64;

export interface ArgumentLimits {
  /** Largest arguments kept, in UTF-8 bytes of JSON. */
  maxBytes: number;
  /** Deepest nesting kept, in levels of objects and arrays. */
  maxDepth: number;
}

/** The size of a call's arguments: UTF-8 bytes of their (compact) JSON. */
export function argumentsBytes(args: JsonObject): number {
  return Buffer.byteLength(JSON.stringify(args), 'utf8');
}

/**
 * What a call from the model keeps of its arguments: all of them (made storable, src/domain/text.ts) when they are
 * within the limits; else none, and the refusal that is its TOOL message. Depth is checked first, so that nothing
 * recursive sees arguments nested too deeply. `name`: the name the model called it by.
 */
export function admitArguments(
  args: JsonObject,
  name: string,
  limits: ArgumentLimits,
): Pick<ToolCall, 'arguments' | 'refusal'> {
  if (nestedDeeperThan(args, limits.maxDepth)) {
    return { arguments: {}, refusal: toolText.argumentsTooDeep(name, limits.maxDepth) };
  }
  const bytes = argumentsBytes(args);
  if (bytes <= limits.maxBytes) return { arguments: toStorableJson(args) };
  return { arguments: {}, refusal: toolText.argumentsTooLarge(name, bytes, limits.maxBytes) };
}
