// Real clients for the live transports: graphql-ws over a real WebSocket, graphql-sse and raw fetch over SSE;
// a model whose answers wait for the test; viewers of our own for the no-leak rule.
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import WebSocket from 'ws';
import { createInProcessPubSub, type ToolgatePubSub, type ToolgateTopics } from '../../src/events/pubsub.js';
import type { Viewer } from '../../src/graphql/builder.js';
import { NOT_AUTHENTICATED, type Authenticator } from '../../src/http/auth.js';
import { demoRules } from '../../src/models/scripted.js';
import type { Model, ModelRequest, ModelResponse } from '../../src/models/model.js';

export interface Received<T = any> {
  /** Everything received so far, in order. */
  readonly events: T[];
  /** Resolves with the first event (received already or later) that matches, else rejects after `timeoutMs`. */
  waitFor(match: (event: T) => boolean, what?: string, timeoutMs?: number): Promise<T>;
  /** Resolves when the server completes the operation (or it fails); holds the error if it failed. */
  readonly done: Promise<unknown>;
  stop(): void;
}

/** Collects what a subscription delivers, so a test can wait for what it expects. */
export function collector<T>(): Received<T> & {
  push(event: T): void;
  finish(error?: unknown): void;
  onStop(stop: () => void): void;
} {
  const events: T[] = [];
  const waiters: { match: (event: T) => boolean; resolve: (event: T) => void }[] = [];
  let finish!: (error?: unknown) => void;
  const done = new Promise<unknown>((resolve) => {
    finish = resolve;
  });
  let stopper: () => void = () => {};
  return {
    events,
    done,
    push(event) {
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    },
    finish: (error) => finish(error),
    onStop(stop) {
      stopper = stop;
    },
    stop: () => stopper(),
    waitFor(match, what = 'a matching event', timeoutMs = 5_000) {
      const seen = events.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`no ${what} within ${timeoutMs} ms; received: ${JSON.stringify(events)}`));
        }, timeoutMs);
        waiters.push({
          match,
          resolve: (event) => {
            clearTimeout(timer);
            resolve(event);
          },
        });
      });
    },
  };
}

export function wsUrl(httpUrl: string): string {
  return httpUrl.replace(/^http/, 'ws');
}

/** A graphql-ws client on the real `ws` WebSocket, without retries (a test wants to see every close). */
export function connectWs(
  httpUrl: string,
  authorization?: string,
  extra: Partial<Parameters<typeof createWsClient>[0]> = {},
): WsClient {
  return createWsClient({
    url: wsUrl(httpUrl),
    webSocketImpl: WebSocket,
    connectionParams: authorization ? { authorization } : {},
    retryAttempts: 0,
    lazy: true,
    ...extra,
  });
}

/** Subscribes over graphql-ws; events are the raw execution results ({data, errors}). */
export function subscribeWs<T = any>(
  client: WsClient,
  query: string,
  variables: Record<string, unknown> = {},
): Received<{ data?: T; errors?: any[] }> {
  return collect<T>((sink) => client.subscribe<T>({ query, variables }, sink));
}

type Result<T> = { data?: T; errors?: any[] };
type ResultSink = { next(result: unknown): void; error(error: unknown): void; complete(): void };

/** Feeds one subscription of either client into a collector that unsubscribes when stopped. */
function collect<T>(subscribe: (sink: ResultSink) => () => void): Received<Result<T>> {
  const received = collector<Result<T>>();
  const unsubscribe = subscribe({
    next: (result) => received.push(result as never),
    error: (error) => received.finish((error as Error | undefined) ?? new Error('subscription error')),
    complete: () => received.finish(),
  });
  received.onStop(unsubscribe);
  return received;
}

/** Subscribes with graphql-sse's client in distinct connections mode (what Yoga serves). */
export function connectSse(httpUrl: string, authorization?: string): SseClient {
  return createSseClient({ url: httpUrl, retryAttempts: 0, headers: authorization ? { authorization } : {} });
}

export function subscribeSse<T = any>(
  client: SseClient,
  query: string,
  variables: Record<string, unknown> = {},
): Received<{ data?: T; errors?: any[] }> {
  return collect<T>((sink) => client.subscribe<T>({ query, variables }, sink));
}

/**
 * Subscribes with plain fetch and `Accept: text/event-stream`; resolves once the response headers arrived
 * (the server's acknowledgement), with the events parsed from the stream.
 */
export async function subscribeFetch<T = any>(
  httpUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Received<{ data?: T; errors?: any[] }> & { status: number; contentType: string | null }> {
  const received = collector<{ data?: T; errors?: any[] }>();
  const abort = new AbortController();
  received.onStop(() => abort.abort());
  const response = await fetch(httpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === 'next' && data) received.push(JSON.parse(data));
          if (event === 'complete') {
            received.finish();
            return;
          }
        }
      }
      received.finish();
    } catch (error) {
      received.finish(error);
    }
  })();
  return Object.assign(received, { status: response.status, contentType: response.headers.get('content-type') });
}

/** The server's pub/sub (pass it to startHarness), telling a test when subscriptions start listening. */
export interface ObservedPubSub extends ToolgatePubSub {
  /**
   * Resolves once `count` more subscriptions (counted from this call) listen on `topic`/`key`: the acknowledgement
   * graphql-ws does not give, for a subscription that gets only what is published after it listens.
   */
  listening(topic: keyof ToolgateTopics, key: string, count?: number): Promise<void>;
}

export function observedPubSub(): ObservedPubSub {
  const pubsub = createInProcessPubSub();
  const waiters: { channel: string; left: number; resolve(): void }[] = [];
  const listens = (channel: string) => {
    for (const waiter of [...waiters]) {
      if (waiter.channel === channel && --waiter.left === 0) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  return {
    publish: (topic, key, payload) => pubsub.publish(topic, key, payload),
    subscribe(topic, key) {
      const subscription = pubsub.subscribe(topic, key);
      listens(`${topic}:${key}`);
      return subscription;
    },
    subscribeMany(channels) {
      const subscription = pubsub.subscribeMany(channels);
      for (const { topic, key } of channels) listens(`${topic}:${key}`);
      return subscription;
    },
    endSubscriptions: () => pubsub.endSubscriptions(),
    close: () => pubsub.close(),
    listening(topic, key, count = 1) {
      return new Promise<void>((resolve) => {
        waiters.push({ channel: `${topic}:${key}`, left: count, resolve });
      });
    },
  };
}

/** Test users: `Bearer <name>` is user <name>; `Bearer admin` an administrator; anything else is refused. */
export const testUsersAuthenticator: Authenticator = {
  authenticate(authorization) {
    const match = /^Bearer (\w+)$/.exec(authorization ?? '');
    if (!match) return Promise.resolve(NOT_AUTHENTICATED);
    return Promise.resolve({
      ok: true,
      viewer: { id: match[1]!, isAdmin: match[1] === 'admin', roles: [] } satisfies Viewer,
    });
  },
};

/**
 * The demo rules, but every answer waits until the test releases it: `release()` lets the oldest waiting
 * call answer. `calls` counts the calls that started.
 */
export class GatedModel implements Model {
  calls = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #released: number[] = [];
  #arrivals: (() => void)[] = [];

  async generate(request: ModelRequest): Promise<ModelResponse> {
    this.calls++;
    for (const arrived of this.#arrivals.splice(0)) arrived();
    await new Promise<void>((resolve) => {
      if (this.#released.length > 0) {
        this.#released.shift();
        resolve();
      } else this.#waiting.push(resolve);
    });
    return demoRules(request);
  }

  /** Lets one model call answer (now, or the next one that starts). */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#released.push(1);
  }

  /** Resolves once at least `count` calls have started. */
  async started(count: number): Promise<void> {
    while (this.calls < count) await new Promise<void>((resolve) => this.#arrivals.push(resolve));
  }
}
