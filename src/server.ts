// Wires the parts: store, tools, models, listeners, the loop, pub/sub and the GraphQL API on one node:http server.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { ListenerRegistry, type ToolPreExecuteListener } from './agent/event.js';
import { ToolConfirmationListener } from './agent/gating.js';
import { AgentRunner } from './agent/runner.js';
import type { Agent } from './agent/types.js';
import { demoConfig } from './config/demo.js';
import { loadPlugins } from './config/plugins.js';
import type { ToolgateConfig } from './config/schema.js';
import { openDatabase, SqliteStore } from './db/sqlite-store.js';
import { createInProcessPubSub } from './events/pubsub.js';
import type { GraphQLContext } from './graphql/builder.js';
import { localAuthenticator, type Authenticator } from './http/auth.js';
import { schema } from './graphql/schema.js';
import { createModel } from './models/index.js';
import type { Model } from './models/model.js';
import { defaultLimits, type Limits, type Services } from './services.js';
import { createToolSource } from './tools/index.js';
import { ToolRegistry } from './tools/registry.js';
import type { ToolSource } from './tools/tool.js';

export interface ServerOptions {
  /** The parsed config; default: the built-in demo. */
  config?: ToolgateConfig;
  /** The file the config came from: plugin paths are relative to it, errors name it. */
  configFile?: string | null;
  /** SQLite file path or ':memory:'. */
  database: string;
  /** Listeners from code, beside those of plugin modules and the confirmation listener. */
  listeners?: ToolPreExecuteListener[];
  /** Models by id that replace or add to the config's (tests: a scripted model with a script). */
  models?: Record<string, Model>;
  /** Tool sources that replace or add to the config's, by their id. */
  toolSources?: ToolSource[];
  clock?: () => Date;
  limits?: Partial<Limits>;
  /** Largest HTTP request body, in bytes. */
  maxBodyBytes?: number;
  /** Seconds between sweeps that expire paused turns; 0 turns the sweeper off. */
  sweepIntervalSeconds?: number;
  /** Where unexpected faults are reported (default: console.error). */
  onError?: (error: unknown) => void;
}

export interface ToolgateServer {
  httpServer: Server;
  yoga: YogaServerInstance<Record<string, never>, GraphQLContext>;
  services: Services;
  /** Listens and returns the URL of /graphql. */
  listen(port: number, host: string): Promise<string>;
  close(): Promise<void>;
}

export async function createServer(options: ServerOptions): Promise<ToolgateServer> {
  const config = options.config ?? demoConfig;
  const configFile = options.configFile ?? null;
  const where = configFile ?? '<config>';
  const clock = options.clock ?? (() => new Date());
  const onError = options.onError ?? ((error: unknown) => console.error('toolgate:', error));

  const sqlite = openDatabase({ path: options.database });
  const store = new SqliteStore(sqlite);

  const sources = new Map<string, ToolSource>();
  for (const [id, sourceConfig] of Object.entries(config.toolSources)) {
    sources.set(id, await createToolSource(id, sourceConfig, { db: sqlite, where: `${where}: toolSources.${id}` }));
  }
  for (const source of options.toolSources ?? []) sources.set(source.id, source);
  const tools = new ToolRegistry(sources);

  const models = new Map<string, Model>();
  for (const [id, modelConfig] of Object.entries(config.models)) {
    if (!options.models?.[id]) models.set(id, createModel(modelConfig, `${where}: models.${id}`));
  }
  for (const [id, model] of Object.entries(options.models ?? {})) models.set(id, model);

  const now = clock().toISOString();
  for (const agent of config.agents) await store.syncAgent(agentFromConfig(agent), now);

  const listeners = new ListenerRegistry([
    ...(options.listeners ?? []),
    ...(await loadPlugins(config.plugins, configFile)),
    new ToolConfirmationListener(),
  ]);

  const pubsub = createInProcessPubSub();
  const runner = new AgentRunner({
    store, tools, listeners, clock, onError,
    models: (id) => models.get(id),
    events: {
      turnChanged: (turn) => pubsub.publish('turn', turn.id, turn),
      elicitationsCreated: (elicitations) => {
        for (const elicitation of elicitations) pubsub.publish('elicitations', elicitation.ownerId, elicitation);
      },
    },
  });
  const services: Services = { store, runner, tools, pubsub, clock, limits: { ...defaultLimits, ...options.limits } };
  const auth: Authenticator = localAuthenticator;

  const yoga = createYoga<Record<string, never>, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maskedErrors: true,
    context: ({ request }): GraphQLContext => ({ viewer: auth.authenticate(request.headers.get('authorization'))!, services }),
  });

  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const httpServer = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' })
        .end(JSON.stringify({ errors: [{ message: `The request body is larger than ${maxBodyBytes} bytes.` }] }));
      req.resume();
      return;
    }
    void yoga.handle(req, res);
  });

  // Turns a dead process left RUNNING continue from their last persisted step.
  for (const turn of await store.listRunningTurns()) runner.resumeTurn(turn.id).catch(onError);

  const sweepSeconds = options.sweepIntervalSeconds ?? 5;
  const sweeper = sweepSeconds > 0
    ? setInterval(() => { runner.expireDue().catch(onError); }, sweepSeconds * 1000).unref()
    : null;

  return {
    httpServer,
    yoga,
    services,
    async listen(port, host) {
      await new Promise<void>((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, () => { httpServer.off('error', reject); resolve(); });
      });
      const address = httpServer.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${shownHost}:${address.port}/graphql`;
    },
    async close() {
      if (sweeper) clearInterval(sweeper);
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections?.();
      });
      await runner.idle();
      await tools.close();
      store.close();
    },
  };
}

function agentFromConfig(agent: ToolgateConfig['agents'][number]): Agent {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description ?? null,
    modelId: agent.model,
    systemPrompt: agent.systemPrompt,
    toolIds: agent.tools,
    requireToolConfirmation: agent.requireToolConfirmation,
    toolConfirmation: agent.toolConfirmation,
    pauseTtlSeconds: agent.pauseTtlSeconds,
    maxIterations: agent.maxIterations,
  };
}
