// The composition root: the core (store, tools, models, listeners, the loop, pub/sub), the HTTP router on it and
// the background work on it (src/compose/), started in that order and closed in the order close() gives.
import type { Server } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import type { SweepReport } from './agent/sweeper.js';
import type { GraphQLContext } from './graphql/builder.js';
import type { Services } from './services.js';
import { demoConfig } from './config/demo.js';
import { createCore, unwindOnFailure, type CoreOptions } from './compose/core.js';
import { accessOf, createRouter, type RouterOptions } from './compose/router.js';
import { startBackground, type BackgroundOptions } from './compose/background.js';

export interface ServerOptions extends CoreOptions, RouterOptions, BackgroundOptions {
  /** close(): how long in-flight requests, closing WebSockets and running turns may take to finish, in ms. */
  shutdownGraceMs?: number;
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

/**
 * Starts a server; a start that fails closes what it opened (a storage the caller opened included), in reverse
 * order: no MCP server process, Redis connection or database handle outlives it.
 */
export function createServer(options: ServerOptions): Promise<ToolgateServer> {
  return unwindOnFailure((opened) => {
    const given = options.storage;
    if (typeof given === 'object') opened(() => given.close());
    return startServer(options, opened);
  });
}

async function startServer(
  options: ServerOptions,
  opened: (close: () => Promise<void>) => void,
): Promise<ToolgateServer> {
  // Tokens first: a missing env:NAME stops the start before anything is opened or spawned.
  const config = options.config ?? demoConfig;
  const access = accessOf(config, options.configFile ?? '<config>', options.authenticator);
  const core = await createCore({ ...options, config }, opened);
  /** Set when close() begins: /readyz then answers 503, so that a load balancer stops sending requests here. */
  let closing = false;
  const router = createRouter(core, { ...options, access, closing: () => closing });
  const background = await startBackground(core, options, access.identity.publicUrl);

  return {
    httpServer: router.httpServer,
    yoga: router.yoga,
    services: core.services,
    listen: (port, host) => router.listen(port, host),
    sweep: () => background.sweep(),
    async close() {
      closing = true; // /readyz answers 503 from now on
      // Stop taking work; WebSockets go with 1001, subscriptions (SSE streams too) complete, in-flight
      // requests and running turns get until the deadline; paused turns are on disk and stay as they are.
      await background.stopSweeps();
      const deliveriesStopped = background.stopDeliveries();
      const deadline = Date.now() + (options.shutdownGraceMs ?? 5_000);
      // MCP sessions end first: their open streams would hold connections until the deadline.
      await router.closeMcp(deadline);
      await router.closeHttp(deadline);
      await deliveriesStopped;
      // Running turns get until the deadline; then pub/sub, the tool sources and the store close.
      await core.close(deadline);
    },
  };
}
