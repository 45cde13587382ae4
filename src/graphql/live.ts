// Helpers for the subscription resolvers: what was true when the client subscribed, then every change.
import type { Subscription } from '../events/pubsub.js';

/**
 * Yields `initial` first, then what `updates` delivers, minus the updates `skip` rejects (one at a time, in order, also
 * when it must read to decide). `updates` must have been subscribed before `initial` was read, so that nothing falls
 * between the two. `return()` ends both.
 */
export function startWith<T>(
  initial: T[],
  updates: Subscription<T>,
  skip?: (value: T) => boolean | Promise<boolean>,
): Subscription<T> {
  const queue = [...initial];
  const live: Subscription<T> = {
    async next() {
      const value = queue.shift();
      if (value !== undefined) return { value, done: false };
      for (;;) {
        const result = await updates.next();
        if (result.done || !skip || !(await skip(result.value))) return result;
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

/**
 * Yields what `source` yields, and ends right after the first value `last` accepts (the subscription completes, and
 * `source` is returned).
 */
export function endAfter<T>(source: Subscription<T>, last: (value: T) => boolean): Subscription<T> {
  let ended = false;
  const ending: Subscription<T> = {
    async next() {
      if (ended) {
        await source.return();
        return { value: undefined, done: true };
      }
      const result = await source.next();
      if (!result.done && last(result.value)) ended = true;
      return result;
    },
    return() {
      ended = true;
      return source.return();
    },
    listening: source.listening,
    [Symbol.asyncIterator]() {
      return ending;
    },
  };
  return ending;
}

/**
 * The requests one subscription delivered, each kept until it expires (none is delivered after that): a long-lived
 * subscription holds only those that may still come again (offered to several of the viewer's roles, or offered
 * again when it escalates).
 */
export class DeliveredOnce {
  readonly #expiresAt = new Map<string, string>();

  constructor(records: readonly { id: string; expiresAt: string }[] = []) {
    for (const record of records) this.add(record);
  }

  has(id: string, now: string): boolean {
    for (const [held, expiresAt] of this.#expiresAt) if (expiresAt <= now) this.#expiresAt.delete(held);
    return this.#expiresAt.has(id);
  }

  add(record: { id: string; expiresAt: string }): void {
    this.#expiresAt.set(record.id, record.expiresAt);
  }
}
