// Which pub/sub a server uses, from its config and environment: the only place outside the implementations that
// knows there is more than one.
import type { PubSubConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { createInProcessPubSub, type ToolgatePubSub } from './pubsub.js';

export interface PubSubSelection {
  /** The config file's `pubsub` section, if any. */
  config?: PubSubConfig;
  /** The config file (for messages), or null for a config given in code. */
  configFile?: string | null;
  /** The environment to read TOOLGATE_REDIS from (the CLI passes process.env; embedders and tests, none). */
  env?: Record<string, string | undefined>;
  logger?: Pick<Logger, 'warn' | 'info'>;
  onError?: (error: unknown) => void;
}

/**
 * TOOLGATE_REDIS, else the config's `pubsub.redis`, selects Redis (connected and checked now: an unreachable Redis is
 * a ConfigError); without either, in process.
 */
export async function openPubSub(selection: PubSubSelection = {}): Promise<ToolgatePubSub> {
  const fromEnv = selection.env?.TOOLGATE_REDIS;
  const url = fromEnv || selection.config?.redis;
  if (!url) return createInProcessPubSub();
  // Loaded only here: a server without Redis does not pay for loading its client at every start.
  const { createRedisPubSub } = await import('./redis-pubsub.js');
  return createRedisPubSub({
    url,
    prefix: selection.config?.prefix,
    where: fromEnv ? 'TOOLGATE_REDIS' : `${selection.configFile ?? '<config>'}: pubsub.redis`,
    logger: selection.logger,
    onError: selection.onError,
  });
}

export type { ToolgatePubSub } from './pubsub.js';
