// The size limit on a tool call's arguments as the model wrote them. A call over it is refused where the model's
// calls are read, before anything is decided on them or stored: its arguments are dropped, it never reaches the
// listeners, the user or the tool, and its TOOL message tells the model why. The turn goes on.
import type { JsonObject, ToolCall } from '../records.js';
import { toStorableJson } from '../text.js';
import { toolText } from './messages.js';

/** 256 KiB of JSON: far more than any tool needs, far less than what stalls the server when stored and published. */
export const DEFAULT_MAX_TOOL_ARGUMENTS_BYTES = 262_144;

/** The size of a call's arguments: UTF-8 bytes of their (compact) JSON. */
export function argumentsBytes(args: JsonObject): number {
  return Buffer.byteLength(JSON.stringify(args), 'utf8');
}

/**
 * What a call from the model keeps of its arguments: all of them (made storable, src/domain/text.ts) when they are
 * within `maxBytes`; else none, and the refusal that is its TOOL message. `name`: the name the model called it by.
 */
export function admitArguments(
  args: JsonObject,
  name: string,
  maxBytes: number,
): Pick<ToolCall, 'arguments' | 'refusal'> {
  const bytes = argumentsBytes(args);
  if (bytes <= maxBytes) return { arguments: toStorableJson(args) };
  return { arguments: {}, refusal: toolText.argumentsTooLarge(name, bytes, maxBytes) };
}
