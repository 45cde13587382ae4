// The confirmation request a listener set, checked before the turn pauses with it. A listener is code of the
// deployment (a plugin module is plain JavaScript, which no type checks), and its request is stored and served as
// the elicitation: a request that is not an MCP form elicitation would break every client reading it, so it stops
// the turn (FAILED, like a listener that throws) instead of pausing with it.
import { ElicitRequestFormParamsSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationRequest, JsonObject, ToolCall, ToolDefinition } from '../domain/records.js';
import { toStorableJson } from '../domain/text.js';
import { META_TOOL_CALL_KEY, toolCallMeta } from '../domain/gate/messages.js';

export class InvalidElicitationRequestError extends Error {
  constructor(toolId: string, detail: string) {
    super(`The confirmation request a listener set for ${toolId} is not an MCP form elicitation: ${detail}`);
    this.name = 'InvalidElicitationRequestError';
  }
}

/**
 * The request as it is stored: `message` and `requestedSchema` as the listener gave them (validated against the MCP
 * SDK's ElicitRequestFormParamsSchema, whose requestedSchema is flat: primitive properties only), and `_meta` with the
 * listener's own keys (optional in MCP) plus the call under META_TOOL_CALL_KEY, always from the call itself.
 */
export function checkedElicitationRequest(request: unknown, tool: ToolDefinition, call: ToolCall): ElicitationRequest {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new InvalidElicitationRequestError(tool.id, 'expected an object with message and requestedSchema.');
  }
  const given = request as Partial<ElicitationRequest> & { mode?: unknown };
  const parsed = ElicitRequestFormParamsSchema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join('.') || '(the request)';
    throw new InvalidElicitationRequestError(tool.id, `${path}: ${issue.message}`);
  }
  let meta: JsonObject;
  try {
    meta = given._meta === undefined ? {} : (JSON.parse(JSON.stringify(given._meta)) as JsonObject);
  } catch (error) {
    throw new InvalidElicitationRequestError(tool.id, `_meta is not JSON (${(error as Error).message}).`);
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    throw new InvalidElicitationRequestError(tool.id, '_meta: expected an object.');
  }
  return toStorableJson({
    message: given.message as string,
    requestedSchema: JSON.parse(JSON.stringify(given.requestedSchema)) as JsonObject,
    _meta: { ...meta, [META_TOOL_CALL_KEY]: toolCallMeta(tool, call) },
  });
}
