// The core of a server, without any entrance: the config's checks, models, plugins, tool sources, pub/sub, the
// store, listeners, observers and the runner, built into the Services the use cases take. The HTTP router
// (router.ts) and the background work (background.ts) are built on it; a test of the use cases needs it alone.
import { ListenerRegistry, type ToolPreExecuteListener } from '../domain/gate/listeners.js';
import { ToolConfirmationListener } from '../domain/gate/gating.js';
import { fanOut, type LifecycleObserver } from '../agent/lifecycle.js';
import { AgentRunner, type RunnerOptions } from '../agent/runner.js';
import type { Agent } from '../domain/records.js';
import type { WebhookSubscription } from '../domain/webhook-events.js';
import { demoConfig } from '../config/demo.js';
import { loadPlugins } from '../config/plugins.js';
import { receiptSigners } from '../config/receipt-keys.js';
import { stepUpFromConfig } from '../config/step-up.js';
import type { ToolgateConfig } from '../config/schema.js';
import { openStorage, type Storage } from '../storage.js';
import type { DemoEntities } from '../domain/demo-entities.js';
import type { SyncFile } from '../db/sqlite/wal-sync.js';
import { openPubSub, type ToolgatePubSub } from '../events/index.js';
import { createRunnerEventPublisher } from '../events/runner-events.js';
import { settleBy } from '../http/shutdown.js';
import { createModel } from '../models/index.js';
import type { Model } from '../models/model.js';
import { ConfigError } from '../config/load.js';
import { defaultLimits, type Limits, type Services } from '../services.js';
import { checkAgentTools } from '../config/tool-ids.js';
import { approversConfigProblems, argumentRuleConfigProblems, gatingFromConfig } from '../config/agent-gating.js';
import { createToolSources } from '../tools/index.js';
import { lifecycleLogger } from '../observability/lifecycle-log.js';
import { defaultServerLogger, type Logger } from '../observability/logger.js';
import { createMetrics, type ToolgateMetrics } from '../observability/metrics.js';
import { ToolRegistry } from '../tools/registry.js';
import type { ToolSource } from '../tools/tool.js';
import { outboxSubscriptions, resolveWebhooks, type WebhookEndpoint } from '../config/webhooks.js';
import { resolveSlack, type SlackSettings } from '../config/slack.js';
import { GATEWAY_MODEL_ID } from '../domain/gateway.js';

export interface CoreOptions {
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
  /** Told what happens to turns, answers, tools and model calls (beside the server's own log and metrics). */
  observers?: LifecycleObserver[];
  /**
   * Pub/sub for subscriptions (closed by close()); default: the config's `pubsub` section (Redis, for several
   * instances on one database, docs/live.md), else in process. The CLI passes one built with openPubSub (TOOLGATE_REDIS).
   */
  pubsub?: ToolgatePubSub;
}

export interface Core {
  config: ToolgateConfig;
  /** How errors name the config: its file, else `<config>`. */
  where: string;
  logger: Logger;
  onError: (error: unknown) => void;
  /** What the use cases and the API reach: the store, the runner, the tools, pub/sub, the clock, the limits. */
  services: Services;
  storage: Storage;
  /** The config's webhook endpoints, their secrets resolved: the store writes their events, the deliverer sends them. */
  webhookEndpoints: WebhookEndpoint[];
  /** The config's Slack app (docs/slack.md), its secrets resolved; null without a `slack` section. */
  slack: SlackSettings | null;
  /** None when the config turns /metrics off. */
  metrics: ToolgateMetrics | null;
  /** Running turns get until `deadline` (epoch ms) to finish; then pub/sub, the tool sources and the store close. */
  close(deadline: number): Promise<void>;
}

/**
 * Runs a start that opens one thing after another: what it registered is closed again, in reverse order, when a
 * later step fails, so that no MCP server process, Redis connection or database handle outlives a failed start.
 */
export async function unwindOnFailure<T>(
  start: (opened: (close: () => Promise<void>) => void) => Promise<T>,
): Promise<T> {
  const opened: (() => Promise<void>)[] = [];
  try {
    return await start((close) => opened.push(close));
  } catch (error) {
    for (const close of opened.reverse()) await close().catch(() => {});
    throw error;
  }
}

/**
 * Checks the config and builds the core; every check the config can fail comes before the database is created or
 * migrated. What it opens is handed to `opened` as it goes (see unwindOnFailure).
 */
export async function createCore(options: CoreOptions, opened: (close: () => Promise<void>) => void): Promise<Core> {
  const config = options.config ?? demoConfig;
  const configFile = options.configFile ?? null;
  const where = configFile ?? '<config>';
  // Read first: a missing or bad signing key stops the start before anything is opened.
  const receiptKeys = receiptSigners(config, where);
  const logger = options.logger ?? defaultServerLogger();
  const onError = options.onError ?? ((error: unknown) => logger.error({ err: error }, 'unexpected fault'));

  // Webhook secrets (env:NAME, the whsec_ format) before anything is opened or spawned.
  const webhookEndpoints = resolveWebhooks(config.webhooks, where);
  const slack = resolveSlack(config, where);
  const subscriptions = outboxSubscriptions(config);

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
  opened(() => tools.close());
  // An agent naming a tool that no source lists is a config error; the started sources stop again.
  checkAgentTools(config, where, await tools.allTools());

  // Redis, when the config names it, is reached now: an unreachable one stops the start (one line, like a config error).
  let pubsub = options.pubsub;
  if (!pubsub) {
    const own = await openPubSub({ config: config.pubsub, configFile: where, logger, onError });
    opened(() => own.close());
    pubsub = own;
  }

  if (!storage) {
    const own =
      typeof options.storage === 'function'
        ? await options.storage()
        : await openStorage(options.database ?? ':memory:', 'database', {
            sqlite: { synchronous: options.synchronous, syncFile: options.syncFile },
            webhooks: subscriptions,
            receiptKeys,
          });
    opened(() => own.close());
    storage = own;
  }
  // A store opened by the caller writes the events of the endpoints it was opened with: they must be the config's.
  if (!sameSubscriptions(storage.webhooks.subscriptions, subscriptions)) {
    throw new Error(
      "createServer: the storage was opened without the config's webhooks; pass them to openStorage (selection.webhooks)",
    );
  }
  const openedStorage: Storage = storage;
  const { store } = openedStorage;
  const clock = options.clock ?? openedStorage.clock;

  const now = clock().toISOString();
  for (const agent of config.agents) await store.syncAgent(agentFromConfig(agent), now);

  const listeners = new ListenerRegistry([
    ...(options.listeners ?? []),
    ...pluginListeners,
    new ToolConfirmationListener(),
  ]);

  // Registered at emit time, before the mutation's own flush(): when the fsync ends, the event goes out ahead of
  // the response (bench part 4 measures publish → receive). Flushes settle in the order they were asked for. An
  // event's flush is `soon` (runner-events.ts says when not): it rides on the fsync of the request's next durable
  // step instead of one of its own.
  const runnerEvents = createRunnerEventPublisher({ pubsub, flush: ({ soon }) => store.flush({ soon }), onError });
  // The log and metrics observers join here (src/observability/); observers from code come after them.
  const observers: LifecycleObserver[] = [lifecycleLogger(logger), ...(options.observers ?? [])];
  // Metrics (docs/observability.md, "Metrics"): none are kept when the config turns /metrics off.
  const metrics = config.server?.metrics === 'off' ? null : createMetrics({ store, clock, onError });
  if (metrics) observers.unshift(metrics.observer);
  const limits: Limits = {
    ...defaultLimits,
    ...definedOnly({
      maxRequestBytes: config.server?.maxRequestBytes ?? options.maxBodyBytes,
      maxMessageLength: config.server?.maxMessageLength,
      maxContentBytes: config.server?.maxContentBytes,
      maxToolArgumentsBytes: config.server?.maxToolArgumentsBytes,
      maxToolArgumentsDepth: config.server?.maxToolArgumentsDepth,
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
    maxToolArgumentsDepth: limits.maxToolArgumentsDepth,
    checkpoint: options.checkpoint,
    models: (id) => models.get(id),
    // An event goes out once what it reports is on disk (store.flush()), like a mutation's response: a client
    // never acts on a pause or an answer that a power loss could take back. Streamed text goes out at once, after
    // the turn's earlier events (src/events/runner-events.ts).
    events: runnerEvents,
  });
  // Passkey step-up: the relying party is server.publicUrl when configured, else each request's Origin.
  const publicOrigin = config.server?.publicUrl ? new URL(config.server.publicUrl).origin : null;
  const passkeys = { required: stepUpFromConfig(config), publicOrigin };
  const services: Services = { store, runner, tools, pubsub, clock, limits, turnText: runnerEvents, passkeys };

  return {
    config,
    where,
    logger,
    onError,
    services,
    storage: openedStorage,
    webhookEndpoints,
    slack,
    metrics,
    async close(deadline) {
      await settleBy(runner.idle(), deadline);
      // After the turns: what they published until now still reached the subscribers of other instances (Redis).
      await services.pubsub.close();
      await tools.close();
      await openedStorage.close();
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
    // toolConfirmation, the argument rules and allowEdit, and approvers
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
