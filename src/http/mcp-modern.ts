// MCP revision 2026-07-28 at /mcp: the SDK's v2 handler, strict (2025 clients are mcp-route.ts's sessions), one
// gateway server per request (src/mcp/stateless-gateway.ts). The route has authenticated the request and read its
// body already; the handler gets both, and its web Response is written back to Node's response as it streams. A
// subscriptions/listen stream is the handler's own, fed by toolgate's bus with its caller's announcements.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMcpHandler, isLegacyRequest, type McpRequestContext } from '@modelcontextprotocol/server';
import type { AppDeps } from '../app/deps.js';
import type { Viewer } from '../app/viewer.js';
import type { Logger } from '../observability/logger.js';
import type { RequestStateSigner } from '../mcp/request-state.js';
import { gatewayEventBus, listeningAs } from '../mcp/listen-bus.js';
import { createStatelessGatewayServer } from '../mcp/stateless-gateway.js';

export interface ModernMcpOptions {
  app: AppDeps;
  requestState: RequestStateSigner;
  /** Milliseconds a tools/call waits on others' answers before it is answered with a requestState only. */
  waitMs: number;
  progressIntervalMs?: number;
  maxRequestBytes: number;
  /** A refused requestState is logged with its reason (the client is told only that it is invalid or expired). */
  logger?: Logger;
  onError: (error: unknown) => void;
  /** Given each request's handling as it starts (mcp-handlings.ts). */
  track?: (handling: Promise<unknown>) => void;
  /** The store's flush (src/mcp/on-disk.ts). */
  flush: () => Promise<void>;
}

export interface ModernMcp {
  /** Whether a request (its body read already) is one of revision 2026-07-28 or later: the SDK's own verdict. */
  isModern(req: IncomingMessage, body: unknown): Promise<boolean>;
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    caller: { viewer: Viewer; agentId: string },
  ): Promise<void>;
  /** The server begins to close: a call waiting on others is answered now with a requestState (stateless-gateway). */
  stopWaiting(): void;
  /** Ends what is still open (subscriptions/listen streams, requests in flight). */
  close(): Promise<void>;
}

/** Who a request is for, passed to the server factory through the handler's authInfo. */
interface Caller {
  viewer: Viewer;
  agentId: string;
}

export function createModernMcp(options: ModernMcpOptions): ModernMcp {
  const closing = new AbortController();
  const factory = (ctx: McpRequestContext) => {
    const caller = ctx.authInfo?.extra?.caller as Caller | undefined;
    if (!caller) throw new Error('an MCP request reached the gateway without its caller');
    return createStatelessGatewayServer({
      app: options.app,
      viewer: caller.viewer,
      agentId: caller.agentId,
      onError: options.onError,
      progressIntervalMs: options.progressIntervalMs,
      requestState: options.requestState,
      waitMs: options.waitMs,
      track: options.track,
      flush: options.flush,
      closing: closing.signal,
      onRefusedState: (reason) =>
        options.logger?.warn(
          { viewerId: caller.viewer.id, agentId: caller.agentId, reason },
          'MCP requestState refused',
        ),
    });
  };
  const handler = createMcpHandler(factory, {
    legacy: 'reject',
    // subscriptions/listen: each stream gets its own gateway's announcements (listen-bus.ts).
    bus: gatewayEventBus(),
    maxRequestBodySize: options.maxRequestBytes,
    onerror: (error) => {
      // Refused requests are the client's to read; faults of ours are reported by the gateway server itself.
      void error;
    },
  });

  // The requests being answered: what is still open once the waiting calls were answered is ended at close.
  const inFlight = new Set<AbortController>();
  return {
    isModern: async (req, body) =>
      req.method === 'POST' &&
      !(await isLegacyRequest(webRequest(req), body, { maxRequestBodySize: options.maxRequestBytes })),
    async serve(req, res, body, caller) {
      const gone = new AbortController();
      inFlight.add(gone);
      res.once('close', () => {
        inFlight.delete(gone);
        if (!res.writableFinished) gone.abort();
      });
      const fetch = () =>
        handler.fetch(webRequest(req, gone.signal), {
          parsedBody: body,
          authInfo: { token: '', clientId: caller.viewer.id, scopes: [], extra: { caller } },
        });
      const listen = listenRequestOf(body);
      const response = await (listen
        ? listeningAs({ app: options.app, agentId: caller.agentId, onError: options.onError, ...listen }, fetch)
        : fetch());
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) return void res.end();
      await pipeline(Readable.fromWeb(response.body as Parameters<typeof Readable.fromWeb>[0]), res).catch(() => {
        // The client went away while the response streamed: nothing to answer.
      });
    },
    stopWaiting: () => closing.abort(),
    close: () => {
      for (const request of inFlight) request.abort();
      inFlight.clear();
      return handler.close();
    },
  };
}

/** A `subscriptions/listen` request's resources to watch; null for any other request. */
function listenRequestOf(body: unknown): { resourceUris: string[] } | null {
  const message = body as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } };
  if (typeof body !== 'object' || body === null || message.method !== 'subscriptions/listen') return null;
  const uris = message.params?.notifications?.resourceSubscriptions;
  return { resourceUris: Array.isArray(uris) ? uris.filter((uri): uri is string => typeof uri === 'string') : [] };
}

/** The request as the SDK reads it: method, URL and headers (the body is passed parsed). */
function webRequest(req: IncomingMessage, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  // The body was read by the route; a body-less Request must not claim one.
  headers.delete('content-length');
  headers.delete('transfer-encoding');
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
    method: req.method,
    headers,
    ...(signal && { signal }),
  });
}
