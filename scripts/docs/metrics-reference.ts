// docs/reference/metrics.md from the registries a server serves at /metrics: createMetrics's own (toolgate's metrics
// and Yoga's prometheus plugin) and the process's default metrics, as src/observability/metrics.ts builds them.
import { createSchema, createYoga } from 'graphql-yoga';
import type { Metric, Registry } from 'prom-client';
import { createMetrics, processMetrics, YOGA_LABELS } from '../../src/observability/metrics.js';
import { cell, code, generatedNotice, table } from './markdown.js';

interface Described {
  name: string;
  type: string;
  help: string;
  labels: string[];
}

/** prom-client keeps a metric's label names on the object; its type and help come with get(). */
async function describe(registry: Registry): Promise<Described[]> {
  const out: Described[] = [];
  for (const listed of registry.getMetricsAsArray()) {
    const metric = registry.getSingleMetric(listed.name) as Metric & { labelNames?: string[] };
    const { name, help, type } = await metric.get();
    // Histograms add `le` to their series; Yoga's plugin declares labels that the server leaves out (YOGA_LABELS).
    const labels = (metric.labelNames ?? []).filter((l) => l !== 'le' && YOGA_LABELS[l] !== false);
    out.push({ name, type: String(type), help, labels });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function metricsTable(metrics: Described[]): string {
  return table(
    ['Metric', 'Type', 'Labels', 'Help'],
    metrics.map((m) => [code(m.name), m.type, m.labels.map(code).join(', '), cell(m.help)]),
  );
}

export async function metricsReference(): Promise<string> {
  // A server's registry as createServer makes it; the store is only read at scrape time, which this never does.
  const metrics = createMetrics({ store: { countPendingElicitations: async () => 0 }, clock: () => new Date(0) });
  // Yoga's plugin registers its GraphQL metrics when a Yoga instance initializes it, as createServer's does.
  createYoga({ schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }), plugins: [metrics.yogaPlugin] });
  const server = await describe(metrics.registry);
  const own = server.filter((m) => m.name.startsWith('toolgate_'));
  const yoga = server.filter((m) => !m.name.startsWith('toolgate_'));
  const process = await describe(processMetrics());
  return `${generatedNotice("the server's prom-client registries (src/observability/metrics.ts)")}

# Metrics reference

Every metric \`GET /metrics\` serves, read from the prom-client registries a server builds
(\`src/observability/metrics.ts\`). Who may read \`/metrics\`, what the labels' values mean, and an example scrape:
[Observability](../observability.md#metrics).

## toolgate

${metricsTable(own)}

## GraphQL requests (Yoga's prometheus plugin)

Over HTTP, SSE and WebSocket alike, except \`graphql_yoga_http_duration\` (HTTP only).

${metricsTable(yoga)}

## The process (prom-client's default metrics)

Collected once per process, whatever the number of servers in it.

${metricsTable(process)}
`;
}
