// A 2025 gateway session's resources, prompts, completions and logging level (the bodies shared with 2026-07-28
// clients are offer-handlers.ts's), and what only a session has: subscriptions, and the upstream servers'
// announcements (list changes, resource updates) passed on to its client.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CompleteResult,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type LoggingLevel,
  type ReadResourceResult,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { subscribeGatewayResource, UnknownGateway, watchGatewayOffers } from '../app/gateway-offers.js';
import type { JsonObject } from '../domain/records.js';
import { guardedOffer, offerHandlers } from './offer-handlers.js';
import type { GatewaySession } from './tool-call.js';

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
  const offers = offerHandlers(session);
  const guarded = guardedOffer(session);
  /** URI → what stops this session's subscription to it. */
  const subscriptions = new Map<string, () => Promise<void>>();
  let logLevel: LoggingLevel | null = null;

  server.setRequestHandler(
    ListResourcesRequestSchema,
    async () => (await offers.listResources()) as ListResourcesResult,
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    async () => (await offers.listResourceTemplates()) as ListResourceTemplatesResult,
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    async ({ params }) => (await offers.readResource(params.uri)) as ReadResourceResult,
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
  server.setRequestHandler(ListPromptsRequestSchema, async () => (await offers.listPrompts()) as ListPromptsResult);
  server.setRequestHandler(
    GetPromptRequestSchema,
    async ({ params }) => (await offers.getPrompt(params.name, params.arguments)) as GetPromptResult,
  );
  server.setRequestHandler(
    CompleteRequestSchema,
    async ({ params }) => (await offers.complete(params as JsonObject)) as CompleteResult,
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
