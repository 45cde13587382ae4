// Pub/sub for subscriptions, behind one small interface. In process now: Yoga's createPubSub on an EventTarget.
// Several instances serving one database replace the EventTarget with @graphql-yoga/redis-event-target
// (docs/live.md): nothing else changes.
import { setMaxListeners } from 'node:events';
import { createPubSub } from 'graphql-yoga';
import type { ElicitationRecord, TurnRecord } from '../db/store.js';

export type ToolgateTopics = {
  /** Every change of one turn. */
  turn: [turnId: string, turn: TurnRecord];
  /** New confirmation requests of one user. */
  elicitations: [ownerId: string, elicitation: ElicitationRecord];
};

type Topic = keyof ToolgateTopics;
type KeyOf<T extends Topic> = ToolgateTopics[T][0];
type PayloadOf<T extends Topic> = ToolgateTopics[T][1];

/** A live subscription: an async iterator whose `return()` ends it at once, even while a `next()` waits. */
export interface Subscription<T> extends AsyncIterableIterator<T> {
  return(): Promise<IteratorResult<T>>;
}

export interface ToolgatePubSub {
  /** Delivers to every subscriber of `topic`/`key` (a routing key: a turn id, an owner id). */
  publish<T extends Topic>(topic: T, key: KeyOf<T>, payload: PayloadOf<T>): void;
  /**
   * Listens from the moment of the call, not from the first `next()`: what is published after `subscribe`
   * returns is never missed, so a resolver can subscribe first and read the current state second.
   */
  subscribe<T extends Topic>(topic: T, key: KeyOf<T>): Subscription<PayloadOf<T>>;
  /** Ends every open subscription (graceful shutdown: SSE streams complete, WebSocket operations complete). */
  close(): Promise<void>;
}

/**
 * The EventTarget Yoga's createPubSub dispatches on: in-process by default, or a Redis event target
 * (`createRedisEventTarget({ publishClient, subscribeClient })`), which carries payloads as JSON.
 */
export interface PubSubOptions {
  eventTarget?: EventTarget;
}

export function createToolgatePubSub(options: PubSubOptions = {}): ToolgatePubSub {
  const eventTarget = options.eventTarget ?? new EventTarget();
  // Each subscriber adds a listener; Node warns past 10 by default.
  setMaxListeners(0, eventTarget);
  const yogaPubSub = createPubSub<ToolgateTopics>({ eventTarget: eventTarget as never });
  const open = new Set<Subscription<unknown>>();
  let closed = false;

  return {
    publish(topic, key, payload) {
      (yogaPubSub.publish as (topic: string, key: string, payload: unknown) => void)(topic, key, payload);
    },
    subscribe<T extends Topic>(topic: T, key: KeyOf<T>): Subscription<PayloadOf<T>> {
      const source = (yogaPubSub.subscribe as (topic: string, key: string) => AsyncGenerator<PayloadOf<T>>)(topic, key);
      // Yoga's subscribe returns a Repeater, which adds its event listener on the first next(): call it now.
      let first: Promise<IteratorResult<PayloadOf<T>>> | null = source.next();
      const subscription: Subscription<PayloadOf<T>> = {
        next() {
          const pending = first;
          first = null;
          return pending ?? source.next();
        },
        async return() {
          open.delete(subscription);
          first = null;
          return source.return(undefined);
        },
        [Symbol.asyncIterator]() {
          return subscription;
        },
      };
      open.add(subscription);
      // After close() (shutting down) a late subscriber ends at once instead of holding its connection open.
      if (closed) void subscription.return();
      return subscription;
    },
    async close() {
      closed = true;
      const subscriptions = [...open];
      open.clear();
      await Promise.allSettled(subscriptions.map((subscription) => subscription.return()));
    },
  };
}

/** The default: one process. */
export function createInProcessPubSub(): ToolgatePubSub {
  return createToolgatePubSub();
}
