// GraphQL over WebSocket (graphql-transport-ws protocol of graphql-ws) on the HTTP server's /graphql path.
// Every operation goes through Yoga's envelop (Yoga's documented graphql-ws recipe), so parsing, validation
// rules (limits), error masking and the context are the same as over HTTP. The viewer is authenticated once,
// at connection_init, from connectionParams.authorization.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Context, ServerOptions } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { GraphQLContext, Viewer } from '../graphql/builder.js';
import { roundMs } from '../observability/logger.js';
import { authenticateConnection, type Authenticator } from './auth.js';

export interface WebSocketOptions {
  httpServer: Server;
  yoga: YogaServerInstance<Record<string, never>, GraphQLContext>;
  authenticator: Authenticator;
  path: string;
  /** Largest message a client may send, in bytes; a larger one closes the socket with 1009 (and a warn line). */
  maxPayload: number;
  /** Milliseconds between pings; a client that does not answer one within as long is dropped. 0: off. */
  keepAliveMs?: number;
  /** Connections opened and closed (info), operations started (debug), protocol errors of clients (warn). */
  logger?: Logger;
  /** Why an upgrade is refused before the handshake (403), or null to go on. */
  refuse?: (request: IncomingMessage) => string | null;
  /** The authorization of an upgrade's session cookie (the inbox's sign-in), for connections without one of their own. */
  sessionAuthorization?: (request: IncomingMessage) => Promise<string | null>;
}

/** What the WebSocket transport carries now (read by the metrics at scrape time). */
export interface WebSocketActivity {
  /** graphql-ws connections that were accepted (connection_init authenticated) and are still open. */
  readonly connections: number;
  /** Subscriptions streaming events on them. */
  readonly subscriptions: number;
}

export interface WebSocketTransport {
  /** Connected sockets now. */
  readonly connections: number;
  /** Accepted connections and their active subscriptions. */
  readonly activity: WebSocketActivity;
  /**
   * Takes no new connections, closes every socket with 1001 (going away), and waits up to `graceMs` for the
   * closing handshakes; sockets still open then are cut.
   */
  close(graceMs: number): Promise<void>;
}

/** Where onConnect keeps the viewer of a connection. */
interface ConnectionExtra extends Record<PropertyKey, unknown> {
  viewer: Viewer;
}

/** Key of the viewer in the initial context of an operation that came over WebSocket. */
const WEBSOCKET_VIEWER = Symbol('toolgate.websocketViewer');

/** Key of the socket in the initial context of an operation that came over WebSocket. */
const WEBSOCKET_SOCKET = Symbol('toolgate.websocketSocket');

/** The viewer authenticated at connection_init, when the operation came over WebSocket; else null (HTTP). */
export function webSocketViewer(initialContext: object): Viewer | null {
  return (initialContext as { [WEBSOCKET_VIEWER]?: Viewer })[WEBSOCKET_VIEWER] ?? null;
}

/** The socket an operation came over, when it came over WebSocket; else null (HTTP). */
export function webSocketOf(initialContext: object): object | null {
  return (initialContext as { [WEBSOCKET_SOCKET]?: object })[WEBSOCKET_SOCKET] ?? null;
}

/**
 * For useSharedEventExecution: the subscriptions of one viewer over WebSocket share each event's execution (the
 * resolvers depend on the viewer and the shared services only). Other transports execute per subscription.
 */
export function webSocketShareKey(context: object): string | null {
  const viewer = webSocketViewer(context);
  return viewer ? `${viewer.isAdmin ? 'admin' : 'user'}:${viewer.id}` : null;
}

/** The close of a socket whose viewer's token expired: the client renews its token and connects again. */
export const WS_TOKEN_EXPIRED = { code: 4401, reason: 'Token expired' } as const;

/** Timers hold at most 2^31-1 ms; a later expiry is checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A socket lives no longer than the token it was opened with: at its expiry (epoch ms) it closes with 4401 "Token
 * expired", so that no one keeps receiving events with credentials that ended (or roles the provider took away).
 */
function closeAtExpiry(socket: WebSocket, expiresAt: number | undefined): void {
  if (expiresAt === undefined) return;
  let timer: NodeJS.Timeout;
  const arm = () => {
    const remaining = expiresAt - Date.now();
    if (remaining <= 0) {
      socket.close(WS_TOKEN_EXPIRED.code, WS_TOKEN_EXPIRED.reason);
      return;
    }
    timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
    timer.unref();
  };
  arm();
  socket.once('close', () => clearTimeout(timer));
}

interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

export function attachWebSocket(options: WebSocketOptions): WebSocketTransport {
  // Upgrades reach it from our own listener (ws's noServer mode) rather than through its `server` option, which
  // also re-emits the HTTP server's own errors (a port in use at listen) as the WebSocket server's, and graphql-ws
  // then prints them to stderr as an internal error of its own.
  const wsServer = new WebSocketServer({ noServer: true, path: options.path, maxPayload: options.maxPayload });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refusal = options.refuse?.(request);
    if (refusal) {
      socket.end(
        `HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(refusal)}\r\n\r\n${refusal}`,
      );
      return;
    }
    wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit('connection', ws, request));
  };
  options.httpServer.on('upgrade', onUpgrade);
  const accepted = new Set<GraphqlWsContext>();
  const graphqlWs = useServer<Record<string, unknown>, ConnectionExtra>(
    countedOptions(
      loggedOptions(
        graphqlWsOptions(options.yoga, options.authenticator, options.sessionAuthorization),
        wsServer,
        options.logger,
      ),
      accepted,
    ),
    wsServer,
    options.keepAliveMs ?? 12_000,
  );
  if (options.logger) logClientErrors(wsServer, accepted, options.maxPayload, options.logger);

  return {
    get connections() {
      return wsServer.clients.size;
    },
    activity: {
      get connections() {
        return accepted.size;
      },
      // graphql-ws holds each streaming operation's iterator until it ends (null while one is being set up).
      get subscriptions() {
        let count = 0;
        for (const connection of accepted) count += Object.values(connection.subscriptions).filter(Boolean).length;
        return count;
      },
    },
    async close(graceMs) {
      const sockets = [...wsServer.clients];
      const closed = Promise.all(
        sockets.map(
          (socket) =>
            new Promise<void>((resolve) => {
              if (socket.readyState === socket.CLOSED) resolve();
              else socket.once('close', () => resolve());
            }),
        ),
      );
      // No new upgrades (the HTTP server then refuses them); 1001 "Going away" to every client; the server stops.
      options.httpServer.off('upgrade', onUpgrade);
      const disposed = graphqlWs.dispose();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        closed,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
      for (const socket of sockets) if (socket.readyState !== socket.CLOSED) socket.terminate();
      await disposed;
    },
  };
}

type GraphqlWsOptions = ServerOptions<Record<string, unknown>, Extra & Partial<ConnectionExtra>>;
type GraphqlWsContext = Context<Record<string, unknown>, Extra & Partial<ConnectionExtra>>;

/**
 * Keeps the context of every accepted connection in `accepted` until it closes (onClose comes after its
 * subscriptions ended, for every connection, accepted or not); the hooks of `base` run first.
 */
function countedOptions(base: GraphqlWsOptions, accepted: Set<GraphqlWsContext>): GraphqlWsOptions {
  return {
    ...base,
    onConnect: async (ctx) => {
      const result = await base.onConnect?.(ctx);
      if (result !== false) accepted.add(ctx);
      return result;
    },
    onClose: async (ctx, code, reason) => {
      accepted.delete(ctx);
      await base.onClose?.(ctx, code, reason);
    },
  };
}

/**
 * A socket's 'error' is what its client sent against the protocol (ws has closed the socket by then: 1009 for a
 * message over maxPayload). graphql-ws prints each to stderr as an internal error with a stack; it is the client's
 * doing, so it is one warn line instead, with the socket's user when it authenticated. Registered after graphql-ws's
 * own handler, which it takes the place of; an error that is not ws's protocol error still goes to that handler.
 */
function logClientErrors(
  wsServer: WebSocketServer,
  accepted: Set<GraphqlWsContext>,
  maxPayload: number,
  logger: Logger,
): void {
  const viewerOf = (socket: WebSocket) => {
    for (const connection of accepted) if (connection.extra.socket === socket) return connection.extra.viewer ?? null;
    return null;
  };
  wsServer.on('connection', (socket: WebSocket) => {
    const graphqlWsHandlers = socket.listeners('error') as ((error: unknown) => void)[];
    socket.removeAllListeners('error');
    socket.once('error', (error: Error & { code?: string }) => {
      if (!error.code?.startsWith('WS_ERR_')) {
        for (const handler of graphqlWsHandlers) handler.call(socket, error);
        return;
      }
      const viewerId = viewerOf(socket)?.id ?? null;
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
        logger.warn({ viewerId, maxBytes: maxPayload }, 'websocket message too large');
      } else {
        logger.warn({ viewerId, error: error.code, reason: error.message }, 'websocket protocol error');
      }
    });
  });
}

/**
 * Logs each connection when it is accepted (viewer) and when it closes (viewer or null if it never authenticated,
 * close code, duration), and each operation's start at debug (id and operation name; never the document or
 * variables, nor connectionParams, which hold the token).
 */
function loggedOptions(base: GraphqlWsOptions, wsServer: WebSocketServer, logger?: Logger): GraphqlWsOptions {
  if (!logger) return base;
  const openedAt = new WeakMap<WebSocket, number>();
  wsServer.on('connection', (socket) => openedAt.set(socket, performance.now()));
  return {
    ...base,
    onConnect: async (ctx) => {
      const accepted = await base.onConnect?.(ctx);
      if (accepted !== false) logger.info({ viewerId: ctx.extra.viewer?.id ?? null }, 'websocket connected');
      return accepted;
    },
    onSubscribe: async (ctx, id, params) => {
      const result = await base.onSubscribe!(ctx, id, params);
      if (logger.isLevelEnabled('debug')) {
        logger.debug(
          {
            viewerId: ctx.extra.viewer?.id ?? null,
            id,
            operationName: params.operationName ?? null,
            errors: Array.isArray(result) ? result.length : 0,
          },
          'websocket operation started',
        );
      }
      return result;
    },
    onClose: async (ctx, code, reason) => {
      await base.onClose?.(ctx, code, reason);
      const opened = openedAt.get(ctx.extra.socket as WebSocket);
      logger.info(
        {
          viewerId: ctx.extra.viewer?.id ?? null,
          code,
          durationMs: opened === undefined ? null : roundMs(performance.now() - opened),
        },
        'websocket closed',
      );
    },
  };
}

/**
 * The graphql-ws server: the viewer authenticated at connection_init, every operation through Yoga's envelop.
 * Transport-free (graphql-ws `makeServer` takes it too), so the server's side can be measured without sockets.
 */
export function graphqlWsOptions(
  yoga: WebSocketOptions['yoga'],
  authenticator: Authenticator,
  sessionAuthorization?: WebSocketOptions['sessionAuthorization'],
): GraphqlWsOptions {
  return {
    onConnect: async (ctx) => {
      // connectionParams first; without an authorization there, the inbox's session cookie of the upgrade, if any.
      const fromSession =
        ctx.connectionParams?.authorization === undefined && sessionAuthorization
          ? await sessionAuthorization(ctx.extra.request)
          : null;
      const params = fromSession ? { authorization: fromSession } : ctx.connectionParams;
      const result = await authenticateConnection(authenticator, params);
      if (!result.ok) {
        // Closing first makes this code win over the 4403 that graphql-ws sends for `false`.
        ctx.extra.socket.close(result.code, result.reason);
        return false;
      }
      ctx.extra.viewer = result.viewer;
      closeAtExpiry(ctx.extra.socket, result.viewer.expiresAt);
      return true;
    },
    execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
    subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
    onSubscribe: async (ctx, _id, params) => {
      const extra = ctx.extra as Extra & ConnectionExtra;
      const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
        ...ctx,
        req: extra.request,
        socket: extra.socket,
        params,
        [WEBSOCKET_VIEWER]: extra.viewer,
        [WEBSOCKET_SOCKET]: extra.socket,
      });
      let document;
      try {
        document = parse(params.query);
        const errors = validate(schema, document);
        if (errors.length > 0) return errors;
      } catch (error) {
        // A syntax error, or a limit (graphql-armor's rules throw from validate), is the operation's error, as
        // over HTTP; the connection stays. Anything else is a fault.
        if (error instanceof GraphQLError) return [error];
        throw error;
      }
      const args: ExecutionArgs = {
        schema,
        operationName: params.operationName,
        document,
        variableValues: params.variables,
        contextValue: await contextFactory(),
        rootValue: { execute, subscribe } satisfies EnvelopedRoot,
      };
      return args;
    },
  };
}
