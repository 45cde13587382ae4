// Helpers for the subscription resolvers: what was true when the client subscribed, then every change.
import type { Subscription } from '../events/pubsub.js';

/**
 * Yields `initial` first, then what `updates` delivers, minus the updates `skip` rejects. `updates` must have
 * been subscribed before `initial` was read, so that nothing falls between the two. `return()` ends both.
 */
export function startWith<T>(initial: T[], updates: Subscription<T>, skip?: (value: T) => boolean): Subscription<T> {
  const queue = [...initial];
  const live: Subscription<T> = {
    async next() {
      const value = queue.shift();
      if (value !== undefined) return { value, done: false };
      for (;;) {
        const result = await updates.next();
        if (result.done || !skip?.(result.value)) return result;
      }
    },
    return() {
      queue.length = 0;
      return updates.return();
    },
    listening: updates.listening,
    [Symbol.asyncIterator]() {
      return live;
    },
  };
  return live;
}
