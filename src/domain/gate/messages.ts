// Every text the loop writes for the model or the user. TOOL message texts are docs/design.md's, exactly.
import type { ElicitationAnswer, ElicitationRequest, JsonObject, ToolCall, ToolDefinition } from '../records.js';

export const toolText = {
  denied: (name: string, reason: string) => `Execution of ${name} was denied: ${reason}`,
  declined: (name: string, instructions: string | null) =>
    instructions ? `User declined execution of ${name}: ${instructions}` : `User declined execution of ${name}.`,
  acceptedInstructions: (name: string, instructions: string) => `User instructions for ${name}: ${instructions}`,
  cancelledByUser: (name: string) => `Execution of ${name} was cancelled by the user.`,
  expired: (name: string) => `Execution of ${name} was not confirmed before the request expired.`,
  superseded: (name: string) => `Execution of ${name} was cancelled: the user sent a new message instead.`,
  interrupted: (name: string) => `Execution of ${name} was interrupted; its outcome is unknown.`,
  failed: (name: string, error: string) => `Execution of ${name} failed: ${error}`,
  unknownTool: (name: string) => `Execution of ${name} failed: no such tool is available to this agent.`,
  edited: (name: string, args: JsonObject) =>
    `The user changed the arguments of ${name} before accepting; it ran with these arguments instead: ${JSON.stringify(args)}`,
  argumentsTooLarge: (name: string, bytes: number, maxBytes: number) =>
    `Execution of ${name} was refused: its arguments are ${bytes} bytes, over the limit of ${maxBytes} bytes.`,
  argumentsTooDeep: (name: string, maxDepth: number) =>
    `Execution of ${name} was refused: its arguments are nested more than ${maxDepth} levels deep.`,
  acceptanceUnverified: (name: string) =>
    `Execution of ${name} did not run: the signed record of its approval does not verify (altered, missing, or bound to other arguments).`,
  grantLapsed: (name: string) =>
    `Execution of ${name} did not run: the user's remembered approval of it was revoked or expired before it started. Call it again to ask the user.`,
};

/** The USER message of a gateway's call: which client asked for which tool (its name as the client called it). */
export function gatewayCallText(clientName: string | null, toolName: string): string {
  return `${clientName || 'An MCP client'} called ${toolName}.`;
}

/** `{name}` in a TOOL text: the name the model called the tool by (docs/design.md, "Tool names"). */
export function calledName(call: Pick<ToolCall, 'name' | 'modelName'>): string {
  return call.modelName ?? call.name;
}

/** The instructions of an answer (ACCEPT or DECLINE), when given and not blank. */
export function answerInstructions(answer: ElicitationAnswer | null | undefined): string | null {
  const instructions = answer?.content?.instructions;
  return typeof instructions === 'string' && instructions.trim() ? instructions : null;
}

export const META_TOOL_CALL_KEY = 'toolgate.dev/tool_call';

export const CONFIRMATION_SCHEMA: JsonObject = {
  type: 'object',
  properties: {
    instructions: {
      type: 'string',
      description: 'Optional instructions if you want the agent to do something differently',
    },
  },
};

/**
 * The confirmation request for one call. `message` comes from the trusted definition alone (label and
 * description), never from model output; the arguments travel only in `_meta`.
 */
export function confirmationRequest(tool: ToolDefinition, call: ToolCall): ElicitationRequest {
  return {
    message: `Allow the agent to run "${tool.label}"? ${describe(tool)}`,
    requestedSchema: structuredClone(CONFIRMATION_SCHEMA),
    _meta: { [META_TOOL_CALL_KEY]: toolCallMeta(tool, call) },
  };
}

/** What `_meta` holds under META_TOOL_CALL_KEY: the call as it would run, and the tool's annotations. */
export function toolCallMeta(tool: ToolDefinition, call: ToolCall): JsonObject {
  return { name: call.name, toolId: call.toolId, arguments: call.arguments, annotations: tool.annotations };
}

/** The paused turn's `text`: a prose question from the trusted definitions, for clients that ignore elicitations. */
export function pausedQuestion(tools: ToolDefinition[]): string {
  const lines = tools.map((tool) => `- ${tool.label}: ${describe(tool)}`);
  const ask = tools.length === 1 ? 'this action' : `these ${tools.length} actions`;
  return `I need your confirmation before I continue. Do you allow ${ask}?\n${lines.join('\n')}`;
}

function describe(tool: ToolDefinition): string {
  const text = tool.description.trim() || tool.name;
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

export const turnErrors = {
  maxIterations: (max: number) =>
    `The agent stopped after ${max} model calls without a final answer (maxIterations is ${max}).`,
  model: (message: string) => `The model call failed: ${message}`,
  tooManyRecoveries: (max: number) =>
    `The turn was stopped: the server running it stopped unexpectedly ${max + 1} times, so it was not resumed again (maxRecoveries is ${max}).`,
};
