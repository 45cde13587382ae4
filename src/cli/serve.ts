// `toolgate` with no command: reads the environment, starts the server, stops it cleanly on SIGINT/SIGTERM.
import { listenFailure } from '../config/connection-errors.js';
import { demoConfig } from '../config/demo.js';
import { ConfigError, loadConfigFile } from '../config/load.js';
import { receiptSigners } from '../config/receipt-keys.js';
import { outboxSubscriptions } from '../config/webhooks.js';
import type { ToolgateConfig } from '../config/schema.js';
import { openStorage, storageTarget } from '../storage.js';
import { openPubSub } from '../events/index.js';
import { isLoopbackHost } from '../http/auth.js';
import { MCP_PATH } from '../http/mcp-route.js';
import { reservePort } from '../http/reserved-port.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createServer } from '../server.js';

let logger: Logger | undefined;

async function main(): Promise<void> {
  // First: a bad LOG_LEVEL is a config error like any other.
  const log = (logger = createLogger());
  const host = process.env.HOST || '127.0.0.1';
  // Empty is unset, as for every other variable (Number('') would be 0: a random port).
  const port = Number(process.env.PORT || 4000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT: "${process.env.PORT}" is not a port number`);
  const loaded = process.env.TOOLGATE_CONFIG ? loadConfigFile(process.env.TOOLGATE_CONFIG) : null;
  if (!loaded?.config.auth && !isLoopbackHost(host)) {
    throw new ConfigError(
      `HOST: "${host}" is not loopback; without an "auth" section in the config toolgate runs as the single admin user "local" and listens on loopback only`,
    );
  }
  // TOOLGATE_DB (or the config's `database` section): a postgres:// URL is PostgreSQL, reached now; else SQLite.
  const selection = {
    config: loaded?.config.database,
    configFile: loaded?.file ?? null,
    env: process.env,
    // The store writes the events of the config's webhook endpoints (createServer checks their secrets).
    webhooks: outboxSubscriptions(loaded?.config),
    // Read now: a missing or bad key stops the start before the database is created.
    receiptKeys: receiptSigners(loaded?.config, loaded?.file ?? '<config>'),
  };
  const { target, where } = storageTarget(selection);
  // The port is held before anything starts: one that is in use stops the start before the database is created.
  const reserved = await reservePort(port, host).catch((error: unknown) => {
    const failure = listenFailure(error, host, port);
    throw failure ? new ConfigError(failure) : error;
  });
  // TOOLGATE_REDIS (or the config's `pubsub` section): Redis between instances, checked now; else in process.
  const pubsub = await openPubSub({
    config: loaded?.config.pubsub,
    configFile: loaded?.file ?? null,
    env: process.env,
    logger: log,
  });
  // The database opens last, once the config passed every check: a refused start creates and migrates nothing.
  let shown = '';
  const server = await createServer({
    config: loaded?.config,
    configFile: loaded?.file ?? null,
    storage: async () => {
      const storage = await openStorage(target, where, selection);
      shown = storage.shown;
      return storage;
    },
    logger: log,
    pubsub,
  }).catch(async (error: unknown) => {
    await pubsub.close();
    await reserved.release();
    throw error;
  });
  await reserved.release();
  const url = await server.listen(reserved.port, host).catch(async (error: unknown) => {
    await server.close();
    const failure = listenFailure(error, host, reserved.port);
    throw failure ? new ConfigError(failure) : error;
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${signal}, shutting down`);
    const force = setTimeout(() => {
      log.fatal('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000).unref();
    server.close().then(
      () => {
        clearTimeout(force);
        process.exit(0);
      },
      (error: unknown) => {
        log.fatal({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Before the line that says it serves: whoever waits for that line may signal at once, and a signal with no
  // handler yet ends the process without its shutdown.
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // The inbox is served beside the API (src/http/inbox.ts), and /mcp when an agent is a gateway (src/http/mcp-route.ts):
  // the line names each, so a new user finds the page and the endpoint to point an MCP client at.
  const inbox = new URL('/inbox', url).href;
  const mcp = servesGateway(loaded?.config ?? demoConfig) ? new URL(MCP_PATH, url).href : null;
  log.info(
    { url, inbox, mcp, database: shown, config: loaded?.file ?? null },
    `serving ${loaded ? loaded.file : 'the built-in demo'} at ${url}, the approval inbox at ${inbox}` +
      `${mcp ? `, the MCP gateway at ${mcp}` : ''} (database ${shown})`,
  );
}

/** Whether the config has a gateway (an agent without a model), which /mcp serves. */
function servesGateway(config: ToolgateConfig): boolean {
  return config.agents.some((agent) => agent.model === undefined);
}

/** Starts the server; a config error is one line on stderr, without a stack, anything else a fatal log line. */
export function serve(): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) console.error(`toolgate: ${error.message}`);
    else if (logger) logger.fatal({ err: error }, 'failed to start');
    else console.error(error);
    process.exit(1);
  });
}
