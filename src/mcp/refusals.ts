// The MCP words for the gateway's refusals: JSON-RPC errors a client shows or logs. An unknown tool is InvalidParams
// "Unknown tool: <name>", as the MCP spec has it; a bad idempotency key names the _meta key it came in.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolRefusal } from '../app/call-tool.js';
import { IDEMPOTENCY_META_KEY } from '../domain/gateway.js';
import { textProblemWords } from '../domain/text-problem.js';

/**
 * A JSON-RPC error as the client gets it: the SDK sends an error's `code` and `message` (McpError would prefix the
 * message with "MCP error <code>:", which the client's McpError adds again).
 */
export class GatewayError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** The error's `data`, sent with it when given. */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

/**
 * Who handles a request: where its faults go, and who keeps its handling until it ends (src/http/mcp-handlings.ts:
 * its response can go before it ends).
 */
export interface RequestHandler {
  onError: (error: unknown) => void;
  track?: (handling: Promise<unknown>) => void;
}

/**
 * Runs a handler's work; a fault's own words (a database error, a stack) are not the client's: they go to `onError`,
 * and the client is told "Internal error". A refusal (GatewayError, or the SDK's McpError) passes as it is.
 */
export function hidingFaults<T>(run: () => Promise<T>, handler: RequestHandler): Promise<T> {
  const handling = run().catch((error: unknown) => {
    if (error instanceof GatewayError || error instanceof McpError) throw error;
    handler.onError(error);
    throw new GatewayError(ErrorCode.InternalError, 'Internal error');
  });
  handler.track?.(handling);
  return handling;
}

export function unknownGateway(agentId: string): GatewayError {
  return new GatewayError(ErrorCode.InvalidRequest, `No gateway agent "${agentId}"`);
}

/** A `_meta` idempotency key that is a number, boolean, object or array: a key is a name. */
export function idempotencyKeyNotText(): GatewayError {
  return new GatewayError(ErrorCode.InvalidParams, `_meta "${IDEMPOTENCY_META_KEY}" is not a string`);
}

export function callToolError(refusal: CallToolRefusal, call: { name: string; agentId: string }): GatewayError {
  switch (refusal.code) {
    case 'NOT_FOUND':
      return refusal.of === 'tool'
        ? new GatewayError(ErrorCode.InvalidParams, `Unknown tool: ${call.name}`)
        : unknownGateway(call.agentId);
    case 'INVALID_INPUT':
      return new GatewayError(ErrorCode.InvalidParams, `_meta "${IDEMPOTENCY_META_KEY}" ${textProblemWords(refusal)}`);
    case 'IDEMPOTENCY_KEY_REUSED':
      return new GatewayError(
        ErrorCode.InvalidParams,
        `_meta "${IDEMPOTENCY_META_KEY}" was already used for another call; send a new key for a new call`,
      );
  }
}
