// The MCP gateway for a 2026-07-28 client: one server per request, no session, the same use cases as the 2025
// session's (gateway-server.ts). A call that waits on a confirmation the caller may give is answered `input_required`
// with the confirmation's form and a signed requestState that names the call (request-state.ts); the client's retry
// brings the answer, which goes through answerElicitation like the inbox's, so the ledger accepts it at most once on
// any instance, before or after a restart, and a replayed retry finds the result and runs nothing. A call that waits on
// someone else (approvers, the inbox) is held for up to `waitMs`, then answered `input_required` with a state only:
// the client comes back with it, and gets the result once the call is decided. Resources, prompts and completions
// are the 2025 session's handler bodies (offer-handlers.ts); an upstream tool's progress and log messages reach the
// call's own stream.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Server,
  type CallToolRequest,
  type CallToolResult,
  type ClientCapabilities,
  type CompleteResult,
  type GetPromptResult,
  type Implementation,
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  type InputRequests,
  type InputRequiredResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type ServerCapabilities,
  type ServerContext,
  type Tool as McpTool,
} from '@modelcontextprotocol/server';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { answerElicitation } from '../app/answer-elicitation.js';
import { answerableByCaller } from '../app/reads.js';
import { awaitCallResult, callTool, gatewayCall, listGatewayTools, type GatewayTool } from '../app/call-tool.js';
import type { ElicitationAction, ElicitationRecord, JsonObject } from '../domain/records.js';
import { relayingCalls, waitingCallRelay, type CallRelay } from '../tools/call-relay.js';
import { linkedSignal } from './linked-signal.js';
import { offerHandlers, type OfferCaller } from './offer-handlers.js';
import { onDisk } from './on-disk.js';
import { callToolError, GatewayError, hidingFaults, unknownGateway } from './refusals.js';
import type { CallState, RequestStateSigner } from './request-state.js';
import { callToolInput, type GatewaySession } from './tool-call.js';
import { upstreamNotifications, type NotifyClient } from './upstream-relay.js';
import { waitingProgress } from './waiting-progress.js';

export interface StatelessGatewayOptions extends GatewaySession {
  requestState: RequestStateSigner;
  /** Milliseconds one request waits on others' answers before it is answered `input_required` with a state only. */
  waitMs: number;
  /** A refused requestState, with the reason the client is not told. */
  onRefusedState?: (reason: string) => void;
  /**
   * Aborted when the server begins to close: a waiting call stops waiting and is answered as at the end of `waitMs`,
   * with a requestState to come back with (to another instance, or to this one once it is back).
   */
  closing?: AbortSignal;
}

/** What a client is told of any refused state: whatever the reason, the same words (the SDK's own). */
export const INVALID_STATE = 'Invalid or expired requestState';
const REQUEST_ENDED = 'The request ended while the call waited; come back with its requestState or idempotency key';

/**
 * Declared whatever the upstream servers offer: with none, the lists are empty. List changes and resource updates go
 * out on `subscriptions/listen` streams, which the SDK's handler serves, each with its gateway's announcements
 * (listen-bus.ts); the stream's filter is narrowed to what is declared here.
 */
const STATELESS_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
} satisfies ServerCapabilities;

/** Resources, templates, prompts and completions, with the 2025 session's handler bodies (offer-handlers.ts). */
function serveOffers(server: Server, caller: OfferCaller): void {
  const offers = offerHandlers(caller);
  server.setRequestHandler('resources/list', async () => (await offers.listResources()) as ListResourcesResult);
  server.setRequestHandler(
    'resources/templates/list',
    async () => (await offers.listResourceTemplates()) as ListResourceTemplatesResult,
  );
  server.setRequestHandler(
    'resources/read',
    async ({ params }) => (await offers.readResource(params.uri)) as ReadResourceResult,
  );
  server.setRequestHandler('prompts/list', async () => (await offers.listPrompts()) as ListPromptsResult);
  server.setRequestHandler(
    'prompts/get',
    async ({ params }) => (await offers.getPrompt(params.name, params.arguments)) as GetPromptResult,
  );
  server.setRequestHandler(
    'completion/complete',
    async ({ params }) => (await offers.complete(params as JsonObject)) as CompleteResult,
  );
}

const ACTIONS: Record<string, ElicitationAction> = { accept: 'ACCEPT', decline: 'DECLINE', cancel: 'CANCEL' };

export function createStatelessGatewayServer(options: StatelessGatewayOptions): Server {
  const server = new Server({ name: 'toolgate', version: '0.1.0' }, { capabilities: STATELESS_CAPABILITIES });
  const guarded = <T>(run: () => Promise<T>): Promise<T> => hidingFaults(run, options);
  server.setRequestHandler('tools/list', () =>
    guarded(async () => {
      const tools = await listGatewayTools(options.app, options.agentId);
      if (!tools) throw unknownGateway(options.agentId);
      return { tools: tools.map(mcpTool) };
    }),
  );
  server.setRequestHandler('tools/call', (request, ctx) =>
    // What the upstream server sends while the call runs in this process comes to this request.
    guarded(async () => {
      const { relay, sent } = relayOf(request, ctx);
      const result = await onDisk(
        options,
        relayingCalls(relay, () => call(options, request, ctx)),
      );
      // The stream ends with the result: what the upstream sent before it goes out first.
      await sent();
      return result;
    }),
  );
  serveOffers(server, options);
  return server;
}

async function call(
  options: StatelessGatewayOptions,
  request: CallToolRequest,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const { app, viewer, agentId } = options;
  const { params } = request;
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const clientInfo = envelope[CLIENT_INFO_META_KEY] as Implementation | undefined;
  const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  // An empty elicitation capability means form mode (the spec's backwards compatibility).
  const elicitation = capabilities?.elicitation as { form?: object; url?: object } | undefined;
  const canElicit = elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
  const wire = ctx.mcpReq.requestState<unknown>();
  let turnId: string;
  if (wire === undefined) {
    const input = callToolInput(options, {
      params: params as Parameters<typeof callToolInput>[1]['params'],
      clientName: clientInfo?.name ?? null,
      canElicit,
    });
    const outcome = await callTool(app, viewer, input);
    if (!outcome.ok) throw callToolError(outcome, { name: params.name, agentId });
    if (outcome.call.result) return outcome.call.result as CallToolResult;
    turnId = outcome.call.turn.id;
  } else {
    const opened =
      typeof wire === 'string'
        ? options.requestState.open(wire, { viewerId: viewer.id, agentId, toolName: params.name })
        : ({ ok: false, reason: 'malformed' } as const);
    if (!opened.ok) {
      options.onRefusedState?.(opened.reason);
      throw new GatewayError(ErrorCode.InvalidParams, INVALID_STATE);
    }
    await answerAsked(options, opened.state, ctx.mcpReq.inputResponses ?? {});
    turnId = opened.state.turnId;
  }
  return respond(options, { turnId, toolName: params.name, canElicit }, ctx, params._meta?.progressToken);
}

/**
 * The client's answers to the confirmations the state says it was asked, each through answerElicitation: the ledger
 * accepts each at most once, whoever answers. An answer it refuses (given before, elsewhere first, expired, not as
 * asked) changes nothing: the call is read as it stands next.
 */
async function answerAsked(
  options: StatelessGatewayOptions,
  state: CallState,
  responses: Record<string, unknown>,
): Promise<void> {
  for (const elicitationId of state.elicitationIds) {
    const response = responses[elicitationId];
    if (typeof response !== 'object' || response === null) continue;
    const { action, content } = response as { action?: unknown; content?: unknown };
    const answer = typeof action === 'string' ? ACTIONS[action] : undefined;
    if (!answer) continue;
    await answerElicitation(options.app, options.viewer, { elicitationId, action: answer, content });
  }
}

/**
 * The upstream's progress and log messages during the call, on the request's stream. Its questions
 * (elicitation/create, sampling/createMessage) are not asked: the revision has no request from server to client
 * (docs/mcp-revisions.md). Log messages only at or above the level the request names in its `_meta`, none without.
 */
function relayOf(request: CallToolRequest, ctx: ServerContext): { relay: CallRelay; sent(): Promise<void> } {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const least = (envelope[LOG_LEVEL_META_KEY] as LoggingLevel | undefined) ?? null;
  const sending = new Set<Promise<void>>();
  const notify: NotifyClient = (notification) => {
    const send = ctx.mcpReq
      .notify(notification as Parameters<ServerContext['mcpReq']['notify']>[0])
      .catch(() => {})
      .finally(() => sending.delete(send));
    sending.add(send);
  };
  return {
    relay: upstreamNotifications(notify, request.params._meta?.progressToken, () => least),
    sent: async () => void (await Promise.all(sending)),
  };
}

/** The call's result when it is known (or becomes known within `waitMs`); else `input_required` with a new state. */
async function respond(
  options: StatelessGatewayOptions,
  call: { turnId: string; toolName: string; canElicit: boolean },
  ctx: ServerContext,
  progressToken: string | number | undefined,
): Promise<CallToolResult | InputRequiredResult> {
  const { app, viewer, agentId } = options;
  const now = await gatewayCall(app, viewer, call.turnId, agentId);
  // Its turn is gone (deleted after retention): nothing to come back to.
  if (!now) throw new GatewayError(ErrorCode.InvalidParams, INVALID_STATE);
  if (now.result) return now.result as CallToolResult;
  let asked = call.canElicit ? answerableByCaller(app, viewer, now.waitingOn) : [];
  if (asked.length === 0) {
    // Waiting on others, or running: held for a while, answered as soon as the result is known. A decision made in
    // this process meanwhile runs the tool with this request's relay (its own progress reported instead).
    waitingCallRelay(call.turnId, { paused: true });
    const done = await withDeadline([ctx.mcpReq.signal, options.closing], options.waitMs, (signal) =>
      awaitCallResult(app, viewer, call.turnId, {
        signal,
        tickMs: options.progressIntervalMs,
        onWait: waitingProgress(progressToken, (params) =>
          ctx.mcpReq.notify({ method: 'notifications/progress', params }),
        ),
      }),
    );
    if (done?.result) return done.result as CallToolResult;
    // The client went away: nobody reads an answer. (A closing server answers: the store closes after this.)
    if (ctx.mcpReq.signal.aborted) throw new GatewayError(ErrorCode.ConnectionClosed, REQUEST_ENDED);
    const later = await gatewayCall(app, viewer, call.turnId, agentId);
    if (later?.result) return later.result as CallToolResult;
    asked = later && call.canElicit ? answerableByCaller(app, viewer, later.waitingOn) : [];
  }
  const requestState = options.requestState.sign({
    turnId: call.turnId,
    elicitationIds: asked.map((elicitation) => elicitation.id),
    viewerId: viewer.id,
    agentId,
    toolName: call.toolName,
  });
  const inputRequests: InputRequests = Object.fromEntries(asked.map((e) => [e.id, elicitRequest(e)]));
  return {
    resultType: 'input_required',
    ...(asked.length > 0 && { inputRequests }),
    requestState,
  } as InputRequiredResult;
}

/** Runs `work` with a signal aborted when one of `outer` is, or after `ms`. */
async function withDeadline<T>(
  outer: (AbortSignal | undefined)[],
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = linkedSignal(outer);
  const timer = setTimeout(deadline.abort, ms);
  try {
    return await work(deadline.signal);
  } finally {
    clearTimeout(timer);
    deadline.release();
  }
}

/** The trusted confirmation form, as the 2025 session asks it with elicitation/create (elicitation-relay.ts). */
function elicitRequest(elicitation: ElicitationRecord): InputRequests[string] {
  const { message, requestedSchema, _meta } = elicitation.request;
  return {
    method: 'elicitation/create',
    params: { mode: 'form', message, requestedSchema, ...(_meta && { _meta }) },
  } as InputRequests[string];
}

/** A gateway's tool as listed (the same fields the 2025 side lists, less its task support). */
function mcpTool(tool: GatewayTool): McpTool {
  return { ...tool } as McpTool;
}
