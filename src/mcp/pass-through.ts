// A gateway session's resources, prompts, completions and logging level, and the upstream servers' announcements
// (list changes, resource updates) passed on to its client: MCP's words for the use cases of src/app/gateway-offers.ts.
// An upstream server's refusal reaches the client as that server's JSON-RPC error.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CompleteResult,
  type GetPromptResult,
  type LoggingLevel,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import {
  completeGatewayArgument,
  getGatewayPrompt,
  listGatewayPrompts,
  listGatewayResources,
  listGatewayResourceTemplates,
  readGatewayResource,
  ResourceNotFound,
  subscribeGatewayResource,
  UnknownGateway,
  UnknownPrompt,
  watchGatewayOffers,
} from '../app/gateway-offers.js';
import type { JsonObject } from '../domain/records.js';
import { GatewayError, hidingFaults, unknownGateway } from './refusals.js';
import type { GatewaySession } from './tool-call.js';

/** MCP's code for a resource no server has. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * Declared whatever the upstream servers offer (a session's capabilities are fixed at initialize, the servers may
 * come and go): with none, the lists are empty.
 */
export const PASS_THROUGH_CAPABILITIES = {
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
} satisfies ServerCapabilities;

export interface PassThrough {
  /** The least level of the upstream log messages this client wants (logging/setLevel); null: all. */
  logLevel(): LoggingLevel | null;
  /** Ends the session's subscriptions. */
  end(): void;
}

/** Serves the pass-through requests on `server`. */
export function servePassThrough(server: Server, session: GatewaySession): PassThrough {
  const { app, agentId } = session;
  const guarded = <T>(run: () => Promise<T>): Promise<T> => hidingFaults(() => run().catch(asRefusal), session.onError);
  /** URI → what stops this session's subscription to it. */
  const subscriptions = new Map<string, () => Promise<void>>();
  let logLevel: LoggingLevel | null = null;

  server.setRequestHandler(ListResourcesRequestSchema, () =>
    guarded(async () => ({ resources: (await listGatewayResources(app, agentId)) as Resource[] })),
  );
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () =>
    guarded(async () => ({
      resourceTemplates: (await listGatewayResourceTemplates(app, agentId)) as ResourceTemplate[],
    })),
  );
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }) =>
    guarded(async () => (await readGatewayResource(app, agentId, params.uri)) as ReadResourceResult),
  );
  server.setRequestHandler(SubscribeRequestSchema, ({ params }) =>
    guarded(async () => {
      if (subscriptions.has(params.uri)) return {};
      const subscription = await subscribeGatewayResource(app, agentId, params.uri);
      subscriptions.set(params.uri, subscription.unsubscribe);
      return {};
    }),
  );
  server.setRequestHandler(UnsubscribeRequestSchema, ({ params }) =>
    guarded(async () => {
      const unsubscribe = subscriptions.get(params.uri);
      subscriptions.delete(params.uri);
      await unsubscribe?.();
      return {};
    }),
  );
  server.setRequestHandler(ListPromptsRequestSchema, () =>
    guarded(async () => ({ prompts: (await listGatewayPrompts(app, agentId)) as Prompt[] })),
  );
  server.setRequestHandler(GetPromptRequestSchema, ({ params }) =>
    guarded(async () => (await getGatewayPrompt(app, agentId, params.name, params.arguments)) as GetPromptResult),
  );
  server.setRequestHandler(CompleteRequestSchema, ({ params }) =>
    guarded(async () => (await completeGatewayArgument(app, agentId, params as JsonObject)) as CompleteResult),
  );
  server.setRequestHandler(SetLevelRequestSchema, ({ params }) => {
    logLevel = params.level;
    return {};
  });

  const watching = watchGatewayOffers(app, agentId, (change) => {
    if (change.method === 'notifications/resources/updated' && !subscriptions.has(change.uri)) return;
    const params = 'uri' in change ? { uri: change.uri } : undefined;
    server.notification({ method: change.method, ...(params && { params }) }).catch(() => {});
  }).catch((error: unknown) => {
    if (!(error instanceof UnknownGateway)) session.onError(error);
    return () => {};
  });

  return {
    logLevel: () => logLevel,
    end: () => {
      void watching.then((stop) => stop());
      for (const unsubscribe of subscriptions.values()) unsubscribe().catch(() => {});
      subscriptions.clear();
    },
  };
}

/** The use cases' refusals, and an upstream server's, in the client's words. */
function asRefusal(error: unknown): never {
  if (error instanceof UnknownGateway) throw unknownGateway(error.agentId);
  if (error instanceof UnknownPrompt) throw new GatewayError(ErrorCode.InvalidParams, error.message);
  if (error instanceof ResourceNotFound) throw new GatewayError(RESOURCE_NOT_FOUND, error.message);
  // The SDK's McpError words its message "MCP error <code>: …", on the upstream server's side and again on ours.
  if (error instanceof McpError) throw new GatewayError(error.code, error.message.replace(/^(MCP error -?\d+: )+/, ''));
  throw error;
}
