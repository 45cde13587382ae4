// The pub/sub of several instances serving one database: the same ToolgatePubSub (src/events/pubsub.ts) on Yoga's
// Redis event target. Per process: two Redis connections (one publishes, one subscribes), one Redis SUBSCRIBE per
// channel however many local subscribers it has, and each message parsed once, so that every local subscriber of the
// channel gets the same record object (shared reads and shared event execution rely on that, as in process).
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { Redis, type RedisOptions } from 'ioredis';
import { firstLine, socketFailure } from '../config/connection-errors.js';
import { ConfigError } from '../config/load.js';
import type { Logger } from '../observability/logger.js';
import { createToolgatePubSub, type ToolgatePubSub } from './pubsub.js';

export const DEFAULT_REDIS_PREFIX = 'toolgate:';
/** How long the start waits for Redis before it gives up. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

export interface RedisPubSubOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). */
  url: string;
  /** Before every channel name; one per deployment sharing the Redis. Default `toolgate:`. */
  prefix?: string;
  /** Where the URL came from, for the start error: `TOOLGATE_REDIS`, `<file>: pubsub.redis`. */
  where?: string;
  connectTimeoutMs?: number;
  /** Connection lost, reconnecting, back: warnings and info lines. */
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** A publish or subscribe Redis refused (not a lost connection: those are retried). */
  onError?: (error: unknown) => void;
}

/**
 * Connects both clients (once each, within the timeout) and returns the pub/sub; rejects with a one-line ConfigError
 * naming host and port (never the password) when Redis cannot be reached. Afterwards a lost connection is retried
 * for as long as it takes (capped backoff): commands wait meanwhile, and the subscriber re-subscribes its channels.
 */
export async function createRedisPubSub(options: RedisPubSubOptions): Promise<ToolgatePubSub> {
  const where = options.where ?? 'redis';
  const target = parseRedisUrl(options.url, where);
  const logger = options.logger;
  const onError = options.onError ?? ((error: unknown) => logger?.warn({ err: error }, 'redis pub/sub command failed'));
  const clientOptions: RedisOptions = {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // The start check connects once; once started, retryStrategy is replaced by the backoff below.
    retryStrategy: () => null,
    // Commands wait for the reconnect however long it takes instead of failing after 20 attempts.
    maxRetriesPerRequest: null,
  };
  // Named after the prefix in CLIENT LIST (`toolgate:publish`, `toolgate:subscribe`): which deployment is which.
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const name = (role: string) => `${prefix}${role}`.replace(/[^\x21-\x7e]/g, '_');
  const publisher = new Redis(options.url, { ...clientOptions, connectionName: name('publish') });
  const subscriber = new Redis(options.url, { ...clientOptions, connectionName: name('subscribe') });
  const clients = [publisher, subscriber];

  const lastErrors = new Map<Redis, Error>();
  let started = false;
  for (const client of clients) {
    client.on('error', (error: Error) => {
      if (!started) lastErrors.set(client, error);
      else logger?.warn({ err: error, redis: target.shown }, `redis connection error: ${error.message}`);
    });
  }
  try {
    await Promise.all(clients.map((client) => client.connect()));
  } catch (error) {
    for (const client of clients) client.disconnect();
    const cause = lastErrors.get(publisher) ?? lastErrors.get(subscriber) ?? (error as Error);
    throw new ConfigError(`${where}: Redis at ${target.shown} cannot be reached (${describe(cause)})`);
  }
  started = true;
  for (const client of clients) {
    client.options.retryStrategy = (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 6), 5_000);
    client.on('reconnecting', (delayMs: number) =>
      logger?.warn({ redis: target.shown, delayMs }, 'redis connection lost; reconnecting'),
    );
    client.on('ready', () => logger?.info({ redis: target.shown }, 'redis connection ready'));
  }

  // What Yoga's event target calls on the clients, with every promise it leaves unhandled handled here: a refused
  // command is reported, never an unhandled rejection. SUBSCRIBE's promise tells `listening` when a channel is live.
  const subscribed = new Map<string, Promise<void>>();
  /** Set by endSubscriptions(): the subscriber connection is going; what it then refuses is no fault. */
  let subscriberQuit: Promise<void> | null = null;
  const publishClient = {
    publish: (channel: string, message: string) => publisher.publish(channel, message).catch(onError),
  };
  const subscribeClient = {
    on: (event: 'message', listener: (channel: string, message: string) => void) => subscriber.on(event, listener),
    subscribe(channel: string) {
      const done = subscriber.subscribe(channel).then(
        () => undefined,
        (error: unknown) => {
          if (!subscriberQuit) onError(error);
        },
      );
      subscribed.set(channel, done);
      return done;
    },
    unsubscribe(channel: string) {
      subscribed.delete(channel);
      return subscriber.unsubscribe(channel).catch((error: unknown) => {
        if (!subscriberQuit) onError(error);
      });
    },
  };
  const eventTarget = createRedisEventTarget({
    publishClient: publishClient as unknown as Redis,
    subscribeClient: subscribeClient as unknown as Redis,
  }) as unknown as EventTarget;

  let closed = false;
  const pubsub = createToolgatePubSub({
    eventTarget,
    channelPrefix: prefix,
    listening: (channel) => subscribed.get(channel) ?? Promise.resolve(),
  });
  const quit = async (client: Redis) => {
    // QUIT sends what is queued first; a client that cannot reach Redis is cut instead of waiting for it.
    if (client.status !== 'ready') return client.disconnect();
    await client.quit().then(
      () => undefined,
      () => client.disconnect(),
    );
  };
  const redisPubSub: ToolgatePubSub = {
    publish(topic, key, payload) {
      if (!closed) pubsub.publish(topic, key, payload);
    },
    subscribe: (topic, key) => pubsub.subscribe(topic, key),
    subscribeMany: (channels) => pubsub.subscribeMany(channels),
    endSubscriptions() {
      // Local subscriptions end (their channels are unsubscribed), then the subscriber connection goes; the
      // publisher stays until close(), for the events of turns that finish during the shutdown.
      subscriberQuit ??= pubsub.endSubscriptions().then(() => quit(subscriber));
      return subscriberQuit;
    },
    async close() {
      await redisPubSub.endSubscriptions();
      closed = true;
      await quit(publisher);
    },
  };
  return redisPubSub;
}

/** Host and port as shown in messages and logs (never user or password). */
function parseRedisUrl(url: string, where: string): { shown: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${where}: not a URL; expected redis://host:port`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new ConfigError(`${where}: expected a redis:// or rediss:// URL, got ${parsed.protocol}//…`);
  return { shown: `${parsed.hostname || '127.0.0.1'}:${parsed.port || '6379'}` };
}

/** Why a connection failed, in words. */
function describe(error: Error): string {
  const socket = socketFailure(error);
  if (socket) return socket;
  if (/ETIMEDOUT/.test(error.message)) return 'connection timed out';
  if (/WRONGPASS|NOAUTH|invalid username-password/i.test(error.message)) return 'authentication failed';
  return firstLine(error);
}
