// What an upstream MCP server sends and asks during a call, passed to the gateway client that waits for it, with a
// real SDK client over HTTP and the upstream as a process (test/fixtures/conformance-upstream.mjs): log messages at
// the client's level, progress, elicitation/create and sampling/createMessage (also for a gated call accepted in the
// inbox while its client waits), a refusal when the client cannot answer or another call shares the upstream, and
// the upstream's list changes.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { dataOf, RESOLVE, startHarness, type Harness } from '../support/harness.js';
import { mcpUrl } from './support.js';

const UPSTREAM = fileURLToPath(new URL('../fixtures/conformance-upstream.mjs', import.meta.url));

function config(): ToolgateConfig {
  return {
    models: {},
    toolSources: { up: { type: 'mcp', command: process.execPath, args: [UPSTREAM] } },
    agents: [
      {
        id: 'relay',
        name: 'Relay gateway',
        systemPrompt: '',
        tools: ['up:*'],
        requireToolConfirmation: true,
        // Every other tool of the fixture is read-only, so it runs unasked.
        toolConfirmation: { 'up:test_slow_elicitation': 'ALWAYS' },
        pauseTtlSeconds: 600,
        maxIterations: 10,
      },
    ],
    plugins: [],
  };
}

const PENDING = `{ pendingElicitations(first: 10) { edges { node { id toolCall { name } } } } }`;

describe("an upstream server's messages and questions during a call", () => {
  let h: Harness;
  const clients: Client[] = [];
  beforeAll(async () => {
    h = await startHarness({ config: config() });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await h?.close();
  });

  const connect = async (capabilities: ClientCapabilities = {}) => {
    const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(h, '/mcp/relay')));
    clients.push(client);
    return client;
  };
  const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
    (result.content as { type: string; text?: string }[]).map((part) => part.text).join('\n');

  it("passes the upstream's log messages at or above the client's level", async () => {
    const client = await connect();
    const logged: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => void logged.push(params.data));
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(logged).toEqual([]);
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(logged).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
  });

  it("passes the upstream's progress of a call that runs at once", async () => {
    const client = await connect();
    const progress: number[] = [];
    await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (update) => void progress.push(update.progress),
    });
    // The upstream sends 0, 50 and 100, the last just before its result: the SDK's client (toolgate's, and any)
    // handles notifications a tick later than responses, so a progress that comes with the result may be dropped.
    expect(progress.slice(0, 2)).toEqual([0, 50]);
  });

  it("asks the client the upstream's elicitation/create and returns its answer to the upstream", async () => {
    const client = await connect({ elicitation: { form: {} } });
    const asked: ElicitRequest['params'][] = [];
    client.setRequestHandler(ElicitRequestSchema, ({ params }) => {
      asked.push(params);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    expect(asked).toMatchObject([{ message: 'Who are you?', requestedSchema: { required: ['username', 'email'] } }]);
    expect(textOf(result)).toBe('User response: action=accept, content={"username":"ada","email":"ada@example.com"}');
  });

  it("asks the client the upstream's sampling/createMessage when it offers sampling", async () => {
    const client = await connect({ sampling: {} });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      content: { type: 'text', text: 'forty-two' },
      model: 'scripted',
    }));
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'The answer?' } });
    expect(textOf(result)).toBe('LLM response: forty-two');
  });

  it('refuses the upstream a question its client cannot answer: the call fails, saying why', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('toolgate cannot pass elicitation/create on');
  });

  it('a gated call accepted in the inbox while its client waits: the upstream asks that client', async () => {
    const client = await connect({ elicitation: { form: {} } });
    const upstreamQuestions: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, ({ params }): Promise<ElicitResult> | ElicitResult => {
      // The gateway's own confirmation is left to the inbox; the upstream's question is answered here.
      if (params.message !== 'Confirm?') return new Promise(() => {});
      upstreamQuestions.push(params.message);
      return { action: 'accept', content: { ok: true } };
    });
    const call = client.callTool({ name: 'test_slow_elicitation', arguments: {} });
    let pending: { id: string }[] = [];
    await expect
      .poll(async () => (pending = dataOf(await h.gql(PENDING)).pendingElicitations.edges.map((e: any) => e.node)))
      .toHaveLength(1);
    const { userErrors } = dataOf(
      await h.gql(RESOLVE, { input: { elicitationId: pending[0]!.id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(userErrors).toEqual([]);
    expect(textOf(await call)).toBe('Answered: action=accept, content={"ok":true}');
    expect(upstreamQuestions).toEqual(['Confirm?']);
  });

  it("another caller's call in flight on the same upstream: its question is refused, not shown to this client", async () => {
    const first = await connect({ elicitation: { form: {} } });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstAsked = false;
    first.setRequestHandler(ElicitRequestSchema, async () => {
      firstAsked = true;
      await released;
      return { action: 'accept', content: { username: 'first', email: 'first@example.com' } };
    });
    const second = await connect({ elicitation: { form: {} } });
    let secondAsked = false;
    second.setRequestHandler(ElicitRequestSchema, () => {
      secondAsked = true;
      return { action: 'decline' };
    });

    const firstCall = first.callTool({ name: 'test_elicitation', arguments: { message: 'first' } });
    await expect.poll(() => firstAsked).toBe(true);
    const secondResult = await second.callTool({ name: 'test_elicitation', arguments: { message: 'second' } });
    expect(secondResult.isError).toBe(true);
    expect(textOf(secondResult)).toContain('no client that can elicit waits for this call alone');
    expect(secondAsked).toBe(false);
    release();
    expect(textOf(await firstCall)).toContain('"username":"first"');
  });

  it("passes the upstream's tools, resources and prompts list changes", async () => {
    const client = await connect();
    const changed: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.push('tools'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changed.push('resources'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changed.push('prompts'));
    await client.callTool({ name: 'test_list_changes', arguments: {} });
    await expect.poll(() => [...changed].sort()).toEqual(['prompts', 'resources', 'tools']);
  });
});
