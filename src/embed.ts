// toolgate inside another Node program: the package's createServer (src/index.ts). A small facade over the server's
// wiring (src/server.ts), whose options also hold test hooks and whose result holds its internals: an embedder
// chooses the config, the database, tools written in code and the log, and gets a server to listen with, or handlers
// to mount in a node:http server of its own, and close(). What it promises is checked by `npm run package-api:check`.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { demoConfig } from './config/demo.js';
import type { ToolgateConfig } from './config/schema.js';
import { outboxSubscriptions } from './config/webhooks.js';
import { isLoopbackHost } from './http/auth.js';
import { INBOX_PATH } from './http/inbox.js';
import { MCP_PATH } from './http/mcp-route.js';
import { HEALTH_PATH, READY_PATH } from './observability/health.js';
import { METRICS_PATH } from './observability/metrics.js';
import { createServer as createToolgateServer } from './server.js';
import { DEFAULT_SQLITE_PATH, openStorage } from './storage.js';
import type { ToolSource } from './tools/tool.js';

export interface ToolgateOptions {
  /** The config (loadConfigFile(path).config, or parseConfig(object)); default: the built-in demo. */
  config?: ToolgateConfig;
  /** The file the config came from: plugin paths and an MCP server's `cwd` are relative to it; errors name it. */
  configFile?: string | null;
  /**
   * Where the state lives: an SQLite file (created with its folder), ':memory:', or a postgres:// URL. Default: the
   * config's `database.url`, else ./data/toolgate.db, as the `toolgate` command. No environment variable is read.
   */
  database?: string;
  /**
   * Tool sources written in code (defineToolSource). The config names each as `{"type": "builtin"}`, so that its
   * agents may list its tools; a source given here replaces the config's of the same id.
   */
  toolSources?: ToolSource[];
  /** The log (pino). Default: warnings and errors on stderr. */
  logger?: Logger;
  /** How long close() lets in-flight requests and running tools finish, in ms (default 5000). */
  shutdownGraceMs?: number;
}

export interface Toolgate {
  /** Its own node:http server, which listen() starts; not used when toolgate is mounted in yours. */
  readonly httpServer: Server;
  /**
   * Listens on its own server and returns the URL of its GraphQL endpoint. Without an `auth` section in the config
   * (everyone is the admin user "local") only a loopback host is allowed (default 127.0.0.1).
   */
  listen(port: number, host?: string): Promise<string>;
  /**
   * Whether a request is toolgate's, by its path: /graphql (GraphiQL, and WebSocket subscriptions), /mcp and /mcp/…,
   * /inbox and /inbox/…, /healthz, /readyz, /metrics. Not `/`: in your server that stays yours.
   */
  handles(request: IncomingMessage): boolean;
  /**
   * Answers a request of your node:http server (its 'request' event). Without an `auth` section only requests that
   * reached a loopback address are served; others get 403.
   */
  handleRequest(request: IncomingMessage, response: ServerResponse): void;
  /** Takes a WebSocket upgrade to /graphql from your server's 'upgrade' event (graphql-ws subscriptions). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * Stops: /readyz answers 503, WebSockets close with 1001, subscriptions and MCP sessions end, running tools get
   * shutdownGraceMs to finish; paused turns stay in the database. Call it before closing a server it is mounted in.
   * Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

const EXACT_PATHS = new Set(['/graphql', HEALTH_PATH, READY_PATH, METRICS_PATH]);
const TREE_PATHS = [MCP_PATH, INBOX_PATH];

/** Starts toolgate: checks the config, starts its tool sources, opens (and migrates) the database. */
export async function createServer(options: ToolgateOptions = {}): Promise<Toolgate> {
  const config = options.config ?? demoConfig;
  const configFile = options.configFile ?? null;
  const [target, where] = options.database
    ? [options.database, 'createServer: database']
    : config.database
      ? [config.database.url, `${configFile ?? '<config>'}: database.url`]
      : [DEFAULT_SQLITE_PATH, 'createServer: database'];
  const server = await createToolgateServer({
    config,
    configFile,
    toolSources: options.toolSources,
    logger: options.logger,
    shutdownGraceMs: options.shutdownGraceMs,
    // Opened once the config has passed every check, as the command does: a refused start creates no database.
    storage: () =>
      openStorage(target, where, {
        config: config.database,
        configFile,
        webhooks: outboxSubscriptions(config),
      }),
  });
  const { httpServer } = server;
  const localMode = !config.auth;
  let closed: Promise<void> | undefined;
  return {
    httpServer,
    listen: (port, host = '127.0.0.1') => server.listen(port, host),
    handles(request) {
      const path = new URL(request.url ?? '/', 'http://toolgate').pathname;
      return EXACT_PATHS.has(path) || TREE_PATHS.some((tree) => path === tree || path.startsWith(`${tree}/`));
    },
    handleRequest(request, response) {
      if (localMode && !reachedLoopback(request)) {
        response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`${LOCAL_MODE_REFUSAL}\n`);
        return;
      }
      httpServer.emit('request', request, response);
    },
    handleUpgrade(request, socket, head) {
      if (localMode && !reachedLoopback(request)) {
        socket.end(
          `HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
            `Content-Length: ${Buffer.byteLength(LOCAL_MODE_REFUSAL)}\r\n\r\n${LOCAL_MODE_REFUSAL}`,
        );
        return;
      }
      httpServer.emit('upgrade', request, socket, head);
    },
    // Once: a second call (a signal handler and a test's cleanup, say) waits for the first.
    close: () => (closed ??= server.close()),
  };
}

const LOCAL_MODE_REFUSAL =
  'toolgate has no "auth" section in its config (everyone is the admin user "local"): it answers on loopback addresses only';

/** The local mode's rule for a server it does not listen with: the connection reached a loopback address. */
function reachedLoopback(request: IncomingMessage): boolean {
  const address = request.socket.localAddress ?? '';
  return isLoopbackHost(address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address);
}
