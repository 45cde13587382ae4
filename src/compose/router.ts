// The HTTP entrances of a server, on the core (core.ts): Yoga with its plugins at /graphql, MCP clients at /mcp,
// the approval inbox, GraphQL over WebSocket, on one node:http server.
import { foreignBrowserRequest } from '../http/local-browser-guard.js';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { ToolgateConfig } from '../config/schema.js';
import type { GraphQLContext, Viewer } from '../graphql/builder.js';
import {
  createIdentity,
  isLoopbackHost,
  requestAuthentication,
  type Authenticator,
  type Identity,
} from '../http/auth.js';
import { publicUrl as publicUrlOf } from '../identity/public-url.js';
import { armorPlugins } from '../http/armor.js';
import { useBodyLimit } from '../http/body-limit.js';
import { useUrlEncodedParams } from '../http/url-encoded-params.js';
import { bundledGraphiQL } from '../http/graphiql.js';
import { useListBudget } from '../http/list-budget.js';
import { createLoaders } from '../app/loaders.js';
import { schema } from '../graphql/schema.js';
import { useSharedEventExecution } from '../graphql/shared-event-execution.js';
import { closeHttpServer } from '../http/shutdown.js';
import { useSubscriptionLimits } from '../http/subscription-limits.js';
import { attachWebSocket, webSocketOf, webSocketShareKey, webSocketViewer } from '../http/websocket.js';
import { ConfigError } from '../config/load.js';
import { useDurableResponses } from '../http/durable-responses.js';
import { useRequestLog, yogaLogger } from '../observability/request-log.js';
import { HEALTH_PATH, useReadiness } from '../observability/health.js';
import { useMetricsEndpoint } from '../observability/metrics.js';
import { createInboxSite } from '../http/inbox.js';
import { createMcpRoute } from '../http/mcp-route.js';
import { createProtectedResource, type ProtectedResource } from '../http/protected-resource.js';
import { setDefaultSecurityHeaders } from '../http/security-headers.js';
import { createInboxSignIn, type InboxSignIn } from '../http/inbox-sign-in.js';
import { inboxSignInSettings, type InboxSignInSettings } from '../config/inbox-sign-in-settings.js';
import { mcpRequestStateSettings, type McpRequestStateSettings } from '../config/mcp-request-state-settings.js';
import { createRequestStateSigner } from '../mcp/request-state.js';
import { createSlackInteractions } from '../http/slack-interactions.js';
import { slackClient } from '../notifiers/slack/slack-notifier.js';
import type { Core } from './core.js';

/** Where the public keys of the decision records are published (a JWKS). */
export const RECEIPT_KEYS_PATH = '/.well-known/toolgate-receipt-keys.json';

export interface RouterOptions {
  /** Who is asking, over HTTP and WebSocket (tests: users of their own). */
  authenticator?: Authenticator;
  /** Milliseconds between WebSocket pings (keep-alive); 0 turns them off. */
  webSocketKeepAliveMs?: number;
  /** Milliseconds between progress notifications to an MCP client whose tools/call waits for confirmation. */
  mcpProgressIntervalMs?: number;
  /** Milliseconds an MCP client is asked to wait between polls of a task (and the SDK's tasks/result waits). */
  mcpTaskPollIntervalMs?: number;
  /** Where the built approval inbox is (served at /inbox); default web/inbox/dist of this package. */
  inboxBuildDir?: string;
}

/** Who may reach the router. */
export interface Access {
  authenticator: Authenticator;
  /** auth.oidc's issuers and audiences (null without, or with an authenticator given), and the server's URL. */
  identity: Pick<Identity, 'oidc' | 'publicUrl' | 'watchProviders'>;
  /** No tokens: whoever reaches the server is the admin user `local`, on loopback only (docs/security.md). */
  localMode: boolean;
  /** The inbox signs people in through an identity provider (auth.inbox), or null. */
  inboxSignIn: InboxSignInSettings | null;
  /** The keys and timing of MCP 2026-07-28's requestState (server.mcpRequestState). */
  mcpRequestState: McpRequestStateSettings;
}

export interface Router {
  httpServer: Server;
  yoga: YogaServerInstance<Record<string, never>, GraphQLContext>;
  /** Listens and returns the URL of /graphql. */
  listen(port: number, host: string): Promise<string>;
  /**
   * Ends every MCP session: a call waiting for confirmation stops waiting; the confirmation stays pending. What the
   * requests were doing gets until `deadline` (epoch ms) to end.
   */
  closeMcp(deadline: number): Promise<void>;
  /**
   * Takes no new connections; WebSockets go with 1001, subscriptions (SSE streams too) complete, in-flight requests
   * get until `deadline` (epoch ms).
   */
  closeHttp(deadline: number): Promise<void>;
}

/** The config's tokens (or the authenticator given), checked before anything opens: a missing env:NAME stops the start. */
export function accessOf(config: ToolgateConfig, where: string, authenticator?: Authenticator): Access {
  const identity = authenticator
    ? { authenticator, oidc: null, publicUrl: publicUrlOf(config.server?.publicUrl), watchProviders: () => {} }
    : createIdentity(config, where);
  return {
    authenticator: identity.authenticator,
    identity,
    localMode: !authenticator && !config.auth,
    inboxSignIn: inboxSignInSettings(config, where),
    mcpRequestState: mcpRequestStateSettings(config, where),
  };
}

export function createRouter(core: Core, options: RouterOptions & { access: Access; closing: () => boolean }): Router {
  const { config, logger, onError, metrics, services } = core;
  const { store, limits } = services;
  const { authenticator: auth, localMode } = options.access;
  const metricsAccess = config.server?.metrics ?? 'admin';
  // GraphiQL and introspection: on for the local mode, off once tokens guard a reachable server, unless the config says.
  const exposed = {
    graphiql: config.server?.graphiql ?? !config.auth,
    introspection: config.server?.introspection ?? !config.auth,
  };

  const authentication = requestAuthentication(auth, () => metrics?.refusedCredentials());
  // One line when an identity provider stops answering (requests needing new keys get 503 meanwhile), one when it is back.
  options.access.identity.watchProviders((issuer, problem) => {
    if (problem === null) logger.info({ issuer }, 'identity provider answers again');
    else logger.warn({ issuer, problem }, 'identity provider unreachable');
  });
  const graphiql = bundledGraphiQL();
  const yoga = createYoga<Record<string, never>, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: exposed.graphiql,
    renderGraphiQL: graphiql.render,
    // Never the original error or its stack for a client, whatever NODE_ENV says (Yoga adds them for "development").
    maskedErrors: { isDev: false },
    // Liveness: 200 from Yoga's first plugin, before any limit or auth. Readiness: useReadiness below.
    healthCheckEndpoint: HEALTH_PATH,
    // Yoga reports what it masks to our log, with the stack; the client still gets "Unexpected error." only.
    logging: yogaLogger(logger),
    // useBodyLimit (below) enforces limits.maxRequestBytes, declared or chunked; Yoga's own 25 MB limit would pipe
    // every body through a second TransformStream for nothing (bench part 7). Node's HTTP parser already refuses
    // malformed Content-Length values.
    maxRequestBodySize: false,
    plugins: [
      // First: sees every request, also those refused by the plugins after it (413, limits).
      useRequestLog(logger),
      // The page's own Content-Security-Policy (src/http/graphiql.ts).
      graphiql.plugin,
      // /readyz and /metrics answer before the limits and the context (auth); /metrics has its own access rule.
      useReadiness({ store, sources: services.tools.sources, closing: options.closing }),
      ...(metrics
        ? [useMetricsEndpoint({ metrics, access: metricsAccess, authenticator: auth, onError }), metrics.yogaPlugin]
        : []),
      // Before parsing and validation: a client without a valid token learns nothing of the schema.
      authentication.plugin,
      ...armorPlugins({ introspection: exposed.introspection }),
      // Malformed JSON in a GET's or a form's variables/extensions is a 400, not a fault; before useBodyLimit, which
      // wraps the parser chosen here.
      useUrlEncodedParams(),
      useBodyLimit(limits.maxRequestBytes),
      useListBudget(schema, limits.maxListItems),
      useDurableResponses(store),
      // One execution per subscription event for all of a viewer's WebSocket subscriptions of the same operation.
      useSharedEventExecution({ shareKey: webSocketShareKey }),
      // Last: it wraps the subscribe function the plugins before it set, to free a subscription's slot when it ends.
      useSubscriptionLimits({
        maxPerSocket: limits.maxSubscriptionsPerSocket,
        maxPerUser: limits.maxSubscriptionsPerUser,
        socketOf: webSocketOf,
      }),
    ],
    // Over WebSocket the viewer was authenticated once, at connection_init (src/http/websocket.ts); over HTTP
    // a request without valid credentials, where they are required, is refused with 401 UNAUTHENTICATED.
    // The plugin found the viewer of an HTTP request already, so the context is made at once, without awaiting.
    context: (initial): GraphQLContext | Promise<GraphQLContext> => {
      const viewer = webSocketViewer(initial) ?? authentication.viewerOf(initial.request);
      // A browser's Origin; a same-origin GET (urql's queries) carries none: the URL it was sent to says the same.
      const origin = initial.request
        ? (initial.request.headers.get('origin') ?? new URL(initial.request.url).origin)
        : null;
      const contextOf = (found: Viewer): GraphQLContext => ({
        viewer: found,
        services,
        loaders: createLoaders(store),
        origin,
      });
      return viewer instanceof Promise ? viewer.then(contextOf) : contextOf(viewer);
    },
  });

  // The approval inbox (/inbox) and the page at `/` are static files: answered before Yoga and its plugins.
  const inbox = createInboxSite(options.inboxBuildDir);
  // With auth.oidc, MCP clients sign in by themselves: a 401 from /mcp names the protected resource metadata
  // (src/http/protected-resource.ts), which names the identity providers.
  const { oidc, publicUrl } = options.access.identity;
  const protectedResource: ProtectedResource | null = oidc
    ? createProtectedResource({
        publicUrl: publicUrl.get,
        authorizationServers: oidc.issuers,
        scopes: oidc.scopes,
        describes: async (path) => path === '' || (await mcp.serves(path)),
      })
    : null;
  // MCP clients at /mcp: their tools/call pass the same gate (src/mcp/), authenticated as /graphql is.
  const mcp = createMcpRoute({
    app: services,
    flush: () => store.flush(),
    authenticator: auth,
    maxRequestBytes: limits.maxRequestBytes,
    progressIntervalMs: options.mcpProgressIntervalMs,
    taskPollIntervalMs: options.mcpTaskPollIntervalMs,
    sessionIdleMs: limits.mcpSessionIdleSeconds * 1000,
    maxSessionsPerUser: limits.maxMcpSessionsPerUser,
    logger,
    protectedResource: protectedResource ?? undefined,
    onRefused: () => metrics?.refusedCredentials(),
    onError,
    modern: {
      requestState: createRequestStateSigner({
        keys: options.access.mcpRequestState.keys,
        ttlSeconds: options.access.mcpRequestState.ttlSeconds,
        now: services.clock,
      }),
      waitMs: options.access.mcpRequestState.waitSeconds * 1000,
    },
  });
  // The inbox's sign-in through the identity provider (/auth/*), and its session cookie as the credentials of the
  // inbox's own requests: the cookie's access token goes to the same authenticator as a bearer token.
  // Known once the server listens, when the config does not say: nothing reaches /auth/* before.
  const inboxPublicUrl = () => publicUrl.get() ?? 'http://127.0.0.1';
  const signInSettings = options.access.inboxSignIn;
  const signIn: InboxSignIn | null = signInSettings
    ? createInboxSignIn({
        ...signInSettings,
        // By default the audience this server expects of the issuer's tokens.
        resource: () =>
          signInSettings.resource === false
            ? null
            : (signInSettings.resource ?? oidc?.audienceOf(signInSettings.issuer) ?? inboxPublicUrl()),
        publicUrl: inboxPublicUrl,
        publicUrlConfigured: config.server?.publicUrl !== undefined,
        authenticate: (authorization) => auth.authenticate(authorization),
        logger,
        onError,
      })
    : null;
  // Slack's interactivity requests (docs/slack.md): signed by Slack, answered through answerElicitation.
  const slackInteractions = core.slack
    ? createSlackInteractions({
        app: services,
        settings: core.slack,
        client: slackClient(core.slack),
        cards: core.storage.notifierCards,
        clock: services.clock,
        flush: () => store.flush(),
        logger,
        onError,
      })
    : null;
  // Local mode: a page of another site, reaching loopback through the user's browser, is refused before anything
  // else (src/http/local-browser-guard.ts); with tokens there is no ambient credential for it to use.
  const foreign = localMode ? foreignBrowserRequest : () => null;
  const httpServer = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    // No framing, and nothing runs in a page that does not set a policy of its own (src/http/security-headers.ts).
    setDefaultSecurityHeaders(res);
    const refusal = foreign(req.headers);
    if (refusal) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${refusal}\n`);
      return;
    }
    if (slackInteractions?.handles(req)) {
      void slackInteractions.serve(req, res);
      return;
    }
    if (inbox.handles(req)) {
      inbox.serve(req, res).catch((error: unknown) => {
        onError(error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end();
      });
      return;
    }
    if (signIn?.handles(req)) {
      void signIn.serve(req, res);
      return;
    }
    if (mcp.handles(req)) {
      void mcp.serve(req, res);
      return;
    }
    if (req.url === RECEIPT_KEYS_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      // Public: an auditor checks exported records against these without signing in (docs/receipts.md).
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
      res.end(req.method === 'GET' ? JSON.stringify({ keys: core.storage.receiptKeys }) : undefined);
      return;
    }
    if (protectedResource?.handles(req)) {
      protectedResource.serve(req, res).catch((error: unknown) => {
        onError(error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end();
      });
      return;
    }
    if (signIn && req.headers.authorization === undefined) {
      void withSession(signIn, req, res).catch((error: unknown) => {
        onError(error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end();
      });
      return;
    }
    void yoga.handle(req, res);
  });
  /** A request of the inbox's, authenticated by its session cookie; refused when another origin's page sent it. */
  const withSession = async (session: InboxSignIn, req: IncomingMessage, res: ServerResponse) => {
    const found = await session.authorizationOf(req);
    if ('refused' in found) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${found.refused}\n`);
      return;
    }
    if (found.authorization) req.headers.authorization = found.authorization;
    await yoga.handle(req, res);
  };
  const webSockets = attachWebSocket({
    httpServer,
    refuse: (request) => foreign(request.headers) ?? signIn?.refuseUpgrade(request) ?? null,
    ...(signIn ? { sessionAuthorization: (request: IncomingMessage) => signIn.upgradeAuthorization(request) } : {}),
    yoga,
    authenticator: auth,
    path: '/graphql',
    maxPayload: limits.maxRequestBytes,
    keepAliveMs: options.webSocketKeepAliveMs,
    logger,
  });
  metrics?.watchWebSockets(webSockets.activity);

  return {
    httpServer,
    yoga,
    async listen(port, host) {
      if (localMode && !isLoopbackHost(host)) {
        throw new ConfigError(
          `HOST: "${host}" is not loopback; without an "auth" section in the config toolgate runs as the single admin user "local" and listens on loopback only`,
        );
      }
      const { oidc, publicUrl } = options.access.identity;
      if (oidc?.needsDefaultAudience && publicUrl.get() === undefined && isWildcardHost(host)) {
        throw new ConfigError(
          `server.publicUrl: needed with auth.oidc when listening on "${host}" (and no auth.oidc.audience): the URL clients reach this server at, which tokens must name as their audience`,
        );
      }
      await new Promise<void>((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, () => {
          httpServer.off('error', reject);
          // Later errors of the listening socket (an accept failure) are faults to log, not a crash of the process.
          httpServer.on('error', onError);
          resolve();
        });
      });
      const address = httpServer.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const url = `http://${shownHost}:${address.port}/graphql`;
      options.access.identity.publicUrl.listened(url);
      return url;
    },
    closeMcp: (deadline) => mcp.close(deadline),
    async closeHttp(deadline) {
      const httpClosed = closeHttpServer(httpServer, deadline);
      await webSockets.close(Math.max(0, deadline - Date.now()));
      await services.pubsub.endSubscriptions();
      await httpClosed;
    },
  };
}

/** An address that listens on every interface, so that it names no URL a client would use. */
function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]' || host === '';
}
