// Readiness (GET /readyz) through Yoga's useReadinessCheck: ready when the database answers with every migration
// applied and every tool source can serve, and not while the server shuts down (a load balancer drains it). Liveness
// (/healthz) is Yoga's own healthCheckEndpoint. Neither needs a token: they say what is not ready, by name and
// state only (no paths, no errors' texts, no data), so they reveal nothing a caller could use.
import { useReadinessCheck, type Plugin } from 'graphql-yoga';
import type { Lifecycle } from '../domain/store.js';
import type { ToolSource, ToolSourceHealth } from '../tools/tool.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

export interface ReadinessOptions {
  store: Pick<Lifecycle, 'ping'>;
  sources: ReadonlyMap<string, ToolSource>;
  /** True once close() has begun. */
  closing: () => boolean;
}

/** What is not ready, one short line each; empty when ready. */
export async function readinessProblems(options: ReadinessOptions): Promise<string[]> {
  if (options.closing()) return ['shutting down'];
  const database = options.store.ping().then(
    (reason) => (reason ? [`database: ${reason}`] : []),
    () => ['database: does not answer'],
  );
  const sources = [...options.sources.values()].map(async (source) => {
    let health: ToolSourceHealth;
    try {
      health = (await source.health?.()) ?? { ready: true };
    } catch {
      health = { ready: false, reason: 'its health check failed' };
    }
    return health.ready ? [] : [`tool source "${source.id}": ${health.reason}`];
  });
  return (await Promise.all([database, ...sources])).flat();
}

/** 200 `ready`, or 503 `not ready` and one line per problem; plain text, never cached. */
export function useReadiness(options: ReadinessOptions): Plugin {
  return useReadinessCheck({
    endpoint: READY_PATH,
    async check({ fetchAPI }) {
      const problems = await readinessProblems(options);
      const headers = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' };
      if (problems.length === 0) return new fetchAPI.Response('ready\n', { status: 200, headers });
      return new fetchAPI.Response(`not ready\n${problems.join('\n')}\n`, { status: 503, headers });
    },
  });
}
