// Pub/sub for subscriptions, behind one small interface: Yoga's createPubSub on an EventTarget. In process by default;
// several instances serving one database use a Redis event target instead (src/events/redis-pubsub.ts, docs/live.md):
// nothing else changes.
import { setMaxListeners } from 'node:events';
import { GraphQLError } from 'graphql';
import { createPubSub } from 'graphql-yoga';
import type { ElicitationRecord, TurnRecord } from '../domain/records.js';

/**
 * A piece of the text of one model call of a turn, as the model generated it (topic `turnText`, keyed by turn id).
 * Plain JSON, so that it crosses Redis unchanged.
 */
export interface TurnTextDelta {
  kind: 'textDelta';
  turnId: string;
  /** Which model call of the turn (1 for the first): the turn's `iterations` once its answer is saved. */
  iteration: number;
  /** Its place among the deltas of this call: 0, 1, 2, … */
  index: number;
  /** Where `text` starts in the call's text, in UTF-16 code units (JavaScript string length). */
  offset: number;
  text: string;
}

export type ToolgateTopics = {
  /** Every change of one turn. */
  turn: [turnId: string, turn: TurnRecord];
  /** New confirmation requests of one user. */
  elicitations: [ownerId: string, elicitation: ElicitationRecord];
  /**
   * Requests offered to the approvers of one role: at the pause to its policy's roles, at the escalation to the
   * escalation roles. Subscribers still decide per viewer whether they may answer (four eyes, the escalation time).
   */
  approverElicitations: [role: string, elicitation: ElicitationRecord];
  /** Every change of one request after it was made: an answer counted under a quorum, its resolution, its escalation. */
  elicitation: [elicitationId: string, elicitation: ElicitationRecord];
  /** The text of one turn's model calls as it is generated: best-effort, never stored (src/events/runner-events.ts). */
  turnText: [turnId: string, delta: TurnTextDelta];
};

type Topic = keyof ToolgateTopics;
type KeyOf<T extends Topic> = ToolgateTopics[T][0];
type PayloadOf<T extends Topic> = ToolgateTopics[T][1];
/** One channel: a topic and its routing key. */
export type Channel = { [T in Topic]: { topic: T; key: KeyOf<T> } }[Topic];

/** A live subscription: an async iterator whose `return()` ends it at once, even while a `next()` waits. */
export interface Subscription<T> extends AsyncIterableIterator<T> {
  return(): Promise<IteratorResult<T>>;
  /**
   * Resolves once what any instance publishes reaches this subscription: at once in process; with Redis once Redis
   * confirmed the SUBSCRIBE of its channel. A resolver that reads the current state awaits it first. Never rejects.
   */
  readonly listening: Promise<void>;
}

export interface ToolgatePubSub {
  /** Delivers to every subscriber of `topic`/`key` (a routing key: a turn id, an owner id). */
  publish<T extends Topic>(topic: T, key: KeyOf<T>, payload: PayloadOf<T>): void;
  /**
   * Listens from the moment of the call, not from the first `next()`: what is published after `subscribe`
   * returns is never missed, so a resolver can subscribe first and read the current state second.
   */
  subscribe<T extends Topic>(topic: T, key: KeyOf<T>): Subscription<PayloadOf<T>>;
  /**
   * One subscription to several channels (a turn's changes and its text): their events in one stream, in the order
   * they were published (one instance publishes all of a turn's; Redis keeps one connection's order across channels).
   * Listening as `subscribe`; `listening` resolves once every channel is live.
   */
  subscribeMany<C extends Channel>(channels: readonly C[]): Subscription<PayloadOf<C['topic']>>;
  /**
   * Ends every open subscription (graceful shutdown: SSE streams complete, WebSocket operations complete); later
   * subscribers end at once. Publishing goes on: turns still finishing reach the subscribers of other instances.
   */
  endSubscriptions(): Promise<void>;
  /** endSubscriptions(), and lets go of connections (Redis): publishing after it does nothing. */
  close(): Promise<void>;
}

/**
 * The EventTarget Yoga's createPubSub dispatches on: in-process by default, or a Redis event target
 * (`createRedisEventTarget({ publishClient, subscribeClient })`), which carries payloads as JSON.
 */
export interface PubSubOptions {
  eventTarget?: EventTarget;
  /** Put before every channel name (`toolgate:` gives `toolgate:turn:<id>`): deployments sharing one Redis stay apart. */
  channelPrefix?: string;
  /** Resolves once the target delivers what is published on `channel` anywhere (never rejects); default: at once. */
  listening?: (channel: string) => Promise<void>;
}

/**
 * A subscriber whose queue holds this many undelivered events (its client stopped reading) is ended with an error
 * rather than buffering without bound. Yoga's Repeater had the same bound, but threw from the publisher's dispatch.
 */
export const MAX_QUEUED_EVENTS = 1024;

export function createToolgatePubSub(options: PubSubOptions = {}): ToolgatePubSub {
  const eventTarget = options.eventTarget ?? new EventTarget();
  const prefix = options.channelPrefix ?? '';
  const listening = options.listening ?? (() => Promise.resolve());
  // One listener per channel, not per subscriber; Redis-backed targets may add their own per channel anyway.
  if (eventTarget instanceof EventTarget) setMaxListeners(0, eventTarget);
  // Publishing stays Yoga's, so that the event names and payloads on the target (and on Redis) are unchanged.
  const yogaPubSub = createPubSub<ToolgateTopics>({ eventTarget: eventTarget as never });
  // Subscribers by channel (Yoga's event name `${topic}:${key}`). One listener per channel hands each event to every
  // local subscriber: per subscriber that is one queue push, and they all receive the same payload object, which is
  // what lets the per-event work above this (reads, GraphQL execution) be shared by them.
  const channels = new Map<string, Set<EventQueue<unknown>>>();
  const open = new Set<EventQueue<unknown>>();
  let closed = false;

  const dispatch = (event: Event) => {
    const queues = channels.get(event.type);
    if (!queues) return;
    const payload = (event as CustomEvent).detail as unknown;
    for (const queue of queues) queue.push(payload);
  };

  const leave = (channel: string, queue: EventQueue<unknown>) => {
    open.delete(queue);
    const queues = channels.get(channel);
    if (!queues?.delete(queue) || queues.size > 0) return;
    channels.delete(channel);
    eventTarget.removeEventListener(channel, dispatch);
  };

  const subscribeMany = <C extends Channel>(wanted: readonly C[]): Subscription<PayloadOf<C['topic']>> => {
    const names = [...new Set(wanted.map(({ topic, key }) => `${prefix}${topic}:${key}`))];
    const queue: EventQueue<unknown> = new EventQueue(() => {
      for (const channel of names) leave(channel, queue);
    });
    // After close() (shutting down) a late subscriber ends at once instead of holding its connection open.
    if (closed) {
      queue.listening = Promise.resolve();
      void queue.return();
      return queue as EventQueue<PayloadOf<C['topic']>>;
    }
    open.add(queue);
    for (const channel of names) {
      let queues = channels.get(channel);
      if (!queues) {
        channels.set(channel, (queues = new Set()));
        // Listening from here on: what is published after subscribe() returns is never missed.
        eventTarget.addEventListener(channel, dispatch);
      }
      queues.add(queue);
    }
    queue.listening = Promise.all(names.map(listening)).then(() => undefined);
    return queue as EventQueue<PayloadOf<C['topic']>>;
  };

  return {
    publish(topic, key, payload) {
      (yogaPubSub.publish as (topic: string, key: string, payload: unknown) => void)(`${prefix}${topic}`, key, payload);
    },
    subscribe<T extends Topic>(topic: T, key: KeyOf<T>): Subscription<PayloadOf<T>> {
      return subscribeMany([{ topic, key } as Channel]) as Subscription<PayloadOf<T>>;
    },
    subscribeMany,
    async endSubscriptions() {
      closed = true;
      await Promise.allSettled([...open].map((queue) => queue.return()));
    },
    close() {
      return this.endSubscriptions();
    },
  };
}

/** The events of one subscriber not yet taken, and its next() waiting for one. */
class EventQueue<T> implements Subscription<T> {
  readonly #buffer: T[] = [];
  #waiting: ((result: IteratorResult<T>) => void) | null = null;
  #ended = false;
  #failure: Error | null = null;
  readonly #onEnd: () => void;
  listening: Promise<void> = Promise.resolve();

  constructor(onEnd: () => void) {
    this.#onEnd = onEnd;
  }

  push(value: T): void {
    if (this.#ended) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = null;
      waiting({ value, done: false });
    } else if (this.#buffer.length < MAX_QUEUED_EVENTS) {
      this.#buffer.push(value);
    } else {
      // What is buffered is still delivered first; then the subscription fails (graphql-ws: an error message).
      // A GraphQLError with a code: the client is told why (and can subscribe again), not "Unexpected error.", and the
      // server does not log an expected condition as a fault.
      this.#failure = new GraphQLError(
        `This subscription fell more than ${MAX_QUEUED_EVENTS} events behind and was ended; subscribe again.`,
        { extensions: { code: 'SUBSCRIBER_TOO_SLOW' } },
      );
      this.#end();
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#buffer.length > 0) return Promise.resolve({ value: this.#buffer.shift()!, done: false });
    if (this.#failure) {
      const failure = this.#failure;
      this.#failure = null;
      return Promise.reject(failure);
    }
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.#buffer.length = 0;
    this.#failure = null;
    this.#end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onEnd();
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting?.({ value: undefined, done: true });
  }
}

/** The default: one process. */
export function createInProcessPubSub(): ToolgatePubSub {
  return createToolgatePubSub();
}
