// GET /metrics over real HTTP: toolgate's own metrics through a paused → answered → completed turn, an expiry, a
// restart and a real graphql-ws subscriber; Yoga's request metrics; who may read it (server.metrics, admin
// tokens); and that no token, variable value or client-chosen name ever reaches the output.
import { afterEach, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { startHarness, type Harness } from '../support/harness.js';
import { connectWs, observedPubSub, subscribeWs } from '../support/live.js';
import { call, callStep, manualClock, startScenario, textStep, type Scenario } from '../support/scenario.js';
import { until } from '../support/wait.js';

/** One sample of a Prometheus text exposition: its name and labels as written. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels`; undefined when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, wanted]) => s.labels[key] === wanted),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

const metricsUrl = (h: Harness) => h.url.replace('/graphql', '/metrics');

async function scrape(h: Harness, headers: Record<string, string> = {}): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(metricsUrl(h), { headers });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text, samples: parseExposition(text) };
}

let s: Scenario | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await s?.close();
  await h?.close();
  s = undefined;
  h = undefined;
});

describe('toolgate metrics through a turn', () => {
  it('paused → ACCEPT after 40 s → completed: pending 1 then 0, one ACCEPT wait of 40 s, one ok tool run, one COMPLETED turn', async () => {
    const clock = manualClock();
    s = await startScenario({
      tools: [{ name: 'delete_note', annotations: { destructiveHint: true } }],
      script: [callStep(call('delete_note', { id: 'n1' })), textStep('Deleted.')],
      clock: clock.now,
    });
    const before = (await scrape(s.h)).samples;
    expect(value(before, 'toolgate_elicitations_pending')).toBe(0);
    expect(value(before, 'toolgate_turns_started_total')).toBe(0);

    const { turn } = await s.start('delete n1');
    expect(turn.status).toBe('PAUSED');
    const paused = (await scrape(s.h)).samples;
    expect(value(paused, 'toolgate_elicitations_pending')).toBe(1);
    expect(value(paused, 'toolgate_turns_started_total')).toBe(1);
    expect(value(paused, 'toolgate_tool_runs_total', { tool: 't:delete_note' })).toBeUndefined();
    expect(value(paused, 'toolgate_elicitation_wait_seconds_count', { action: 'ACCEPT' })).toBeUndefined();

    clock.advance(40);
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    const after = (await scrape(s.h)).samples;
    expect(value(after, 'toolgate_elicitations_pending')).toBe(0);
    expect(value(after, 'toolgate_elicitation_wait_seconds_count', { action: 'ACCEPT' })).toBe(1);
    expect(value(after, 'toolgate_elicitation_wait_seconds_sum', { action: 'ACCEPT' })).toBe(40);
    expect(value(after, 'toolgate_elicitation_wait_seconds_bucket', { action: 'ACCEPT', le: '30' })).toBe(0);
    expect(value(after, 'toolgate_elicitation_wait_seconds_bucket', { action: 'ACCEPT', le: '60' })).toBe(1);
    expect(value(after, 'toolgate_elicitation_wait_seconds_count', { action: 'DECLINE' })).toBeUndefined();
    expect(value(after, 'toolgate_tool_runs_total', { tool: 't:delete_note', outcome: 'ok' })).toBe(1);
    expect(value(after, 'toolgate_tool_runs_total', { tool: 't:delete_note', outcome: 'error' })).toBeUndefined();
    expect(value(after, 'toolgate_tool_duration_seconds_count', { tool: 't:delete_note' })).toBe(1);
    expect(value(after, 'toolgate_turns_total', { status: 'COMPLETED' })).toBe(1);
    expect(value(after, 'toolgate_turns_total', { status: 'FAILED' })).toBeUndefined();
    // Two model calls: the one that asked for the tool, and the one that answered after it ran.
    expect(value(after, 'toolgate_model_call_duration_seconds_count', { model: 'scripted', outcome: 'ok' })).toBe(2);
    expect(value(after, 'toolgate_elicitations_expired_total')).toBe(0);
    // Yoga's plugin: two HTTP mutations (start, answer) so far, by operation type only.
    expect(value(after, 'graphql_yoga_http_duration_count', { operationType: 'mutation', statusCode: '200' })).toBe(2);
    expect(value(after, 'graphql_envelop_request_duration_count', { operationType: 'mutation' })).toBe(2);
    expect(value(after, 'graphql_envelop_request', { operationType: 'mutation' })).toBe(2);
  });

  it('a tool that throws counts as outcome error; a failing model as outcome error and a FAILED turn', async () => {
    s = await startScenario({
      tools: [
        {
          name: 'broken',
          annotations: { readOnlyHint: true },
          run: () => {
            throw new Error('no disk');
          },
        },
      ],
      script: [
        callStep(call('broken')),
        textStep('It failed.'),
        () => {
          throw new Error('the model is down');
        },
      ],
    });
    expect((await s.start('try it')).turn.status).toBe('COMPLETED');
    const samples = (await scrape(s.h)).samples;
    expect(value(samples, 'toolgate_tool_runs_total', { tool: 't:broken', outcome: 'error' })).toBe(1);
    expect(value(samples, 'toolgate_tool_runs_total', { tool: 't:broken', outcome: 'ok' })).toBeUndefined();

    // The next model call throws.
    expect((await s.start('again')).turn.status).toBe('FAILED');
    const failed = (await scrape(s.h)).samples;
    expect(value(failed, 'toolgate_model_call_duration_seconds_count', { model: 'scripted', outcome: 'error' })).toBe(
      1,
    );
    expect(value(failed, 'toolgate_turns_total', { status: 'FAILED' })).toBe(1);
    expect(value(failed, 'toolgate_turns_total', { status: 'COMPLETED' })).toBe(1);
  });

  it('an expired turn of two requests: pending 0 once past its expiry; after the sweep expired_total 2, turns_total EXPIRED 1', async () => {
    const clock = manualClock();
    s = await startScenario({
      tools: [{ name: 'delete_note' }],
      script: [callStep(call('delete_note', { id: 'n1' }), call('delete_note', { id: 'n2' }, 'call_2'))],
      agent: { pauseTtlSeconds: 60 },
      clock: clock.now,
    });
    expect((await s.start('delete n1 and n2')).turn.status).toBe('PAUSED');
    expect(value((await scrape(s.h)).samples, 'toolgate_elicitations_pending')).toBe(2);
    clock.advance(61);
    // Read at scrape time against the clock: past its expiry it is no longer pending, even before the sweep.
    expect(value((await scrape(s.h)).samples, 'toolgate_elicitations_pending')).toBe(0);
    expect(value((await scrape(s.h)).samples, 'toolgate_elicitations_expired_total')).toBe(0);
    expect((await s.h.server.sweep()).expiredTurns).toBe(1);
    const samples = (await scrape(s.h)).samples;
    expect(value(samples, 'toolgate_elicitations_expired_total')).toBe(2);
    expect(value(samples, 'toolgate_turns_total', { status: 'EXPIRED' })).toBe(1);
    expect(value(samples, 'toolgate_tool_runs_total', { tool: 't:delete_note' })).toBeUndefined();
  });

  it('the pending gauge is read from the database: a fresh server on the same file reports the pause', async () => {
    s = await startScenario({ tools: [{ name: 'delete_note' }], script: [callStep(call('delete_note'))] });
    expect((await s.start('delete')).turn.status).toBe('PAUSED');
    const database = s.h.database;
    await s.close();
    s = undefined;
    h = await startHarness({ database, config: demoConfig });
    const samples = (await scrape(h)).samples;
    expect(value(samples, 'toolgate_elicitations_pending')).toBe(1);
    // Counters start over with the process.
    expect(value(samples, 'toolgate_turns_started_total')).toBe(0);
  });
});

describe('WebSocket gauges', () => {
  it('a graphql-ws subscriber raises the connection and subscription gauges; completing and closing lower them', async () => {
    const pubsub = observedPubSub();
    h = await startHarness({ pubsub });
    const gauges = async () => {
      const samples = (await scrape(h!)).samples;
      return {
        connections: value(samples, 'toolgate_websocket_connections'),
        subscriptions: value(samples, 'toolgate_subscriptions'),
      };
    };
    expect(await gauges()).toEqual({ connections: 0, subscriptions: 0 });

    // Not lazy: the socket stays open after its last subscription ends until the test closes it (a lazy client
    // closes it then, sooner or later than the gauge is read).
    const client = connectWs(h.url, undefined, { lazy: false });
    const listening = pubsub.listening('elicitations', 'local');
    const received = subscribeWs(client, 'subscription { elicitationRequested { id } }');
    await listening;
    await until(async () => {
      const now = await gauges();
      return now.subscriptions === 1 ? now : undefined;
    }, 'the subscription gauge to read 1');
    expect(await gauges()).toEqual({ connections: 1, subscriptions: 1 });

    // A query over the same socket is not a subscription.
    expect((await client.iterate({ query: '{ viewer { id } }' }).next()).value).toEqual({
      data: { viewer: { id: 'local' } },
    });
    expect(await gauges()).toEqual({ connections: 1, subscriptions: 1 });

    received.stop();
    await until(async () => ((await gauges()).subscriptions === 0 ? true : undefined), 'the subscription to end');
    expect(await gauges()).toEqual({ connections: 1, subscriptions: 0 });

    // A second subscription, then the socket closes with it open.
    subscribeWs(client, 'subscription { elicitationRequested { id } }');
    await until(async () => ((await gauges()).subscriptions === 1 ? true : undefined), 'the second subscription');
    await client.dispose();
    await until(async () => ((await gauges()).connections === 0 ? true : undefined), 'the connection gauge to drop');
    expect(await gauges()).toEqual({ connections: 0, subscriptions: 0 });
  });

  it('a connection refused at connection_init is not counted', async () => {
    h = await startHarness({ config: withAuth('admin') });
    let closed: number | undefined;
    const client = connectWs(h.url, 'Bearer wrong', {
      on: { closed: (event) => void (closed = (event as { code: number }).code) },
    });
    await client
      .iterate({ query: '{ viewer { id } }' })
      .next()
      .catch(() => undefined);
    expect(closed).toBe(4401);
    const samples = (await scrape(h, { authorization: `Bearer ${ROOT}` })).samples;
    expect(value(samples, 'toolgate_websocket_connections')).toBe(0);
    await client.dispose();
  });
});

const ALICE = 'alice-token-5b2d4c6f8a0b7f3c9a1e';
const ROOT = 'root-token-4a3b2c1d0a9b8c7d6e5f';

function withAuth(metrics: 'admin' | 'public' | 'off' | undefined): ToolgateConfig {
  return {
    ...demoConfig,
    auth: {
      tokens: [
        { token: ALICE, user: 'alice', admin: false },
        { token: ROOT, user: 'root', admin: true },
      ],
    },
    ...(metrics && { server: { metrics } }),
  };
}

describe('who may read /metrics', () => {
  const get = (headers: Record<string, string> = {}) => fetch(metricsUrl(h!), { headers });

  it('with an auth section (default "admin"): no token 401, a wrong token 401, a user 403, an admin 200', async () => {
    h = await startHarness({ config: withAuth(undefined) });
    const refused: Record<string, string>[] = [
      {},
      { authorization: 'Bearer not-a-token' },
      { authorization: `Basic ${ROOT}` },
    ];
    for (const headers of refused) {
      const response = await get(headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      const body = await response.text();
      expect(body).toMatch(/^Authentication required/);
      expect(body).not.toContain('toolgate_');
    }
    const user = await get({ authorization: `Bearer ${ALICE}` });
    expect(user.status).toBe(403);
    expect(user.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const userBody = await user.text();
    expect(userBody).toMatch(/^Forbidden/);
    expect(userBody).not.toContain('toolgate_');
    const admin = await get({ authorization: `Bearer ${ROOT}` });
    expect(admin.status).toBe(200);
    expect(await admin.text()).toContain('toolgate_elicitations_pending 0');
  });

  it('"admin" explicitly: the same rule', async () => {
    h = await startHarness({ config: withAuth('admin') });
    expect((await get()).status).toBe(401);
    expect((await get({ authorization: `Bearer ${ALICE}` })).status).toBe(403);
    expect((await get({ authorization: `Bearer ${ROOT}` })).status).toBe(200);
  });

  it('"public": anyone who reaches the port, token or not', async () => {
    h = await startHarness({ config: withAuth('public') });
    const response = await get();
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('# TYPE toolgate_turns_total counter');
    expect((await get({ authorization: `Bearer ${ALICE}` })).status).toBe(200);
  });

  it('"off": 404 for everyone, the admin too', async () => {
    h = await startHarness({ config: withAuth('off') });
    expect((await get()).status).toBe(404);
    const admin = await get({ authorization: `Bearer ${ROOT}` });
    expect(admin.status).toBe(404);
    expect(await admin.text()).not.toContain('toolgate_');
  });

  it('without an auth section (local mode, loopback only): open', async () => {
    h = await startHarness({ config: demoConfig });
    expect((await get()).status).toBe(200);
  });

  it('only GET and HEAD', async () => {
    h = await startHarness({ config: withAuth('public') });
    const response = await fetch(metricsUrl(h), { method: 'POST', body: '{}' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('what /metrics never shows', () => {
  it('no token, no variable value, no operation name, no URL, no error path: after requests carrying all of them', async () => {
    h = await startHarness({ config: withAuth('admin') });
    const secret = 'SECRET-VARIABLE-VALUE-8d1f2e';
    const asRoot = { authorization: `Bearer ${ROOT}` };
    const asAlice = { authorization: `Bearer ${ALICE}` };
    // A mutation with the secret in its variables, named, over POST, by a user.
    const started = await h.gql(
      'mutation LeakyStartOperation($m: String!) { startTurn(input: {agentId: "demo", message: $m}) { turn { id } } }',
      { m: `delete entities 1 ${secret}` },
      asAlice,
    );
    expect(started.errors).toBeUndefined();
    // A GET with the query and variables in the URL, by the admin.
    const query = 'query LeakyGetOperation($id: ID!) { turn(id: $id) { id } }';
    const get = await fetch(
      `${h.url}?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id: secret }))}`,
      { headers: asRoot },
    );
    expect(get.status).toBe(200);
    // Errors: an invalid field (validation), a token-looking bearer (refused).
    await h.gql('query LeakyInvalidOperation { viewer { nope } }', {}, asAlice);
    await h.gql('{ viewer { id } }', {}, { authorization: `Bearer ${secret}` });

    const { text, samples } = await scrape(h, asRoot);
    for (const forbidden of [ALICE, ROOT, secret, 'Leaky', 'Bearer', '/graphql?', 'alice', 'root']) {
      expect(text, `/metrics contains ${forbidden}`).not.toContain(forbidden);
    }
    // The requests were counted all the same, by operation type only.
    expect(value(samples, 'graphql_yoga_http_duration_count', { method: 'GET', operationType: 'query' })).toBe(1);
    expect(value(samples, 'graphql_envelop_error_result', { phase: 'validate' })).toBe(1);
    // A refused token is refused before its document is parsed (HTTP 401): counted on its own.
    expect(value(samples, 'toolgate_http_unauthenticated_total')).toBe(1);
    expect(value(samples, 'graphql_envelop_error_result', { phase: 'context' })).toBeUndefined();
    for (const sample of samples) {
      expect(Object.keys(sample.labels)).not.toEqual(expect.arrayContaining(['operationName']));
      expect(Object.keys(sample.labels)).not.toEqual(expect.arrayContaining(['url']));
      expect(Object.keys(sample.labels)).not.toEqual(expect.arrayContaining(['path']));
    }
  });
});

describe('per-server registries', () => {
  it('two servers in one process count separately', async () => {
    s = await startScenario({ script: [textStep('one')] });
    h = await startHarness({ config: demoConfig });
    await s.start('hello');
    expect(value((await scrape(s.h)).samples, 'toolgate_turns_started_total')).toBe(1);
    expect(value((await scrape(h)).samples, 'toolgate_turns_started_total')).toBe(0);
    // The process's own metrics appear on both.
    expect((await scrape(h)).text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });
});
