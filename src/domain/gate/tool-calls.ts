// The tool calls of a model's answer as the loop keeps them, read once as the answer arrives and before anything is
// decided on them: the gate, the confirmation request, the tool and every later model call see what is stored.
import { newId } from '../ids.js';
import type { ToolCall, ToolDefinition } from '../records.js';
import { toStorableText } from '../text.js';
import { admitArguments } from './argument-size.js';
import type { ToolNames } from './tool-names.js';

export interface ToolCallContext {
  /** The model-facing names of the agent's tools. */
  names: ToolNames;
  /** The agent's tools by id. */
  tools: ReadonlyMap<string, ToolDefinition>;
  /** The call ids the thread already holds. */
  usedIds: Iterable<string>;
  /** Largest arguments kept, in UTF-8 bytes of JSON; a larger call is refused. */
  maxArgumentsBytes: number;
  /** Deepest arguments kept, in levels of objects and arrays; a deeper call is refused. */
  maxArgumentsDepth: number;
  /** An id for a call whose own is missing or taken. Default: a new `call_` id. */
  newCallId?: () => string;
}

/**
 * The model's calls (as it wrote them: its ids, the model-facing names, the arguments) as stored, in its order:
 * - `id`: the model's, unless it is empty or the thread (or an earlier call of this answer) has it already: call ids
 *   key the TOOL messages and the at-most-once journal, so they must be unique in the thread; some models reuse or
 *   omit them ("call_0", ""), and such a call gets an id of ours, which the model then sees.
 * - `toolId`: the agent's tool of that model-facing name, else `unknown:<name>` (a call the gate answers as unknown).
 * - `name`: the tool's own name; `modelName`: the name the model called it by, where that is not the tool's own
 *   (prefixed, made valid): its TOOL texts use it.
 * - `arguments`: as written, unless over `maxArgumentsBytes` or `maxArgumentsDepth`: then none, and `refusal` is its
 *   TOOL message.
 * Text is made storable on every backend (src/domain/text.ts: no NUL, no unpaired surrogate).
 */
export function normaliseToolCalls(
  calls: readonly Pick<ToolCall, 'id' | 'name' | 'arguments'>[],
  context: ToolCallContext,
): ToolCall[] {
  const usedIds = new Set(context.usedIds);
  const newCallId = context.newCallId ?? (() => newId('call'));
  return calls.map((call) => {
    const toolId = context.names.toolId(call.name) ?? `unknown:${call.name}`;
    const given = call.id ? toStorableText(call.id) : '';
    const id = given && !usedIds.has(given) ? given : newCallId();
    usedIds.add(id);
    const calledAs = toStorableText(call.name);
    const name = context.tools.get(toolId)?.name ?? calledAs;
    const toolCall: ToolCall = {
      id,
      name,
      toolId: toStorableText(toolId),
      ...admitArguments(call.arguments, calledAs, {
        maxBytes: context.maxArgumentsBytes,
        maxDepth: context.maxArgumentsDepth,
      }),
    };
    if (calledAs !== name) toolCall.modelName = calledAs;
    return toolCall;
  });
}
