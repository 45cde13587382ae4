// The load generator: autocannon's programmatic API, in this process (never the server's). Latencies are taken
// from autocannon's per-response event (float milliseconds; its own histogram rounds to whole milliseconds).
import autocannon from 'autocannon';
import { cpuTimeOf } from './processes.js';
import { percentile } from './stats.js';

const MAX_SAMPLES = 2_000_000;

export interface LoadOptions {
  url: string;
  connections: number;
  /** Run for this long... */
  durationSeconds?: number;
  /** ...or until this many responses (then `limitSeconds` bounds it). */
  amount?: number;
  limitSeconds?: number;
  /** One JSON body for every request... */
  body?: unknown;
  /** ...or a chain of requests each connection runs in a loop. */
  requests?: autocannon.Request[];
  /** The server's pid: its CPU time per response is measured too (robust when other processes load the machine). */
  serverPid?: number;
}

export interface LoadResult {
  responses: number;
  seconds: number;
  /** 2xx responses per second. */
  rate: number;
  p50: number;
  p99: number;
  /** Connection errors, timeouts and non-2xx answers. */
  errors: number;
  /** Server CPU milliseconds per 2xx response (NaN without serverPid). */
  cpuPerResponse: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const samples: number[] = [];
  let ok = 0;
  let bad = 0;
  const cpuBefore = options.serverPid ? cpuTimeOf(options.serverPid) : Number.NaN;
  const started = performance.now();
  let finish!: (result: autocannon.Result) => void;
  let fail!: (error: unknown) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const instance = autocannon(
    {
      url: options.url,
      connections: options.connections,
      pipelining: 1,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      timeout: 10,
      ...(options.amount ? { amount: options.amount } : { duration: options.durationSeconds ?? 3 }),
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      ...(options.requests && { requests: options.requests }),
    },
    (error, result) => (error ? fail(error) : finish(result)),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) {
      ok++;
      if (samples.length < MAX_SAMPLES) samples.push(responseTime);
    } else {
      bad++;
    }
  });
  const limitMs = (options.limitSeconds ?? (options.durationSeconds ?? 3) + 30) * 1000;
  const guard = setTimeout(() => instance.stop(), limitMs);
  const result = await done.finally(() => clearTimeout(guard));
  const seconds = (performance.now() - started) / 1000;
  const cpu = options.serverPid ? cpuTimeOf(options.serverPid) - cpuBefore : Number.NaN;
  return {
    responses: ok,
    seconds,
    rate: ok / seconds,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    errors: result.errors + result.timeouts + bad,
    cpuPerResponse: cpu / ok,
  };
}

/** One GraphQL request over HTTP POST; throws on GraphQL errors. */
export async function gql<T = any>(url: string, query: string, variables?: Record<string, unknown>): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  const json = (await response.json()) as { data?: T; errors?: unknown[] };
  if (json.errors?.length || !json.data) throw new Error(`GraphQL errors from ${url}: ${JSON.stringify(json.errors)}`);
  return json.data;
}
