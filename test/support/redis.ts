// The machine's Redis (127.0.0.1:6379, REDIS_URL overrides) as the Redis tests look at it from outside the servers:
// who subscribes to a channel, and a network fault dropping the subscriber connections. The tests fail, not skip,
// when it does not answer.
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface RedisAdmin {
  /** How many connections subscribe to `channel` (its full name, prefix included). */
  subscribers(channel: string): Promise<number>;
  /** The CLIENT LIST lines, one per connection. */
  clients(): Promise<string>;
  /**
   * Kills the subscriber connections of the pub/subs with this `prefix` (CLIENT KILL TYPE pubsub would hit other test
   * files'), as a lost connection would: how many it killed.
   */
  killSubscribers(prefix: string): Promise<number>;
  quit(): Promise<void>;
}

export async function connectRedisAdmin(): Promise<RedisAdmin> {
  const admin = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, connectTimeout: 3_000 });
  admin.on('error', () => {});
  await admin.connect().catch(() => {
    throw new Error(`These tests need Redis at ${REDIS_URL} (set REDIS_URL to use another); it cannot be reached.`);
  });
  return {
    async subscribers(channel) {
      const [, count] = (await admin.pubsub('NUMSUB', channel)) as [string, number];
      return count;
    },
    clients: () => admin.call('CLIENT', 'LIST') as Promise<string>,
    async killSubscribers(prefix) {
      const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
      const ids = list
        .split('\n')
        .filter((line) => line.includes(` name=${prefix}subscribe `))
        .map((line) => /\bid=(\d+)/.exec(line)![1]!);
      for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id);
      return ids.length;
    },
    quit: async () => void (await admin.quit()),
  };
}
