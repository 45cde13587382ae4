// tools/call through the gateway: the call starts (or is found by its idempotency key) in callTool, and when it
// waits for a person the request stays open until the result is known, however it is answered: by this client's
// elicitation handler, the inbox or the API. A client that cancels or goes away with an idempotency key stops waiting
// only: the confirmation stays pending, and the same key gets the call back later; without one, the call is withdrawn
// (withdrawal.ts).
import type { CallToolRequest, CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { markCallerWaiting } from '../app/caller-presence.js';
import { awaitCallResult, callTool, type CallResult, type CallToolInput, type GatewayCall } from '../app/call-tool.js';
import type { AppDeps } from '../app/deps.js';
import type { Viewer } from '../app/viewer.js';
import { IDEMPOTENCY_META_KEY } from '../domain/gateway.js';
import type { JsonObject } from '../domain/records.js';
import { waitingCallRelay } from '../tools/call-relay.js';
import { askClient, type RequestExtra } from './elicitation-relay.js';
import { callToolError, GatewayError, idempotencyKeyNotText, type RequestHandler } from './refusals.js';
import { waitingProgress } from './waiting-progress.js';
import { withdrawalOf, withdrawCall } from './withdrawal.js';

/** `track` (RequestHandler): each request's handling, which can outlast its response. */
export interface GatewaySession extends RequestHandler {
  app: AppDeps;
  viewer: Viewer;
  /** The gateway agent this session calls tools of. */
  agentId: string;
  /** Unexpected faults; the client is told "Internal error" only. */
  onError: (error: unknown) => void;
  /** Milliseconds between progress notifications while a call waits; default: awaitCallResult's. */
  progressIntervalMs?: number;
  /** Milliseconds a task's client is asked to wait between polls (tasks.ts); default DEFAULT_TASK_POLL_INTERVAL_MS. */
  taskPollIntervalMs?: number;
  /** Whether the server is closing: a call whose request it ends is not withdrawn (withdrawal.ts). */
  serverClosing?: () => boolean;
  /** Resolves once what was committed before the call is on disk (the store's flush: on-disk.ts). */
  flush: () => Promise<void>;
}

export interface ToolCallRequest {
  params: CallToolRequest['params'];
  /** The client's clientInfo.name, shown with the call. */
  clientName: string | null;
  /** Whether the client declared elicitation in form mode: it is then asked the call's confirmations itself. */
  canElicit: boolean;
}

export async function callGatewayTool(
  session: GatewaySession,
  request: ToolCallRequest,
  extra: RequestExtra,
): Promise<CallToolResult> {
  const outcome = await callTool(session.app, session.viewer, callToolInput(session, request));
  if (!outcome.ok) throw callToolError(outcome, { name: request.params.name, agentId: session.agentId });
  const result = outcome.call.result ?? (await waitForResult(session, request, outcome.call, extra));
  return result as CallToolResult;
}

/** The use case's input for a tools/call request: its tool, arguments, idempotency key and client. */
export function callToolInput(session: GatewaySession, request: ToolCallRequest): CallToolInput {
  const { name, arguments: args, _meta } = request.params;
  const key = idempotencyKeyOf(_meta);
  return {
    agentId: session.agentId,
    name,
    arguments: (args ?? {}) as JsonObject,
    ...(key !== undefined && { idempotencyKey: key }),
    clientName: request.clientName,
  };
}

/**
 * The call's idempotency key, or undefined when it has none (absent or null). A key that is not a string is refused
 * as an empty one is: ignored, a retry with it would start a second call, and each would run.
 */
function idempotencyKeyOf(meta: CallToolRequest['params']['_meta']): string | undefined {
  const key: unknown = meta?.[IDEMPOTENCY_META_KEY];
  if (key === undefined || key === null) return undefined;
  if (typeof key !== 'string') throw idempotencyKeyNotText();
  return key;
}

async function waitForResult(
  session: GatewaySession,
  request: ToolCallRequest,
  call: GatewayCall,
  extra: RequestExtra,
): Promise<CallResult> {
  const { app, viewer, onError } = session;
  waitingCallRelay(call.turn.id, { paused: call.waitingOn.length > 0 });
  const answered = new AbortController();
  const presence = markCallerWaiting(app, viewer, call.turn.id, { onError });
  if (request.canElicit) {
    askClient({ app, viewer, extra, signal: answered.signal, onError, flush: session.flush }, call.waitingOn);
  }
  let done: GatewayCall | null = null;
  try {
    done = await awaitCallResult(app, viewer, call.turn.id, {
      signal: extra.signal,
      tickMs: session.progressIntervalMs,
      onWait: waitingProgress(request.params._meta?.progressToken, (params) =>
        extra.sendNotification({ method: 'notifications/progress', params }),
      ),
    });
    if (done?.result) return done.result;
    await withdrawIfGone(session, request, call, extra.signal);
    // Aborted (the SDK then sends no response), or the call vanished while it waited.
    throw new GatewayError(ErrorCode.InternalError, 'The call stopped waiting without a result');
  } finally {
    answered.abort();
    // Not awaited: the result goes out without waiting for the mark to clear. A call with its result has no request
    // left pending, so no mark to clear.
    void presence.stop({ clear: !done?.result && !session.serverClosing?.() });
  }
}

/** A caller that stopped waiting and cannot come back (no idempotency key): its call is withdrawn. */
async function withdrawIfGone(
  session: GatewaySession,
  request: ToolCallRequest,
  call: GatewayCall,
  signal: AbortSignal,
): Promise<void> {
  const reason = withdrawalOf(signal, session.serverClosing?.() ?? false);
  if (reason === null || callToolInput(session, request).idempotencyKey !== undefined) return;
  const { app, viewer, agentId } = session;
  await withdrawCall({ app, viewer, agentId, turnId: call.turn.id }, reason);
}
