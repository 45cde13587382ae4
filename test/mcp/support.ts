// MCP clients of a test server's /mcp: the SDK's Client over Streamable HTTP, raw HTTP requests for what a client
// library would not send, and a gateway agent on counting tools.
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AgentConfig, ToolgateConfig } from '../../src/config/schema.js';
import type { ServerOptions } from '../../src/server.js';
import { expect } from 'vitest';
import { dataOf, RESOLVE, startHarness, type Harness } from '../support/harness.js';
import { CountingToolSource, type CountingTool } from '../support/tools.js';
import { connectModernClient } from './modern-support.js';

export const ALICE_TOKEN = 'alice-mcp-7f3c9a1e5b2d4c6f';
export const BOB_TOKEN = 'bob-mcp-0a9b8c7d6e5f4a3b';
export const GATEWAY_ID = 'gw';

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * A gateway (an agent without a model) on the `t` source's tools: `look` reads, `drop` destroys; alice and bob have
 * tokens, unless `local` (no auth section: the local mode).
 */
export function gatewayConfig(options: { local?: boolean } = {}): ToolgateConfig {
  const gateway: AgentConfig = {
    id: GATEWAY_ID,
    name: 'Test gateway',
    systemPrompt: '',
    tools: ['t:*'],
    requireToolConfirmation: true,
    toolConfirmation: {},
    pauseTtlSeconds: 3600,
    maxIterations: 10,
  };
  const auth = {
    tokens: [
      { token: ALICE_TOKEN, user: 'alice', admin: false },
      { token: BOB_TOKEN, user: 'bob', admin: false },
    ],
  };
  return { models: {}, toolSources: {}, agents: [gateway], plugins: [], ...(!options.local && { auth }) };
}

/** A server with the gateway of gatewayConfig and its counting tools. */
export async function startGateway(
  options: Partial<ServerOptions> & { local?: boolean } = {},
): Promise<{ h: Harness; tools: CountingToolSource }> {
  const { local, ...serverOptions } = options;
  const tools = countingTools();
  const h = await startHarness({ config: gatewayConfig({ local }), toolSources: [tools], ...serverOptions });
  return { h, tools };
}

/** The gateway's tools: `look` reads, `drop` destroys (asks first); `extra` besides. */
export function countingTools(extra: CountingTool[] = []): CountingToolSource {
  return new CountingToolSource('t', [
    { name: 'look', annotations: { title: 'Look', readOnlyHint: true } },
    {
      name: 'drop',
      description: 'Drops the given ids.',
      annotations: { title: 'Drop', readOnlyHint: false, destructiveHint: true },
      inputSchema: {
        type: 'object',
        properties: { ids: { type: 'array', items: { type: 'integer' } } },
        required: ['ids'],
        additionalProperties: false,
      },
      run: (args) => `dropped ${JSON.stringify(args.ids)}`,
    },
    ...extra,
  ]);
}

export function mcpUrl(h: Harness, path = '/mcp'): URL {
  return new URL(path, h.url);
}

export interface ClientOptions {
  token?: string;
  /** Declares elicitation (form) and answers each elicitation/create with this. */
  elicit?: (params: ElicitRequest['params']) => Promise<ElicitResult> | ElicitResult;
}

export async function connectClient(
  url: URL,
  options: ClientOptions = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params));
  }
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: options.token ? { headers: bearer(options.token) } : undefined,
  });
  await client.connect(transport);
  return { client, transport };
}

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

export const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request, every header as given (fetch would not send a foreign Host). */
export function send(
  url: URL,
  options: { method?: string; headers?: Record<string, string>; body?: string | object } = {},
): Promise<RawResponse> {
  const body = typeof options.body === 'object' ? JSON.stringify(options.body) : options.body;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'POST', headers: options.headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The JSON-RPC messages of an SSE or JSON response body. */
export function messagesOf(response: RawResponse): any[] {
  if (String(response.headers['content-type']).startsWith('text/event-stream')) {
    return response.body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
  }
  return [JSON.parse(response.body)];
}

const PENDING = `{ pendingElicitations(first: 10) { edges { node { id status message toolCall { name arguments } } } } }`;

/** The viewer's pending confirmation requests, waited for until there are `count`. */
export async function pendingElicitations(h: Harness, token: string, count = 1): Promise<any[]> {
  for (let tries = 0; ; tries++) {
    const nodes = dataOf(await h.gql(PENDING, {}, bearer(token))).pendingElicitations.edges.map((e: any) => e.node);
    if (nodes.length >= count || tries > 200) return nodes;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const ELICITATION = `query E($id: ID!) { node(id: $id) { ... on Elicitation { id status resolvedBy } } }`;

export async function elicitation(h: Harness, token: string, id: string): Promise<any> {
  return dataOf(await h.gql(ELICITATION, { id }, bearer(token))).node;
}

/** Answers a confirmation through GraphQL, as its requester Alice. */
export async function answerAsAlice(h: Harness, elicitationId: string, action: 'ACCEPT' | 'DECLINE'): Promise<any> {
  return dataOf(await h.gql(RESOLVE, { input: { elicitationId, action } }, bearer(ALICE_TOKEN))).resolveElicitation;
}

/** Alice's one pending confirmation: each test waits on its own, none is left for the next. */
export async function onlyPending(h: Harness): Promise<any> {
  const pending = await pendingElicitations(h, ALICE_TOKEN);
  expect(pending).toHaveLength(1);
  return pending[0];
}

/** The revisions a client may speak at /mcp: a 2025 session, or a 2026-07-28 client's requests. */
export const CLIENT_REVISIONS = ['2025-11-25', '2026-07-28'] as const;

/**
 * A client of `revision` at `url` (the v1 SDK's for 2025, the v2 SDK's pinned to 2026-07-28), which calls a tool with
 * progress (a call that waits keeps its request open) and answers confirmations with `elicit`, when given.
 */
export async function connectClientOf(
  revision: (typeof CLIENT_REVISIONS)[number],
  url: URL,
  options: { token?: string; elicit?: () => Promise<ElicitResult> } = {},
): Promise<{ call(name: string, args: Record<string, unknown>): Promise<unknown>; close(): Promise<void> }> {
  if (revision === '2025-11-25') {
    const { client } = await connectClient(url, options);
    return {
      call: (name, args) => client.callTool({ name, arguments: args }, undefined, { onprogress: () => {} }),
      close: () => client.close(),
    };
  }
  const client = await connectModernClient(url, options);
  return {
    call: (name, args) => client.callTool({ name, arguments: args }, { onprogress: () => {} }),
    close: () => client.close(),
  };
}
