// Wires the parts: store, tools, models, listeners, the loop, pub/sub and the GraphQL API on one node:http server.
import { foreignBrowserRequest } from './http/local-browser-guard.js';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { ListenerRegistry, type ToolPreExecuteListener } from './domain/gate/listeners.js';
import { ToolConfirmationListener } from './domain/gate/gating.js';
import { fanOut, type LifecycleObserver } from './agent/lifecycle.js';
import { AgentRunner, type RunnerOptions } from './agent/runner.js';
import { Sweeper, type SweepReport } from './agent/sweeper.js';
import type { Agent } from './domain/records.js';
import type { WebhookSubscription } from './domain/webhook-events.js';
import { demoConfig } from './config/demo.js';
import { loadPlugins } from './config/plugins.js';
import type { ToolgateConfig } from './config/schema.js';
import { openStorage, type Storage } from './storage.js';
import type { DemoEntities } from './domain/demo-entities.js';
import type { SyncFile } from './db/sqlite/wal-sync.js';
import { openPubSub, type ToolgatePubSub } from './events/index.js';
import { createRunnerEventPublisher } from './events/runner-events.js';
import type { GraphQLContext } from './graphql/builder.js';
import { createAuthenticator, isLoopbackHost, requestAuthentication, type Authenticator } from './http/auth.js';
import { armorPlugins } from './http/armor.js';
import { useBodyLimit } from './http/body-limit.js';
import { useUrlEncodedParams } from './http/url-encoded-params.js';
import { bundledGraphiQL } from './http/graphiql.js';
import { useListBudget } from './http/list-budget.js';
import { createLoaders } from './app/loaders.js';
import { schema } from './graphql/schema.js';
import { useSharedEventExecution } from './graphql/shared-event-execution.js';
import { closeHttpServer, settleBy } from './http/shutdown.js';
import { useSubscriptionLimits } from './http/subscription-limits.js';
import { attachWebSocket, webSocketOf, webSocketShareKey, webSocketViewer } from './http/websocket.js';
import { createModel } from './models/index.js';
import type { Model } from './models/model.js';
import { ConfigError } from './config/load.js';
import { useDurableResponses } from './http/durable-responses.js';
import { defaultLimits, type Limits, type Services } from './services.js';
import { checkAgentTools } from './config/tool-ids.js';
import { approversConfigProblems, argumentRuleConfigProblems, gatingFromConfig } from './config/agent-gating.js';
import { createToolSources } from './tools/index.js';
import { lifecycleLogger } from './observability/lifecycle-log.js';
import { defaultServerLogger, type Logger } from './observability/logger.js';
import { useRequestLog, yogaLogger } from './observability/request-log.js';
import { HEALTH_PATH, useReadiness } from './observability/health.js';
import { createMetrics, useMetricsEndpoint } from './observability/metrics.js';
import { ToolRegistry } from './tools/registry.js';
import type { ToolSource } from './tools/tool.js';
import { resolveWebhooks, webhookSubscriptions } from './config/webhooks.js';
import { WebhookDeliverer, type WebhookDelivererOptions } from './webhooks/deliverer.js';
import { createInboxSite } from './http/inbox.js';
import { createMcpRoute } from './http/mcp-route.js';
import { setDefaultSecurityHeaders } from './http/security-headers.js';
import { GATEWAY_MODEL_ID } from './domain/gateway.js';

export interface ServerOptions {
  /** The parsed config; default: the built-in demo. */
  config?: ToolgateConfig;
  /** The file the config came from: plugin paths are relative to it, errors name it. */
  configFile?: string | null;
  /**
   * Where the state lives: an SQLite file path or ':memory:', or a postgres:// URL (several instances on one
   * database). Ignored when `storage` is given.
   */
  database?: string;
  /**
   * A store opened by the caller (openStorage, src/storage.ts), or how to open it; the server closes it. Given as a
   * function, it is called once the config has passed every check (tool ids, plugins, MCP servers, Redis): a config
   * refused at start creates no database file and migrates nothing (the CLI does this).
   */
  storage?: Storage | (() => Promise<Storage>);
  /** Listeners from code, beside those of plugin modules and the confirmation listener. */
  listeners?: ToolPreExecuteListener[];
  /** Models by id that replace or add to the config's (tests: a scripted model with a script). */
  models?: Record<string, Model>;
  /** Tool sources that replace or add to the config's, by their id. */
  toolSources?: ToolSource[];
  /** Default: the storage's clock (PostgreSQL's, so that instances agree on lease and expiry times). */
  clock?: () => Date;
  limits?: Partial<Limits>;
  /** Largest HTTP request body, in bytes. */
  maxBodyBytes?: number;
  /** Seconds between sweeps (expiry, retention, recovery); 0 turns the timer off. Default: config `sweeper`, else 5. */
  sweepIntervalSeconds?: number;
  /** Rows per sweeper batch. Default: config `sweeper`, else 100. */
  sweepBatchSize?: number;
  /** Days an expired confirmation request is kept before the sweeper deletes it. Default: config `sweeper`, else 30. */
  retentionDays?: number;
  /** Seconds a running turn's lease lasts without renewal (docs/durability.md). Default 30. */
  leaseSeconds?: number;
  /** Times a turn is taken over after the process running it died, before it is FAILED instead. Default 3. */
  maxRecoveries?: number;
  /**
   * FULL (default): a response or event goes out only once what it reports survives power loss (one WAL fsync
   * shared by the requests waiting); NORMAL: they go out at commit, which survives process crashes only. Either
   * way the tool-start journal is on disk before a tool runs. Trade-off: docs/durability.md.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How the store flushes its WAL file to disk; default fdatasync (tests: to hold an fsync back). */
  syncFile?: SyncFile;
  /** Fault injection for crash tests (test/fixtures/durability-server.ts); not for production. */
  checkpoint?: RunnerOptions['checkpoint'];
  /** Where unexpected faults are reported (default: the logger, at error, with the stack). */
  onError?: (error: unknown) => void;
  /**
   * The log: requests, WebSocket connections, lifecycle events, faults (docs/observability.md, "Logs"). The CLI
   * passes one at LOG_LEVEL on stdout; without one, warnings and errors only go to stderr (as faults went to
   * console.error).
   */
  logger?: Logger;
  /** Who is asking, over HTTP and WebSocket (tests: users of their own). */
  authenticator?: Authenticator;
  /** close(): how long in-flight requests, closing WebSockets and running turns may take to finish, in ms. */
  shutdownGraceMs?: number;
  /** Milliseconds between WebSocket pings (keep-alive); 0 turns them off. */
  webSocketKeepAliveMs?: number;
  /** Milliseconds between progress notifications to an MCP client whose tools/call waits for confirmation. */
  mcpProgressIntervalMs?: number;
  /** Milliseconds an MCP client is asked to wait between polls of a task (and the SDK's tasks/result waits). */
  mcpTaskPollIntervalMs?: number;
  /** Told what happens to turns, answers, tools and model calls (beside the server's own log and metrics). */
  observers?: LifecycleObserver[];
  /**
   * Pub/sub for subscriptions (closed by close()); default: the config's `pubsub` section (Redis, for several
   * instances on one database, docs/live.md), else in process. The CLI passes one built with openPubSub (TOOLGATE_REDIS).
   */
  pubsub?: ToolgatePubSub;
  /** How the webhook deliverer polls and batches (tests, embedding); the endpoints come from the config's `webhooks`. */
  webhookDelivery?: Pick<WebhookDelivererOptions, 'pollIntervalMs' | 'batchSize' | 'concurrency'>;
  /** Issue 16: where the built approval inbox is (served at /inbox); default web/inbox/dist of this package. */
  inboxBuildDir?: string;
}

export interface ToolgateServer {
  httpServer: Server;
  yoga: YogaServerInstance<Record<string, never>, GraphQLContext>;
  services: Services;
  /** Listens and returns the URL of /graphql. */
  listen(port: number, host: string): Promise<string>;
  /** Runs one background sweep now (expiry, retention, recovery) and reports what it did. */
  sweep(): Promise<SweepReport>;
  close(): Promise<void>;
}

export async function createServer(options: ServerOptions): Promise<ToolgateServer> {
  // What the start has opened so far (a storage the caller opened included), closed in reverse order when a later
  // step fails: no MCP server process, Redis connection or database handle outlives a failed start.
  const opened: (() => Promise<void>)[] = [];
  const given = typeof options.storage === 'object' ? options.storage : null;
  if (given) opened.push(() => given.close());
  try {
    return await startServer(options, (close) => opened.push(close));
  } catch (error) {
    for (const close of opened.reverse()) await close().catch(() => {});
    throw error;
  }
}

async function startServer(
  options: ServerOptions,
  closeOnFailure: (close: () => Promise<void>) => void,
): Promise<ToolgateServer> {
  const config = options.config ?? demoConfig;
  const configFile = options.configFile ?? null;
  const where = configFile ?? '<config>';
  const logger = options.logger ?? defaultServerLogger();
  const onError = options.onError ?? ((error: unknown) => logger.error({ err: error }, 'unexpected fault'));

  // Tokens first: a missing env:NAME stops the start before anything is opened or spawned.
  const auth: Authenticator = options.authenticator ?? createAuthenticator(config, where);
  // The local mode: no tokens, whoever reaches the server is the admin user `local` (docs/security.md).
  const localMode = !options.authenticator && !config.auth;
  // Webhook secrets too (env:NAME, the whsec_ format).
  const webhookEndpoints = resolveWebhooks(config.webhooks, where);

  // Argument rules compile before anything opens: the loader checked a file's already, a config given in code not.
  const ruleProblems = [
    ...argumentRuleConfigProblems(config.agents, where),
    ...approversConfigProblems(config.agents, where),
  ];
  if (ruleProblems.length > 0) throw new ConfigError(ruleProblems.join('\n'));

  let storage: Storage | null = typeof options.storage === 'object' ? options.storage : null;

  // Models, plugins, tool sources, Redis, then the database: every check the config can fail comes before anything
  // is created or migrated there. Models and plugins before tool sources: no MCP server is spawned for a config
  // that fails there.
  const models = new Map<string, Model>();
  for (const [id, modelConfig] of Object.entries(config.models)) {
    if (!options.models?.[id]) models.set(id, createModel(modelConfig, `${where}: models.${id}`));
  }
  for (const [id, model] of Object.entries(options.models ?? {})) models.set(id, model);
  const pluginListeners = await loadPlugins(config.plugins, configFile);

  // All sources start in parallel; sources given in code replace the config's of the same id. The demo source's
  // entities live in the database, opened below: it reaches them only when a tool runs.
  const replaced = new Set((options.toolSources ?? []).map((source) => source.id));
  const sources = await createToolSources(
    Object.fromEntries(Object.entries(config.toolSources).filter(([id]) => !replaced.has(id))),
    { demoEntities: demoEntitiesOf(() => storage), configFile },
  );
  for (const source of options.toolSources ?? []) sources.set(source.id, source);
  const tools = new ToolRegistry(sources);
  closeOnFailure(() => tools.close());
  // An agent naming a tool that no source lists is a config error; the started sources stop again.
  checkAgentTools(config, where, await tools.allTools());

  // Redis, when the config names it, is reached now: an unreachable one stops the start (one line, like a config error).
  let pubsub = options.pubsub;
  if (!pubsub) {
    const own = await openPubSub({ config: config.pubsub, configFile: where, logger, onError });
    closeOnFailure(() => own.close());
    pubsub = own;
  }

  if (!storage) {
    const own =
      typeof options.storage === 'function'
        ? await options.storage()
        : await openStorage(options.database ?? ':memory:', 'database', {
            sqlite: { synchronous: options.synchronous, syncFile: options.syncFile },
            webhooks: webhookSubscriptions(webhookEndpoints),
          });
    closeOnFailure(() => own.close());
    storage = own;
  }
  // A store opened by the caller writes the events of the endpoints it was opened with: they must be the config's.
  if (!sameSubscriptions(storage.webhooks.subscriptions, webhookSubscriptions(webhookEndpoints))) {
    throw new Error(
      "createServer: the storage was opened without the config's webhooks; pass them to openStorage (selection.webhooks)",
    );
  }
  const opened: Storage = storage;
  const { store } = opened;
  const clock = options.clock ?? opened.clock;

  const now = clock().toISOString();
  for (const agent of config.agents) await store.syncAgent(agentFromConfig(agent), now);

  const listeners = new ListenerRegistry([
    ...(options.listeners ?? []),
    ...pluginListeners,
    new ToolConfirmationListener(),
  ]);

  // Registered at emit time, before the mutation's own flush(): when the fsync ends, the event goes out ahead of
  // the response (bench part 4 measures publish → receive). Flushes settle in the order they were asked for. An
  // event's flush is `soon`: it rides on the fsync of the request's next durable step instead of one of its own.
  const runnerEvents = createRunnerEventPublisher({ pubsub, flush: () => store.flush({ soon: true }), onError });
  // The log and metrics observers join here (src/observability/); observers from code come after them.
  const observers: LifecycleObserver[] = [lifecycleLogger(logger), ...(options.observers ?? [])];
  // Metrics (docs/observability.md, "Metrics"): none are kept when the config turns /metrics off.
  const metricsAccess = config.server?.metrics ?? 'admin';
  const metrics = metricsAccess === 'off' ? null : createMetrics({ store, clock, onError });
  if (metrics) observers.unshift(metrics.observer);
  /** Set when close() begins: /readyz then answers 503, so that a load balancer stops sending requests here. */
  let closing = false;
  const limits: Limits = {
    ...defaultLimits,
    ...definedOnly({
      maxRequestBytes: config.server?.maxRequestBytes ?? options.maxBodyBytes,
      maxMessageLength: config.server?.maxMessageLength,
      maxContentBytes: config.server?.maxContentBytes,
      maxToolArgumentsBytes: config.server?.maxToolArgumentsBytes,
      maxSubscriptionsPerSocket: config.server?.maxSubscriptionsPerSocket,
      maxSubscriptionsPerUser: config.server?.maxSubscriptionsPerUser,
      mcpSessionIdleSeconds: config.server?.mcpSessionIdleSeconds,
      maxMcpSessionsPerUser: config.server?.maxMcpSessionsPerUser,
    }),
    ...options.limits,
  };
  const runner = new AgentRunner({
    store,
    tools,
    listeners,
    clock,
    onError,
    observer: fanOut(observers, onError),
    lease: { leaseSeconds: options.leaseSeconds },
    maxRecoveries: options.maxRecoveries,
    maxToolArgumentsBytes: limits.maxToolArgumentsBytes,
    checkpoint: options.checkpoint,
    models: (id) => models.get(id),
    // An event goes out once what it reports is on disk (store.flush()), like a mutation's response: a client
    // never acts on a pause or an answer that a power loss could take back. Streamed text goes out at once, after
    // the turn's earlier events (src/events/runner-events.ts).
    events: runnerEvents,
  });
  const services: Services = { store, runner, tools, pubsub, clock, limits, turnText: runnerEvents };
  // GraphiQL and introspection: on for the local mode, off once tokens guard a reachable server, unless the config says.
  const exposed = {
    graphiql: config.server?.graphiql ?? !config.auth,
    introspection: config.server?.introspection ?? !config.auth,
  };

  const authentication = requestAuthentication(auth, () => metrics?.refusedCredentials());
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
      useReadiness({ store, sources, closing: () => closing }),
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
    context: (initial): GraphQLContext => ({
      viewer: webSocketViewer(initial) ?? authentication.viewerOf(initial.request),
      services,
      loaders: createLoaders(store),
    }),
  });

  // The approval inbox (/inbox) and the page at `/` are static files: answered before Yoga and its plugins.
  const inbox = createInboxSite(options.inboxBuildDir);
  // MCP clients at /mcp: their tools/call pass the same gate (src/mcp/), authenticated as /graphql is.
  const mcp = createMcpRoute({
    app: services,
    authenticator: auth,
    maxRequestBytes: limits.maxRequestBytes,
    progressIntervalMs: options.mcpProgressIntervalMs,
    taskPollIntervalMs: options.mcpTaskPollIntervalMs,
    sessionIdleMs: limits.mcpSessionIdleSeconds * 1000,
    maxSessionsPerUser: limits.maxMcpSessionsPerUser,
    logger,
    onRefused: () => metrics?.refusedCredentials(),
    onError,
  });
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
    if (inbox.handles(req)) {
      inbox.serve(req, res).catch((error: unknown) => {
        onError(error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end();
      });
      return;
    }
    if (mcp.handles(req)) {
      void mcp.serve(req, res);
      return;
    }
    void yoga.handle(req, res);
  });
  const webSockets = attachWebSocket({
    httpServer,
    refuse: (request) => foreign(request.headers),
    yoga,
    authenticator: auth,
    path: '/graphql',
    maxPayload: limits.maxRequestBytes,
    keepAliveMs: options.webSocketKeepAliveMs,
    logger,
  });
  metrics?.watchWebSockets(webSockets.activity);

  // Turns a dead process left RUNNING continue from their last persisted step (turns another live process runs are
  // left to it: leases, docs/durability.md); the sweeper repeats this, so a turn of a process that dies later is taken over too.
  await runner.recover();

  const sweeper = new Sweeper(runner, store, clock, {
    intervalSeconds: options.sweepIntervalSeconds ?? config.sweeper?.intervalSeconds,
    batchSize: options.sweepBatchSize ?? config.sweeper?.batchSize,
    retentionDays: options.retentionDays ?? config.sweeper?.retentionDays,
    idempotencyKeyHours: config.sweeper?.idempotencyKeyHours,
    onError,
  });
  sweeper.start();

  // Webhooks go out in the background, told of each commit that wrote some; requests never wait for them.
  const deliverer = new WebhookDeliverer({
    store,
    endpoints: webhookEndpoints,
    owner: runner.leaseOwner,
    clock,
    onError,
    logger,
    ...options.webhookDelivery,
  });
  const stopListening = opened.webhooks.onWritten(() => deliverer.nudge());
  deliverer.start();

  return {
    httpServer,
    yoga,
    services,
    sweep: () => sweeper.sweepOnce(),
    async listen(port, host) {
      if (localMode && !isLoopbackHost(host)) {
        throw new ConfigError(
          `HOST: "${host}" is not loopback; without an "auth" section in the config toolgate runs as the single admin user "local" and listens on loopback only`,
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
      return `http://${shownHost}:${address.port}/graphql`;
    },
    async close() {
      closing = true; // /readyz answers 503 from now on
      // Stop taking work; WebSockets go with 1001, subscriptions (SSE streams too) complete, in-flight
      // requests and running turns get until the deadline; paused turns are on disk and stay as they are.
      await sweeper.stop();
      // Attempts in flight end now; their deliveries stay in the outbox for the next process (or another instance).
      stopListening();
      const deliveriesStopped = deliverer.stop();
      // MCP sessions end first: their open streams would hold connections until the deadline. A call waiting for
      // confirmation stops waiting; the confirmation stays pending.
      await mcp.close();
      const deadline = Date.now() + (options.shutdownGraceMs ?? 5_000);
      const httpClosed = closeHttpServer(httpServer, deadline);
      await webSockets.close(Math.max(0, deadline - Date.now()));
      await pubsub.endSubscriptions();
      await httpClosed;
      await settleBy(runner.idle(), deadline);
      await deliveriesStopped;
      // After the turns: what they published until now still reached the subscribers of other instances (Redis).
      await pubsub.close();
      await tools.close();
      await opened.close();
    },
  };
}

function sameSubscriptions(a: readonly WebhookSubscription[], b: readonly WebhookSubscription[]): boolean {
  const key = (list: readonly WebhookSubscription[]) =>
    JSON.stringify(list.map(({ url, events }) => [url, [...events].sort()]).sort());
  return key(a) === key(b);
}

/** The entries whose value is set: absent settings keep their defaults. */
function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function agentFromConfig(agent: ToolgateConfig['agents'][number]): Agent {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description ?? null,
    modelId: agent.model ?? GATEWAY_MODEL_ID,
    systemPrompt: agent.systemPrompt,
    toolIds: agent.tools,
    requireToolConfirmation: agent.requireToolConfirmation,
    pauseTtlSeconds: agent.pauseTtlSeconds,
    maxIterations: agent.maxIterations,
    // toolConfirmation, issue 15's argument rules and allowEdit, and approvers
    ...gatingFromConfig(agent),
  };
}

/** The demo entities of a storage opened after the tool sources were made (a tool runs only once it is open). */
function demoEntitiesOf(storage: () => Storage | null): DemoEntities {
  const entities = () => {
    const opened = storage();
    if (!opened) throw new Error('the database is not open yet');
    return opened.demoEntities;
  };
  return {
    list: () => entities().list(),
    create: (name) => entities().create(name),
    delete: (ids) => entities().delete(ids),
  };
}
