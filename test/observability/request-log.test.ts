// The request log over real HTTP and WebSocket: one info line per GraphQL request when it ends (operation, viewer,
// status, error count, duration), refused requests with their status, never what a request carried (document,
// variables, tokens); masked faults logged with their stack; WebSocket connections opened and closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import type { ToolSource } from '../../src/tools/tool.js';
import { START_TURN, startHarness, type Harness } from '../support/harness.js';
import { connectWs, subscribeFetch, subscribeWs } from '../support/live.js';
import { LEVEL, memoryLog, type LogLine, type MemoryLog } from '../support/log.js';

const ALICE = 'alice-token-5d1e8a7c3b9f2e4d6a0c';
const MAX_BODY = 4096;
const config: ToolgateConfig = {
  ...demoConfig,
  auth: { tokens: [{ token: ALICE, user: 'alice', admin: false }] },
  server: { graphiql: true, maxRequestBytes: MAX_BODY },
};

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } };
}
const asAlice = { authorization: `Bearer ${ALICE}` };

let h: Harness;
let log: MemoryLog;
beforeAll(async () => {
  log = memoryLog('trace');
  h = await startHarness({ config, logger: log.logger });
});
afterAll(() => h.close());

/** The request lines written while `act` ran. */
async function requestLines(act: () => Promise<unknown>): Promise<LogLine[]> {
  const before = log.find('graphql request').length;
  await act();
  return log.find('graphql request').slice(before);
}

describe('one info line per GraphQL request', () => {
  it('names the operation, its type, the viewer, the status, the error count and the duration', async () => {
    let status = 0;
    const lines = await requestLines(async () => {
      ({ status } = await post(h.url, { query: 'query Agents { agents { id } }' }, asAlice));
    });
    expect(status).toBe(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toEqual(
      expect.objectContaining({
        level: LEVEL.info,
        method: 'POST',
        operationName: 'Agents',
        operationType: 'query',
        viewerId: 'alice',
        status: 200,
        errors: 0,
        durationMs: expect.any(Number),
      }),
    );
    expect(lines[0]!.durationMs).toBeGreaterThanOrEqual(0);

    // Anonymous: no name; the operation that params.operationName selects, by name.
    const more = await requestLines(async () => {
      await post(h.url, { query: '{ agents { id } }' }, asAlice);
      await post(h.url, { query: 'query A { agents { id } } query B { viewer { id } }', operationName: 'B' }, asAlice);
    });
    expect(more.map((line) => [line.operationName, line.operationType])).toEqual([
      [null, 'query'],
      ['B', 'query'],
    ]);
  });

  it('a request without valid credentials: 401, no viewer, one error, and the token it sent is not logged', async () => {
    const lines = await requestLines(async () => {
      expect((await post(h.url, { query: 'query Agents { agents { id } }' })).status).toBe(401);
      const wrong = await post(
        h.url,
        { query: 'query Agents { agents { id } }' },
        { authorization: 'Bearer guess-4f4f4f4f' },
      );
      expect(wrong.status).toBe(401);
    });
    // Refused before the document is parsed: its operation is not read (an operationName param would be logged).
    const refused = { level: LEVEL.info, operationName: null, operationType: null, viewerId: null, status: 401 };
    expect(lines).toEqual([
      expect.objectContaining({ ...refused, errors: 1 }),
      expect.objectContaining({ ...refused, errors: 1 }),
    ]);
    expect(log.text()).not.toContain('guess-4f4f4f4f');
  });

  it('validation and syntax errors are logged with the status the client got', async () => {
    // application/graphql-response+json: such errors are 400 (with application/json, Yoga answers them 200).
    const strict = { ...asAlice, accept: 'application/graphql-response+json' };
    const lines = await requestLines(async () => {
      const invalid = await post(h.url, { query: 'query Bad { nope }' }, strict);
      expect([invalid.status, invalid.body.errors]).toEqual([400, [expect.anything()]]);
      expect((await post(h.url, { query: 'query Broken {' }, strict)).status).toBe(400);
    });
    expect(lines).toEqual([
      expect.objectContaining({ operationName: 'Bad', operationType: 'query', status: 400, errors: 1 }),
      expect.objectContaining({ operationName: null, operationType: null, status: 400, errors: 1 }),
    ]);
  });

  describe('malformed JSON in a request', () => {
    const bad = encodeURIComponent('{"id": oops}');
    const query = encodeURIComponent('{ agents { id } }');
    const get = (search: string) => () => fetch(`${h.url}?query=${query}&${search}`);
    const postAs = (type: string, body: string) => () =>
      fetch(h.url, { method: 'POST', headers: { 'content-type': type }, body });
    const form = 'application/x-www-form-urlencoded';
    it.each([
      ['the variables of a GET', get(`variables=${bad}`), /^The query parameter "variables" is not valid JSON: /],
      ['the extensions of a GET', get(`extensions=${bad}`), /^The query parameter "extensions" is not valid JSON: /],
      ['the variables of a form', postAs(form, `query=${query}&variables=${bad}`), /^The form field "variables" is/],
      ['the extensions of a form', postAs(form, `query=${query}&extensions=${bad}`), /^The form field "extensions" is/],
      ['a JSON body', postAs('application/json', '{"query": oops}'), /^POST body sent invalid JSON\.$/],
    ])('%s: 400 BAD_REQUEST saying so, before credentials; nothing above info in the log', async (_, send, message) => {
      const before = log.lines().length;
      const response = await send();
      expect(response.status).toBe(400);
      expect(((await response.json()) as { errors: unknown[] }).errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(message),
          extensions: expect.objectContaining({ code: 'BAD_REQUEST' }),
        }),
      ]);
      const written = log.lines().slice(before);
      expect(written.filter((line) => line.level > LEVEL.info)).toEqual([]);
      expect(written.filter((line) => line.msg === 'graphql request')).toEqual([
        expect.objectContaining({ level: LEVEL.info, status: 400, errors: 1, viewerId: null }),
      ]);
    });
  });

  it('a body over the limit: logged with 413', async () => {
    const lines = await requestLines(async () => {
      const response = await post(
        h.url,
        { query: '{ agents { id } }', variables: { x: 'y'.repeat(MAX_BODY) } },
        asAlice,
      );
      expect(response.status).toBe(413);
    });
    expect(lines).toEqual([
      expect.objectContaining({ level: LEVEL.info, status: 413, errors: 1, operationName: null }),
    ]);
  });

  it('never logs the document, the variables, the message or the token, at any level', async () => {
    const message = 'delete entities 1, 2 and 3; my PIN is 8-6-7-5-3-0-9';
    const lines = await requestLines(async () => {
      const response = await post(
        h.url,
        { query: START_TURN, variables: { input: { agentId: 'demo', message } } },
        asAlice,
      );
      expect(response.body.data.startTurn.turn.status).toBe('PAUSED');
    });
    expect(lines).toEqual([
      expect.objectContaining({ operationName: 'Start', operationType: 'mutation', viewerId: 'alice' }),
    ]);
    const text = log.text();
    expect(text).toContain('"turnPaused"'); // the lifecycle lines of that turn are in this output too
    for (const secret of [ALICE, 'PIN is', '8-6-7-5-3-0-9', 'startTurn(', 'pendingElicitations']) {
      expect(text).not.toContain(secret);
    }
  });

  it('GraphiQL and the health check are not logged at info', async () => {
    const lines = await requestLines(async () => {
      expect((await fetch(h.url, { headers: { accept: 'text/html' } })).status).toBe(200);
      expect((await fetch(new URL('/healthz', h.url))).status).toBe(200);
    });
    expect(lines).toEqual([]);
    const infoLines = log.lines().filter((line) => line.level >= LEVEL.info);
    expect(infoLines.filter((line) => line.path !== undefined)).toEqual([]);
  });

  it('a subscription over SSE is logged once, when its stream ends, with its whole duration', async () => {
    const started = await post(
      h.url,
      { query: START_TURN, variables: { input: { agentId: 'demo', message: 'list entities' } } },
      asAlice,
    );
    const turnId = started.body.data.startTurn.turn.id as string;
    const updates = await subscribeFetch(
      h.url,
      'subscription Updates($id: ID!) { turnUpdated(turnId: $id) { status } }',
      { id: turnId },
      asAlice,
    );
    await updates.waitFor((event) => event.data?.turnUpdated !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(log.find('graphql request', { operationName: 'Updates' })).toEqual([]);
    updates.stop();
    const line = await log.waitFor('graphql request', { operationName: 'Updates' });
    expect(line).toMatchObject({ operationType: 'subscription', viewerId: 'alice', status: 200, errors: 0 });
    expect(line.durationMs).toBeGreaterThanOrEqual(50);
  });
});

describe('WebSocket connections', () => {
  it('logs an accepted connection with its viewer, and its close with code and duration', async () => {
    const client = connectWs(h.url, `Bearer ${ALICE}`);
    const agents = subscribeWs(client, 'query Agents { agents { id } }');
    await agents.done;
    await log.waitFor('websocket connected', { viewerId: 'alice' });
    expect(log.find('websocket operation started', { viewerId: 'alice' })[0]).toMatchObject({ level: LEVEL.debug });
    await client.dispose();
    const closed = await log.waitFor('websocket closed', { viewerId: 'alice' });
    expect(closed).toMatchObject({ level: LEVEL.info, code: 1000, durationMs: expect.any(Number) });
  });

  it('a refused connection: its close (4401, no viewer), no connected line, and not the token it sent', async () => {
    const connectedBefore = log.find('websocket connected').length;
    const client = connectWs(h.url, 'Bearer ws-guess-9a9a9a9a');
    const agents = subscribeWs(client, '{ agents { id } }');
    await agents.done;
    await client.dispose();
    const closed = await log.waitFor('websocket closed', { code: 4401 });
    expect(closed).toMatchObject({ level: LEVEL.info, viewerId: null });
    expect(log.find('websocket connected')).toHaveLength(connectedBefore);
    expect(log.text()).not.toContain('ws-guess-9a9a9a9a');
  });
});

describe('a fault inside the server', () => {
  it('is logged at error with its stack, while the client gets "Unexpected error." only', async () => {
    let healthy = true;
    const broken: ToolSource = {
      id: 'demo',
      listTools: async () => {
        if (healthy) return [];
        throw new Error('connection to 10.0.0.7 refused, password hunter2');
      },
      close: async () => {},
    };
    const faults = memoryLog('info');
    const f = await startHarness({ toolSources: [broken], logger: faults.logger });
    healthy = false;
    try {
      const response = await post(f.url, { query: 'query Tools { agents { id tools { toolId } } }' });
      expect(response.body.errors).toEqual([expect.objectContaining({ message: 'Unexpected error.' })]);
      expect(JSON.stringify(response.body)).not.toContain('hunter2');

      const [fault, ...more] = faults.lines().filter((line) => line.level === LEVEL.error);
      expect(more).toEqual([]);
      expect(fault).toMatchObject({
        err: { type: 'Error', message: 'connection to 10.0.0.7 refused, password hunter2' },
        path: ['agents', 0, 'tools'],
      });
      expect((fault!.err as { stack: string }).stack).toMatch(/\n\s+at .*request-log\.test\.ts:\d+/);
      expect(faults.find('graphql request')).toEqual([
        expect.objectContaining({ operationName: 'Tools', status: 200, errors: 1 }),
      ]);
    } finally {
      await f.close();
    }
  });
});
