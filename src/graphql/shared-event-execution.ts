// One GraphQL execution per subscription event for all the subscribers who would get the same result, instead of
// one per subscriber. A published record reaches every local subscriber of its channel as the same object
// (src/events/pubsub.ts), and subscribers with the same document, variables and viewer get identical results from
// it: with 1,000 such subscribers, executing (and allocating) once instead of 1,000 times is most of the server's
// cost of an event. What stays per subscriber: its source stream (subscribe resolver, replay of what was pending
// when it asked for it, filters, dedup), error masking (Yoga's, on each subscriber's results) and delivery. Replayed
// records are read per subscriber, so they are executed per subscriber. Like src/graphql/shared-reads.ts, this
// relies on a published record being a snapshot: a later change publishes a record of its own.
import {
  createSourceEventStream,
  getOperationAST,
  GraphQLError,
  type ExecutionArgs,
  type ExecutionResult,
  type OperationDefinitionNode,
} from 'graphql';
// The executor Yoga runs each event with (a dependency of graphql-yoga, pinned in package.json overrides), so that a
// shared result is what each subscriber's own execution returned before.
import { buildExecutionContext, execute } from '@graphql-tools/executor';
import type { Plugin } from 'graphql-yoga';

export interface SharedEventExecutionOptions {
  /**
   * Everything besides the operation and its variables that the result of an event depends on in this context
   * (the viewer), as a string: subscriptions with equal keys share one execution per event, run with the context
   * of the first of them to take the event. null: this subscription executes each event on its own.
   */
  shareKey(context: object): string | null;
}

type MaybePromise<T> = T | Promise<T>;

/** Results by event (the payload object), then by share key. An event's entry goes once nobody holds the event. */
const resultsByEvent = new WeakMap<object, Map<string, MaybePromise<ExecutionResult>>>();
const ids = new WeakMap<object, number>();
let lastId = 0;

/** A number per object: the schema and the document go into share keys by identity (Yoga caches parsed documents). */
function idOf(object: object): number {
  let id = ids.get(object);
  if (id === undefined) ids.set(object, (id = ++lastId));
  return id;
}

function isPromiseLike<T>(value: MaybePromise<T> | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

/** A Yoga plugin: the subscriptions whose context has a share key execute each event once per key. */
export function useSharedEventExecution(options: SharedEventExecutionOptions): Plugin {
  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const contextKey = options.shareKey(args.contextValue as object);
      if (contextKey === null) return;
      const ownExecution = subscribeFn as (args: ExecutionArgs) => unknown;
      setSubscribeFn(((subscribeArgs: ExecutionArgs) =>
        subscribeShared(subscribeArgs, contextKey, ownExecution)) as never);
    },
  };
}

function subscribeShared(
  args: ExecutionArgs,
  contextKey: string,
  ownExecution: (args: ExecutionArgs) => unknown,
): unknown {
  const operation = getOperationAST(args.document, args.operationName);
  // What the executor refuses before the subscribe resolver runs (no such operation, bad variables) it answers
  // itself, with its error codes; no event follows.
  if (operation?.operation !== 'subscription' || Array.isArray(buildExecutionContext(args))) return ownExecution(args);
  // The variables as sent: subscriptions that differ in any of them execute apart, even when it only shapes their
  // source streams (elicitationRequested's includePending), whose results per event would be the same.
  const key = [
    contextKey,
    idOf(args.schema),
    idOf(args.document),
    args.operationName ?? '',
    JSON.stringify(args.variableValues ?? {}),
  ].join('\u0000');
  // CreateSourceEventStream: the field's subscribe resolver, or the errors it failed with (located at the field).
  const source = createSourceEventStream(args);
  const results = (stream: AsyncIterable<unknown> | ExecutionResult) =>
    Symbol.asyncIterator in stream
      ? new SharedEventResults(stream[Symbol.asyncIterator](), args, operation, key)
      : stream;
  return isPromiseLike(source) ? source.then(results) : results(source);
}

/** One subscriber's results: its own events, each executed at most once per share key. */
class SharedEventResults implements AsyncIterableIterator<ExecutionResult> {
  readonly #source: AsyncIterator<unknown>;
  readonly #args: ExecutionArgs;
  readonly #operation: OperationDefinitionNode;
  readonly #key: string;

  constructor(source: AsyncIterator<unknown>, args: ExecutionArgs, operation: OperationDefinitionNode, key: string) {
    this.#source = source;
    this.#args = args;
    this.#operation = operation;
    this.#key = key;
  }

  async next(): Promise<IteratorResult<ExecutionResult>> {
    let step: IteratorResult<unknown>;
    try {
      step = await this.#source.next();
    } catch (error) {
      // As the executor reports a failing source stream: an error located at the operation (then masked by Yoga).
      const cause = error instanceof Error ? error : new Error(String(error));
      throw new GraphQLError(cause.message, { nodes: [this.#operation], originalError: cause });
    }
    if (step.done) return { value: undefined, done: true };
    return { value: await this.#resultOf(step.value), done: false };
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    await this.#source.return?.();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #resultOf(event: unknown): MaybePromise<ExecutionResult> {
    if (typeof event !== 'object' || event === null) return this.#execute(event);
    let results = resultsByEvent.get(event);
    if (!results) resultsByEvent.set(event, (results = new Map()));
    let result = results.get(this.#key);
    if (!result) {
      // Field errors are part of the result, which every subscriber of this key gets (each masks its own copy).
      result = this.#execute(event);
      results.set(this.#key, result);
    }
    return result;
  }

  /**
   * ExecuteSubscriptionEvent: the operation with the event as its root value, as the executor runs each event. One
   * result, not an incremental one: the schema has no @defer or @stream.
   */
  #execute(event: unknown): MaybePromise<ExecutionResult> {
    return execute({ ...this.#args, rootValue: event }) as MaybePromise<ExecutionResult>;
  }
}
