// How many subscriptions a client may hold open at once: per WebSocket, and per user on this instance (WebSocket and
// SSE together). Each open subscription holds its operation's context, its reads and a pub/sub queue; unbounded, one
// socket can hold tens of thousands of them and hundreds of megabytes. One more than allowed gets a GraphQL error
// with code TOO_MANY_SUBSCRIPTIONS and never starts (its resolver does not run), and those already open go on. A
// subscription frees its slot when it ends, however it ends: completed, failed, stopped by the client, or its socket
// or stream closed.
import { GraphQLError, type ExecutionArgs } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../graphql/builder.js';

export interface SubscriptionLimitOptions {
  /** Open subscriptions one WebSocket may hold. */
  maxPerSocket: number;
  /** Open subscriptions one user may hold on this instance, over every socket and SSE stream. */
  maxPerUser: number;
  /** The WebSocket an operation came over (any object that stands for it), or null for SSE. */
  socketOf: (context: object) => object | null;
}

export function tooManySubscriptionsError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } });
}

/**
 * The Yoga plugin. It must come after every plugin that sets its own subscribe function (useSharedEventExecution):
 * it wraps the one in place when it runs, and it is that wrapper that frees the slot.
 */
export function useSubscriptionLimits(options: SubscriptionLimitOptions): Plugin<Partial<GraphQLContext>> {
  const bySocket = new WeakMap<object, number>();
  const byUser = new Map<string, number>();

  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn, setResultAndStopExecution }) {
      const context = args.contextValue as Partial<GraphQLContext>;
      const socket = options.socketOf(context);
      const userId = context.viewer?.id ?? null;
      const onSocket = socket ? (bySocket.get(socket) ?? 0) : 0;
      const ofUser = userId === null ? 0 : (byUser.get(userId) ?? 0);
      if (socket && onSocket >= options.maxPerSocket) {
        const message = `This connection has ${options.maxPerSocket} subscriptions open, the most it may have; end one before starting another.`;
        setResultAndStopExecution({ errors: [tooManySubscriptionsError(message)] });
        return;
      }
      if (userId !== null && ofUser >= options.maxPerUser) {
        const message = `You have ${options.maxPerUser} subscriptions open on this server, the most a user may have; end one before starting another.`;
        setResultAndStopExecution({ errors: [tooManySubscriptionsError(message)] });
        return;
      }
      // Counted now, before anything is awaited: subscriptions that arrive together cannot all pass the check.
      if (socket) bySocket.set(socket, onSocket + 1);
      if (userId !== null) byUser.set(userId, ofUser + 1);
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        if (socket) bySocket.set(socket, bySocket.get(socket)! - 1);
        if (userId !== null) {
          const left = byUser.get(userId)! - 1;
          if (left > 0) byUser.set(userId, left);
          else byUser.delete(userId);
        }
      };
      const subscribe = subscribeFn as (args: ExecutionArgs) => unknown;
      setSubscribeFn((async (subscribeArgs: ExecutionArgs) => {
        let result: unknown;
        try {
          result = await subscribe(subscribeArgs);
        } catch (error) {
          release();
          throw error;
        }
        // Refused by its resolver (NOT_FOUND, bad variables): one result, nothing stays open.
        if (!isAsyncIterable(result)) {
          release();
          return result;
        }
        return releasing(result, release);
      }) as never);
    },
  };
}

/** `source`, calling `release` once when it ends: done, failed, or returned (the client stopped, the socket closed). */
function releasing<T>(source: AsyncIterable<T>, release: () => void): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  return {
    async next() {
      try {
        const step = await iterator.next();
        if (step.done) release();
        return step;
      } catch (error) {
        release();
        throw error;
      }
    },
    async return(value?: unknown) {
      release();
      return (await iterator.return?.(value)) ?? { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      release();
      if (iterator.throw) return iterator.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
