// One info line per GraphQL request over HTTP, when it ends: operation name and type, viewer, HTTP status, error
// count, duration. Requests refused before execution (401, 413, parse and validation errors) are logged too, with
// their status. Never the document, variables, headers or error messages: those can hold what users wrote and
// their tokens. Other paths (GraphiQL, health, metrics) are logged at debug only. WebSocket operations do not pass
// here (src/http/websocket.ts logs their connections). MCP requests (/mcp) get a line of their own, as plain.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getOperationAST, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin, type YogaLogger } from 'graphql-yoga';
import type { Logger } from 'pino';
import { roundMs } from './logger.js';

/** What the log reads of a request's GraphQL context: who made it, once authenticated. */
interface RequestLogContext {
  viewer?: { id: string } | null;
}

interface RequestEntry {
  startedAt: number;
  method: string;
  path: string;
  operationName: string | null;
  operationType: string | null;
  viewerId: string | null;
  errors: number;
}

interface WithErrors {
  errors?: readonly unknown[];
}

/** The Fetch request of an operation's context; absent for operations over WebSocket. */
function requestOf(context: unknown): Request | undefined {
  return (context as { request?: Request } | undefined)?.request;
}

function countErrors(result: unknown): number {
  if (Array.isArray(result)) return result.reduce((sum: number, one) => sum + countErrors(one), 0);
  if (result && typeof result === 'object' && !isAsyncIterable(result))
    return (result as WithErrors).errors?.length ?? 0;
  return 0;
}

/** A body that streams for as long as the operation lasts (subscriptions over SSE, @defer/@stream). */
function isStreamed(response: Response): boolean {
  const type = response.headers.get('content-type') ?? '';
  return type.startsWith('text/event-stream') || type.startsWith('multipart/mixed');
}

export function useRequestLog(logger: Logger): Plugin<RequestLogContext> {
  const entries = new WeakMap<Request, RequestEntry>();
  let graphqlEndpoint = '/graphql';
  const entryOf = (context: unknown) => {
    const request = requestOf(context);
    return request ? entries.get(request) : undefined;
  };
  const countNext = (context: unknown) => {
    const entry = entryOf(context);
    if (!entry) return undefined;
    return {
      onNext({ result }: { result: unknown }) {
        entry.errors += countErrors(result);
      },
    };
  };

  return {
    onYogaInit({ yoga }) {
      graphqlEndpoint = yoga.graphqlEndpoint;
    },
    onRequest({ request, url }) {
      entries.set(request, {
        startedAt: performance.now(),
        method: request.method,
        path: url.pathname,
        operationName: null,
        operationType: null,
        viewerId: null,
        errors: 0,
      });
    },
    onParams({ request, params }) {
      const entry = entries.get(request);
      if (entry) entry.operationName = params.operationName ?? null;
    },
    onValidate({ context, params }) {
      const entry = entryOf(context);
      if (!entry) return;
      const operation = getOperationAST(params.documentAST, entry.operationName ?? undefined);
      if (!operation) return;
      entry.operationType = operation.operation;
      entry.operationName = operation.name?.value ?? entry.operationName;
    },
    onContextBuilding() {
      return ({ context }) => {
        const entry = entryOf(context);
        if (entry) entry.viewerId = context.viewer?.id ?? null;
      };
    },
    // Results that stream (SSE, @defer/@stream) are counted as they go; single results in onResultProcess.
    onExecute({ args }) {
      return {
        onExecuteDone({ result }) {
          return isAsyncIterable(result) ? countNext(args.contextValue) : undefined;
        },
      };
    },
    onSubscribe({ args }) {
      return { onSubscribeResult: () => countNext(args.contextValue) };
    },
    onResultProcess({ request, result }) {
      const entry = entries.get(request);
      if (entry) entry.errors += countErrors(result);
    },
    onResponse({ request, response, serverContext }) {
      const entry = entries.get(request);
      if (!entry || entry.path !== graphqlEndpoint || response.headers.get('content-type')?.startsWith('text/html')) {
        if (logger.isLevelEnabled('debug')) {
          logger.debug(
            {
              method: request.method,
              path: entry?.path ?? new URL(request.url, 'http://localhost').pathname,
              status: response.status,
            },
            'http request',
          );
        }
        return;
      }
      const write = () =>
        logger.info(
          {
            method: entry.method,
            operationName: entry.operationName,
            operationType: entry.operationType,
            viewerId: entry.viewerId,
            status: response.status,
            errors: entry.errors,
            durationMs: roundMs(performance.now() - entry.startedAt),
          },
          'graphql request',
        );
      // A streamed response is logged when the stream ends (or the client goes away), with its whole duration.
      const res = (serverContext as { res?: ServerResponse }).res;
      if (isStreamed(response) && res && typeof res.once === 'function' && !res.writableEnded) res.once('close', write);
      else write();
    },
  };
}

/**
 * One info line per /mcp request when its response ends ("mcp request"): method, path, viewer (set by the caller once
 * authenticated), status, duration. A streamed response (a call waiting for a person, a client's GET stream) is
 * logged when the stream ends, with its whole duration; `status` is null when the client left before any answer.
 * Never the body (a call's arguments), the headers or the session id.
 */
export function mcpRequestLog(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): { viewerId: string | null } {
  const startedAt = performance.now();
  const entry = { viewerId: null as string | null };
  res.once('close', () =>
    logger.info(
      {
        method: req.method,
        path,
        viewerId: entry.viewerId,
        status: res.headersSent ? res.statusCode : null,
        durationMs: roundMs(performance.now() - startedAt),
      },
      'mcp request',
    ),
  );
  return entry;
}

/** The innermost error: what a resolver or a plugin threw, behind the GraphQLErrors that wrap it. */
function rootError(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

/**
 * Yoga's own logger on ours. Yoga reports each error it masks for the client ("Unexpected error.") here: it goes to
 * the log with its stack. Yoga's debug chatter (several lines per request) goes to trace.
 */
export function yogaLogger(logger: Logger): YogaLogger {
  // Yoga reports an error masked outside execution twice (its maskError wrapper, then handleError): once is enough.
  const logged = new WeakSet<Error>();
  const write = (level: 'trace' | 'info' | 'warn' | 'error', args: unknown[]) => {
    if (!logger.isLevelEnabled(level)) return;
    const error = args.find((arg) => arg instanceof Error);
    if (error) {
      if (logged.has(error)) return;
      logged.add(error);
      const path = error instanceof GraphQLError ? error.path : undefined;
      logger[level]({ err: rootError(error), path }, 'internal error, masked to the client as "Unexpected error."');
    } else logger[level](args.map(String).join(' '));
  };
  return {
    debug: (...args) => write('trace', args),
    info: (...args) => write('info', args),
    warn: (...args) => write('warn', args),
    error: (...args) => write('error', args),
  };
}
