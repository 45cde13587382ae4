// /mcp over real HTTP, what the route itself answers: credentials as /graphql's, sessions that belong to their user
// and their gateway path, DELETE, the body limit, paths without a gateway, and the local mode's refusal of other
// sites' pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  ALICE_TOKEN,
  BOB_TOKEN,
  bearer,
  connectClient,
  GATEWAY_ID,
  INITIALIZE,
  MCP_HEADERS,
  messagesOf,
  PING,
  send,
  mcpUrl,
  startGateway,
} from './support.js';

const PATH = `/mcp/${GATEWAY_ID}`;

describe('/mcp with tokens', () => {
  let h: Harness;
  beforeAll(async () => {
    ({ h } = await startGateway({ limits: { maxRequestBytes: 4096 } }));
  });
  afterAll(() => h.close());

  it.each([
    ['no Authorization header', {}],
    ['an unknown token', { authorization: 'Bearer not-a-token-of-this-server' }],
    ['another scheme', { authorization: `Basic ${Buffer.from(`alice:${ALICE_TOKEN}`).toString('base64')}` }],
  ])('refuses %s: 401 with a JSON-RPC error, and opens no session', async (_label, headers) => {
    for (const path of ['/mcp', PATH]) {
      const response = await send(mcpUrl(h, path), { headers: { ...MCP_HEADERS, ...headers }, body: INITIALIZE });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(response.headers['mcp-session-id']).toBeUndefined();
      expect(JSON.parse(response.body)).toEqual({
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: expect.stringMatching(/^Authentication required: send "Authorization: Bearer/),
        },
        id: null,
      });
    }
  });

  it("initialize opens a session of the token's user; its id answers that user only", async () => {
    const { client, transport } = await connectClient(mcpUrl(h, PATH), { token: ALICE_TOKEN });
    expect(client.getServerVersion()).toEqual({ name: 'toolgate', version: '0.1.0' });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    await expect(client.ping()).resolves.toEqual({});
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const asBob = await send(mcpUrl(h, PATH), {
      headers: { ...MCP_HEADERS, ...bearer(BOB_TOKEN), 'mcp-session-id': sessionId },
      body: PING,
    });
    expect(asBob.status).toBe(404);
    expect(JSON.parse(asBob.body)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Session not found' },
      id: null,
    });
    // Nor on another gateway's path, for its own user.
    const elsewhere = await send(mcpUrl(h, '/mcp/other'), {
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN), 'mcp-session-id': sessionId },
      body: PING,
    });
    expect(elsewhere.status).toBe(404);

    const asAlice = await send(mcpUrl(h, PATH), {
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN), 'mcp-session-id': sessionId },
      body: PING,
    });
    expect(asAlice.status).toBe(200);
    expect(messagesOf(asAlice)).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
    await client.close();
  });

  it('an unknown session id: 404 Session not found', async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const response = await send(mcpUrl(h, PATH), {
        method,
        headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN), 'mcp-session-id': 'no-such-session' },
        body: method === 'POST' ? PING : undefined,
      });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body).error).toEqual({ code: -32001, message: 'Session not found' });
    }
  });

  it('initialize on a path that names no gateway: 404, and no session', async () => {
    const response = await send(mcpUrl(h, '/mcp/nobody'), {
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN) },
      body: INITIALIZE,
    });
    expect(response.status).toBe(404);
    expect(response.headers['mcp-session-id']).toBeUndefined();
    expect(JSON.parse(response.body).error).toEqual({ code: -32600, message: 'No gateway agent "nobody"' });
  });

  it('a request without a session id that is not initialize: 400', async () => {
    const response = await send(mcpUrl(h, PATH), { headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN) }, body: PING });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error.message).toBe('Bad Request: Mcp-Session-Id header is required');
  });

  it('DELETE ends a session: its id is unknown afterwards', async () => {
    const { client, transport } = await connectClient(mcpUrl(h, PATH), { token: ALICE_TOKEN });
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const after = await send(mcpUrl(h, PATH), {
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN), 'mcp-session-id': sessionId },
      body: PING,
    });
    expect(after.status).toBe(404);
    await client.close();
  });

  it('a body over the API limit: 413, declared or chunked', async () => {
    const big = { ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(5000) } };
    const declared = await send(mcpUrl(h, PATH), { headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN) }, body: big });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body).error.message).toBe('The request body is larger than 4096 bytes.');

    const text = JSON.stringify(big);
    const chunked = await fetch(mcpUrl(h, PATH), {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN) },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < text.length; i += 1000)
            controller.enqueue(new TextEncoder().encode(text.slice(i, i + 1000)));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it('malformed JSON: 400 Parse error', async () => {
    const response = await send(mcpUrl(h, PATH), {
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN) },
      body: '{"jsonrpc": ',
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toEqual({ code: -32700, message: 'Parse error: Invalid JSON' });
  });
});

describe('/mcp without a gateway agent', () => {
  it('initialize at /mcp: 404 No gateway agent is configured', async () => {
    const chatOnly = { ...demoConfig, agents: demoConfig.agents.filter((agent) => agent.model !== undefined) };
    const h = await startHarness({ config: chatOnly });
    try {
      const response = await send(mcpUrl(h), { headers: MCP_HEADERS, body: INITIALIZE });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body).error).toEqual({ code: -32600, message: 'No gateway agent is configured' });
    } finally {
      await h.close();
    }
  });
});

describe('/mcp in the local mode', () => {
  let h: Harness;
  beforeAll(async () => {
    ({ h } = await startGateway({ local: true }));
  });
  afterAll(() => h.close());

  it.each([
    ['a page of another site', { origin: 'https://evil.example' }],
    ['a sandboxed page (Origin: null)', { origin: 'null' }],
    ['DNS rebinding (a foreign Host)', { host: 'evil.example:4000', origin: 'http://evil.example:4000' }],
  ])('%s: 403 before anything runs', async (_label, headers) => {
    const response = await send(mcpUrl(h, PATH), { headers: { ...MCP_HEADERS, ...headers }, body: INITIALIZE });
    expect(response.status).toBe(403);
    expect(response.body).toMatch(/^(Origin|Host) "[^"]*" is not /);
    expect(response.headers['mcp-session-id']).toBeUndefined();
  });

  it('a client of this machine needs no token: it is the local user', async () => {
    const { client } = await connectClient(mcpUrl(h, PATH));
    await expect(client.ping()).resolves.toEqual({});
    await client.close();
  });
});
