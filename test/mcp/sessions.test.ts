// How long /mcp keeps a session, and how many: a session without a request and without an open response for
// server.mcpSessionIdleSeconds is ended (a client that left without DELETE frees its Server and transport), a
// tools/call waiting for a person keeps its session however long it waits, and initialize over
// server.maxMcpSessionsPerUser is refused with 429. And the request log's line per /mcp request.
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, type Harness } from '../support/harness.js';
import { LEVEL, memoryLog } from '../support/log.js';
import {
  ALICE_TOKEN,
  BOB_TOKEN,
  bearer,
  connectClient,
  gatewayConfig,
  GATEWAY_ID,
  INITIALIZE,
  MCP_HEADERS,
  mcpUrl,
  messagesOf,
  pendingElicitations,
  PING,
  send,
  startGateway,
} from './support.js';

const PATH = `/mcp/${GATEWAY_ID}`;
/**
 * Short enough to watch a session expire, long enough that a request every fifth of it keeps a session in use on a
 * busy 2-core machine.
 */
const IDLE_SECONDS = 1;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let servers: Harness[] = [];
afterEach(async () => {
  await Promise.all(servers.map((h) => h.close()));
  servers = [];
});

async function gateway(options: Parameters<typeof startGateway>[0] = {}) {
  const started = await startGateway(options);
  servers.push(started.h);
  return started;
}

/** A raw initialize as `token`'s user: the response, and the session id it opened (undefined when refused). */
async function initialize(h: Harness, token: string) {
  const response = await send(mcpUrl(h, PATH), { headers: { ...MCP_HEADERS, ...bearer(token) }, body: INITIALIZE });
  return { response, sessionId: response.headers['mcp-session-id'] as string | undefined };
}

function inSession(h: Harness, token: string, sessionId: string, body: object) {
  return send(mcpUrl(h, PATH), {
    headers: { ...MCP_HEADERS, ...bearer(token), 'mcp-session-id': sessionId },
    body,
  });
}

/** The status a ping in the session gets: 200 while it lives, 404 once it ended. */
async function pingStatus(h: Harness, token: string, sessionId: string): Promise<number> {
  return (await inSession(h, token, sessionId, PING)).status;
}

/**
 * Polls until the session's id is unknown. A probe is a request, which counts as use: probes further apart than the
 * idle time let an idle session expire between them.
 */
async function untilEnded(h: Harness, token: string, sessionId: string, idleSeconds = IDLE_SECONDS): Promise<void> {
  const deadline = Date.now() + idleSeconds * 10_000;
  while ((await pingStatus(h, token, sessionId)) !== 404) {
    if (Date.now() > deadline) throw new Error(`session ${sessionId} still open after ${idleSeconds * 10} s`);
    await sleep(idleSeconds * 1_500);
  }
}

describe('idle MCP sessions', () => {
  it('a session without requests ends after mcpSessionIdleSeconds; one in use does not', async () => {
    const { h } = await gateway({ limits: { mcpSessionIdleSeconds: IDLE_SECONDS } });
    const unused = await initialize(h, ALICE_TOKEN);
    const used = await initialize(h, ALICE_TOKEN);
    expect(unused.response.status).toBe(200);
    // The used one gets a request every fifth of the idle time, for three idle times.
    for (let i = 0; i < 15; i++) {
      expect(await pingStatus(h, ALICE_TOKEN, used.sessionId!)).toBe(200);
      await sleep(IDLE_SECONDS * 200);
    }
    expect(await pingStatus(h, ALICE_TOKEN, unused.sessionId!)).toBe(404);
    expect(await pingStatus(h, ALICE_TOKEN, used.sessionId!)).toBe(200);
    await untilEnded(h, ALICE_TOKEN, used.sessionId!);
  });

  it("a client's open GET stream keeps its session; a client that leaves without DELETE frees it once idle", async () => {
    const { h } = await gateway({ limits: { mcpSessionIdleSeconds: IDLE_SECONDS } });
    const { client, transport } = await connectClient(mcpUrl(h, PATH), { token: ALICE_TOKEN });
    const sessionId = transport.sessionId!;
    // The SDK's client holds a GET stream open while connected: three idle times without a request.
    await sleep(IDLE_SECONDS * 3_000);
    await expect(client.ping()).resolves.toEqual({});

    // close() drops the connections and sends no DELETE: the client vanished.
    await client.close();
    await untilEnded(h, ALICE_TOKEN, sessionId);
  });

  it('a tools/call waiting for confirmation keeps its session open past the idle time, and gets its result', async () => {
    const { h, tools } = await gateway({ limits: { mcpSessionIdleSeconds: IDLE_SECONDS } });
    // Raw requests: no GET stream, so the waiting call's response is the only thing open.
    const { sessionId } = await initialize(h, ALICE_TOKEN);
    const { sessionId: idleSessionId } = await initialize(h, ALICE_TOKEN);
    const call = inSession(h, ALICE_TOKEN, sessionId!, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'drop', arguments: { ids: [1] } },
    });
    const [pending] = await pendingElicitations(h, ALICE_TOKEN);
    // The other session, opened at the same time and unused, ends meanwhile: the idle time did pass.
    await untilEnded(h, ALICE_TOKEN, idleSessionId!);
    await sleep(IDLE_SECONDS * 2_000);

    const resolved = dataOf(
      await h.gql(RESOLVE, { input: { elicitationId: pending.id, action: 'ACCEPT' } }, bearer(ALICE_TOKEN)),
    ).resolveElicitation;
    expect(resolved.userErrors).toEqual([]);
    const response = await call;
    expect(response.status).toBe(200);
    expect(messagesOf(response).at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        content: [{ type: 'text', text: 'dropped [1]' }],
        isError: false,
        _meta: { 'dev.toolgate/receipt': expect.objectContaining({ kind: 'ACCEPTED', elicitationId: pending.id }) },
      },
    });
    expect(tools.count('drop')).toBe(1);
    // Answered, the call's stream closed: now this session is idle, and ends too.
    await untilEnded(h, ALICE_TOKEN, sessionId!);
  });
});

describe('MCP sessions per user', () => {
  it('initialize over server.maxMcpSessionsPerUser: 429 naming the setting; DELETE or the idle time frees a slot', async () => {
    // Idle for longer than the other tests: the sessions must outlive the steps before the last.
    const idleSeconds = IDLE_SECONDS * 2;
    const config = { ...gatewayConfig(), server: { maxMcpSessionsPerUser: 2 } };
    const { h } = await gateway({ config, limits: { mcpSessionIdleSeconds: idleSeconds } });
    // An initialize the transport refuses (it must accept SSE too) holds no slot.
    for (let i = 0; i < 3; i++) {
      const refused = await send(mcpUrl(h, PATH), {
        headers: { ...MCP_HEADERS, accept: 'application/json', ...bearer(ALICE_TOKEN) },
        body: INITIALIZE,
      });
      expect(refused.status).toBe(406);
    }
    const first = await initialize(h, ALICE_TOKEN);
    const second = await initialize(h, ALICE_TOKEN);
    expect([first.response.status, second.response.status]).toEqual([200, 200]);

    const third = await initialize(h, ALICE_TOKEN);
    expect(third.response.status).toBe(429);
    expect(third.sessionId).toBeUndefined();
    expect(JSON.parse(third.response.body)).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message:
          'Too many open MCP sessions for this user (server.maxMcpSessionsPerUser is 2): end one with DELETE, or wait until an idle one expires',
      },
      id: null,
    });
    // The sessions open carry on; another user has slots of his own.
    expect(await pingStatus(h, ALICE_TOKEN, first.sessionId!)).toBe(200);
    expect((await initialize(h, BOB_TOKEN)).response.status).toBe(200);

    const ended = await send(mcpUrl(h, PATH), {
      method: 'DELETE',
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN), 'mcp-session-id': first.sessionId! },
    });
    expect(ended.status).toBe(200);
    const afterDelete = await initialize(h, ALICE_TOKEN);
    expect(afterDelete.response.status).toBe(200);
    expect((await initialize(h, ALICE_TOKEN)).response.status).toBe(429);

    // Left alone, the two expire, and alice may open two again.
    await Promise.all([
      untilEnded(h, ALICE_TOKEN, second.sessionId!, idleSeconds),
      untilEnded(h, ALICE_TOKEN, afterDelete.sessionId!, idleSeconds),
    ]);
    const again = await Promise.all([initialize(h, ALICE_TOKEN), initialize(h, ALICE_TOKEN)]);
    expect(again.map(({ response }) => response.status)).toEqual([200, 200]);
  });

  it('concurrent initializes over the cap: exactly the cap succeed', async () => {
    const config = { ...gatewayConfig(), server: { maxMcpSessionsPerUser: 3 } };
    const { h } = await gateway({ config });
    const responses = await Promise.all(Array.from({ length: 8 }, () => initialize(h, ALICE_TOKEN)));
    const statuses = responses.map(({ response }) => response.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
  });
});

describe('the request log', () => {
  it('one info line per /mcp request when it ends: method, path, user, status, duration; never the body', async () => {
    const log = memoryLog('info');
    const { h } = await gateway({ logger: log.logger });
    const { client } = await connectClient(mcpUrl(h, PATH), { token: ALICE_TOKEN });
    await client.callTool({ name: 'look', arguments: { secret: 'plum-7c1e' } });
    await client.close();
    await send(mcpUrl(h, PATH), {
      headers: { ...MCP_HEADERS, authorization: 'Bearer wrong-token-9d8e7f' },
      body: INITIALIZE,
    });

    const refused = await log.waitFor('mcp request', { status: 401 });
    expect(refused).toEqual(
      expect.objectContaining({ level: LEVEL.info, method: 'POST', path: PATH, viewerId: null, status: 401 }),
    );
    const posts = log.find('mcp request', { method: 'POST', viewerId: 'alice' });
    // initialize, notifications/initialized, tools/call.
    expect(posts.length).toBeGreaterThanOrEqual(3);
    for (const line of posts) {
      expect(line).toEqual({
        level: LEVEL.info,
        time: expect.any(Number),
        pid: expect.any(Number),
        hostname: expect.any(String),
        name: 'toolgate',
        msg: 'mcp request',
        method: 'POST',
        path: PATH,
        viewerId: 'alice',
        status: expect.any(Number),
        durationMs: expect.any(Number),
      });
    }
    expect(posts.map((line) => line.status)).toContain(202);
    // The client's GET stream, logged when the client closed it.
    await log.waitFor('mcp request', { method: 'GET', viewerId: 'alice' });
    expect(log.text()).not.toContain('plum-7c1e');
    expect(log.text()).not.toContain('wrong-token-9d8e7f');
    expect(log.text()).not.toContain(ALICE_TOKEN);
  });
});
