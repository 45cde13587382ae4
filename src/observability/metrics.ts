// Prometheus metrics, served at GET /metrics: GraphQL request metrics from Yoga's prometheus plugin, the process's
// default metrics (prom-client), and toolgate's own (`toolgate_`), fed by a LifecycleObserver and read at scrape time.
// Every server has its own Registry (tests start many servers in one process; prom-client's global registry is
// never used). Labels come from the config only (tool ids, model ids) or from small fixed sets (status, action,
// outcome): never a turn, thread, user, token, operation name or variable value.
import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import type { Plugin } from 'graphql-yoga';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LifecycleObserver } from '../agent/lifecycle.js';
import type { Reads } from '../domain/store.js';

/** `server.metrics` of the config: who may read /metrics. */
export type MetricsAccess = 'admin' | 'public' | 'off';

export const METRICS_PATH = '/metrics';

/** Who sent a request, from its Authorization header, or why not; src/http/auth.ts gives one. */
export interface MetricsAuthenticator {
  authenticate(
    authorization: string | null,
  ): Promise<{ ok: true; viewer: { isAdmin: boolean } } | { ok: false; status: 401 | 503; reason: string }>;
}

/** What the WebSocket gauges read at scrape time: src/http/websocket.ts counts both. */
export interface WebSocketActivity {
  /** graphql-ws connections that were accepted (connection_init authenticated) and are still open. */
  readonly connections: number;
  /** Subscriptions streaming events on them now. */
  readonly subscriptions: number;
}

export interface MetricsOptions {
  store: Pick<Reads, 'countPendingElicitations'>;
  clock: () => Date;
  /** Where a failed read at scrape time is reported (the gauge then keeps its last value). */
  onError?: (error: unknown) => void;
}

export interface ToolgateMetrics {
  /** This server's metrics (not the process's: exposition() adds those). */
  readonly registry: Registry;
  /** Give it to the runner: turns, answers, tools and model calls. */
  readonly observer: LifecycleObserver;
  /** Yoga's prometheus plugin on this registry: GraphQL request count, duration, errors and HTTP duration. */
  readonly yogaPlugin: Plugin;
  /** Counts an HTTP request refused for its credentials (401), before its document was parsed. */
  refusedCredentials(): void;
  /** The WebSocket gauges read `activity` from now on (the transport starts after the metrics). */
  watchWebSockets(activity: WebSocketActivity): void;
  /** The text of /metrics: this server's metrics and the process's, in Prometheus text format. */
  exposition(): Promise<string>;
  readonly contentType: string;
}

/**
 * The labels of Yoga's metrics, by name; false leaves a label out. Labels a client chooses are unbounded (one series
 * per value, kept forever) and may carry data: the operation name, the URL (a GET's query string holds the query and
 * its variables), an error's path (list indexes).
 */
export const YOGA_LABELS: Readonly<Record<string, boolean>> = {
  operationName: false,
  url: false,
  path: false,
  fieldName: false,
  typeName: false,
  returnType: false,
};

/** Seconds from a pause to its answer: from a quick click to a day (a turn's pause lasts at most pauseTtlSeconds). */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200, 86_400];
const TOOL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const MODEL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

let processRegistry: Registry | null = null;

/**
 * The process's default metrics (CPU, memory, event loop lag, GC, handles), collected once per process: they
 * describe the process, not a server, and each collection starts an event-loop monitor and a GC observer that
 * are never stopped, so one per server would pile up in a process that starts many. Exported for the docs'
 * metrics reference (scripts/docs/metrics-reference.ts).
 */
export function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics(options: MetricsOptions): ToolgateMetrics {
  const registry = new Registry();
  const registers = [registry];
  processMetrics(); // started now, so that the first scrape already has an event-loop lag to report
  const onError = options.onError ?? ((error: unknown) => console.error('toolgate: metrics:', error));
  let webSockets: WebSocketActivity | null = null;

  new Gauge({
    name: 'toolgate_elicitations_pending',
    help: 'Confirmation requests waiting for an answer (PENDING, not expired), read from the database at scrape time',
    registers,
    async collect() {
      try {
        this.set(await options.store.countPendingElicitations(options.clock().toISOString()));
      } catch (error) {
        onError(error);
      }
    },
  });
  const waited = new Histogram({
    name: 'toolgate_elicitation_wait_seconds',
    help: 'Time from the pause to the answer of a confirmation request, by the answer',
    labelNames: ['action'],
    buckets: WAIT_BUCKETS,
    registers,
  });
  const expired = new Counter({
    name: 'toolgate_elicitations_expired_total',
    help: 'Confirmation requests closed unanswered because their turn expired',
    registers,
  });
  const toolRuns = new Counter({
    name: 'toolgate_tool_runs_total',
    help: 'Tool calls run (after consent where asked), by tool id and outcome: ok, error, interrupted (a crash left it unknown)',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const toolDuration = new Histogram({
    name: 'toolgate_tool_duration_seconds',
    help: "A tool's own run time (interrupted runs are not measured), by tool id",
    labelNames: ['tool'],
    buckets: TOOL_BUCKETS,
    registers,
  });
  const unauthenticated = new Counter({
    name: 'toolgate_http_unauthenticated_total',
    help: 'GraphQL requests over HTTP refused for missing or invalid credentials (401), before their document was parsed',
    registers,
  });
  const turnsStarted = new Counter({
    name: 'toolgate_turns_started_total',
    help: 'Turns started (startTurn)',
    registers,
  });
  const turnsEnded = new Counter({
    name: 'toolgate_turns_total',
    help: 'Turns that reached a final status: COMPLETED, FAILED, CANCELLED, EXPIRED',
    labelNames: ['status'],
    registers,
  });
  const modelCalls = new Histogram({
    name: 'toolgate_model_call_duration_seconds',
    help: 'One model call (a turn iteration), by model id (the config key) and outcome: ok, error',
    labelNames: ['model', 'outcome'],
    buckets: MODEL_BUCKETS,
    registers,
  });
  new Gauge({
    name: 'toolgate_websocket_connections',
    help: 'Open graphql-ws connections that were accepted (authenticated at connection_init)',
    registers,
    collect() {
      this.set(webSockets?.connections ?? 0);
    },
  });
  new Gauge({
    name: 'toolgate_subscriptions',
    help: 'Active GraphQL subscriptions over WebSocket',
    registers,
    collect() {
      this.set(webSockets?.subscriptions ?? 0);
    },
  });

  const observer: LifecycleObserver = {
    onLifecycle(event) {
      switch (event.type) {
        case 'turnStarted':
          turnsStarted.inc();
          break;
        case 'turnEnded':
          turnsEnded.inc({ status: event.turn.status });
          break;
        case 'elicitationAnswered':
          waited.observe({ action: event.action }, event.waitedMs / 1000);
          break;
        case 'elicitationsExpired':
          expired.inc(event.count);
          break;
        case 'toolFinished':
          toolRuns.inc({ tool: event.toolCall.toolId, outcome: event.outcome });
          if (event.outcome !== 'interrupted')
            toolDuration.observe({ tool: event.toolCall.toolId }, event.durationMs / 1000);
          break;
        case 'modelCalled':
          modelCalls.observe({ model: event.modelId, outcome: event.outcome }, event.durationMs / 1000);
          break;
        default:
          break;
      }
    },
  };

  const yogaPlugin = usePrometheus({
    registry,
    // /metrics is served by useMetricsEndpoint below, behind the access rule.
    endpoint: false,
    metrics: {
      graphql_envelop_request: true,
      graphql_envelop_request_duration: true,
      graphql_envelop_error_result: true,
      graphql_yoga_http_duration: true,
      // Per phase, a summary, per resolver, deprecations, schema changes: noise for an operator; off.
      graphql_envelop_request_time_summary: false,
      graphql_envelop_phase_parse: false,
      graphql_envelop_phase_validate: false,
      graphql_envelop_phase_context: false,
      graphql_envelop_phase_execute: false,
      graphql_envelop_phase_subscribe: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
      graphql_envelop_execute_resolver: false,
    },
    labels: YOGA_LABELS,
  });

  return {
    registry,
    observer,
    yogaPlugin,
    refusedCredentials: () => unauthenticated.inc(),
    contentType: registry.contentType,
    watchWebSockets(activity) {
      webSockets = activity;
    },
    exposition() {
      return Registry.merge([processMetrics(), registry]).metrics();
    },
  };
}

/**
 * GET /metrics as a Yoga plugin, before every other: `public` answers anyone; `admin` asks the server's
 * Authenticator (the API's tokens): no valid token 401, a non-admin user 403. Without an `auth` section the
 * authenticator makes everyone the admin `local` (the server listens on loopback only), so it is open there.
 * `off`: nothing, so /metrics is Yoga's 404 (createServer then keeps no metrics at all).
 */
export function useMetricsEndpoint(options: {
  metrics: ToolgateMetrics;
  access: MetricsAccess;
  authenticator: MetricsAuthenticator;
  onError?: (error: unknown) => void;
}): Plugin {
  if (options.access === 'off') return {};
  return {
    onRequest({ request, url, fetchAPI, endResponse }) {
      if (url.pathname !== METRICS_PATH) return undefined;
      const text = (body: string, status: number, headers: Record<string, string> = {}) =>
        new fetchAPI.Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } });
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(text('Method not allowed: GET /metrics.\n', 405, { allow: 'GET, HEAD' }));
        return undefined;
      }
      const expose = () =>
        options.metrics.exposition().then(
          (body) =>
            endResponse(new fetchAPI.Response(body, { headers: { 'content-type': options.metrics.contentType } })),
          (error: unknown) => {
            (options.onError ?? console.error)(error);
            endResponse(text('The metrics could not be collected.\n', 500));
          },
        );
      if (options.access !== 'admin') return expose();
      return options.authenticator.authenticate(request.headers.get('authorization')).then((authentication) => {
        if (!authentication.ok && authentication.status === 503) {
          endResponse(text(`Authentication unavailable: ${authentication.reason}; try again later.\n`, 503));
          return undefined;
        }
        if (!authentication.ok) {
          endResponse(
            text('Authentication required: send "Authorization: Bearer <token>" with an admin token.\n', 401, {
              'www-authenticate': 'Bearer',
            }),
          );
          return undefined;
        }
        if (!authentication.viewer.isAdmin) {
          endResponse(text('Forbidden: /metrics is for admin users (config server.metrics).\n', 403));
          return undefined;
        }
        return expose();
      });
    },
  };
}
