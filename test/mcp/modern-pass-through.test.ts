// What the gateway passes through besides a tool's content to a 2026-07-28 client (the SDK's v2 Client, pinned to
// the revision), with the upstream MCP server as a process (test/fixtures/conformance-upstream.mjs, twice): the same
// answers a 2025 session gets (pass-through.test.ts), named the same way, under the same access rule.
import { fileURLToPath } from 'node:url';
import { LOG_LEVEL_META_KEY, ResourceNotFoundError, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentConfig, ToolgateConfig } from '../../src/config/schema.js';
import { startHarness, type Harness } from '../support/harness.js';
import { connectModernClient } from './modern-support.js';
import { mcpUrl } from './support.js';

const UPSTREAM = fileURLToPath(new URL('../fixtures/conformance-upstream.mjs', import.meta.url));

function gateway(id: string, tools: string[]): AgentConfig {
  return {
    id,
    name: `Gateway ${id}`,
    systemPrompt: '',
    tools,
    requireToolConfirmation: false,
    toolConfirmation: {},
    pauseTtlSeconds: 600,
    maxIterations: 10,
  };
}

/** Sources a and b: the same server twice. Gateway one has a whole, both has both, picked one tool of a. */
function config(): ToolgateConfig {
  const upstream = { type: 'mcp' as const, command: process.execPath, args: [UPSTREAM] };
  return {
    models: {},
    toolSources: { a: upstream, b: upstream },
    agents: [gateway('one', ['a:*']), gateway('both', ['a:*', 'b:*']), gateway('picked', ['a:test_simple_text'])],
    plugins: [],
  };
}

describe('what the gateway passes through to a 2026-07-28 client', { timeout: 60_000 }, () => {
  let h: Harness;
  const clients: Client[] = [];
  beforeAll(async () => {
    h = await startHarness({ config: config() });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await h?.close();
  });

  const connect = async (gatewayId: string) => {
    const client = await connectModernClient(mcpUrl(h, `/mcp/${gatewayId}`));
    clients.push(client);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    return client;
  };

  it("tools/list keeps an upstream tool's outputSchema, and a call's structuredContent comes back", async () => {
    const client = await connect('one');
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'test_structured_output')?.outputSchema).toEqual({
      type: 'object',
      properties: { city: { type: 'string' }, celsius: { type: 'number' } },
      required: ['city', 'celsius'],
    });
    const result = await client.callTool({ name: 'test_structured_output', arguments: { city: 'Lyon' } });
    expect(result).toMatchObject({ structuredContent: { city: 'Lyon', celsius: 21.5 }, isError: false });
  });

  it("lists and reads the upstream server's resources and templates as it gives them", async () => {
    const client = await connect('one');
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([
      'test://static-text',
      'test://static-binary',
      'test://watched-resource',
    ]);
    expect(resources[0]).toEqual({
      uri: 'test://static-text',
      name: 'static-text',
      description: 'A static text resource.',
      mimeType: 'text/plain',
    });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(['test://template/{id}/data']);

    const text = await client.readResource({ uri: 'test://static-text' });
    expect(text.contents).toEqual([
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    ]);
    const binary = await client.readResource({ uri: 'test://static-binary' });
    expect(binary.contents[0]).toMatchObject({ mimeType: 'image/png', blob: expect.any(String) });
    const templated = await client.readResource({ uri: 'test://template/42/data' });
    const [data] = templated.contents;
    expect(data && 'text' in data && JSON.parse(data.text)).toEqual({
      id: '42',
      templateTest: true,
      data: 'Data for ID: 42',
    });
  });

  it("an upstream server's refusal reaches the client as its own error; a resource not found as 2026-07-28 words it", async () => {
    const client = await connect('both');
    const error = await client.readResource({ uri: 'test://nothing-here' }).catch((e: unknown) => e);
    // The revision's resource not found: InvalidParams naming the URI, which the SDK reads as ResourceNotFoundError.
    expect(error).toBeInstanceOf(ResourceNotFoundError);
    expect(error).toMatchObject({
      code: -32602,
      message: 'Resource not found: test://nothing-here',
      uri: 'test://nothing-here',
    });
  });

  it('names prompts as tools are, and gets them from their server', async () => {
    const both = await connect('both');
    const names = (await both.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(names).toContain('a_test_prompt_with_arguments');
    expect(names).toContain('b_test_prompt_with_arguments');
    expect(names).toHaveLength(8);

    const got = await both.getPrompt({ name: 'b_test_prompt_with_arguments', arguments: { arg1: 'x', arg2: 'y' } });
    expect(got.messages).toEqual([
      { role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='x', arg2='y'" } },
    ]);
    const unknown = await both.getPrompt({ name: 'test_simple_prompt' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({
      code: -32602,
      message: expect.stringContaining('Prompt test_simple_prompt not found'),
    });
  });

  it("completes a prompt's argument and a resource template's, at their server", async () => {
    const client = await connect('both');
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'a_test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'par' },
    });
    expect(prompt.completion.values).toEqual(['paris', 'park', 'party']);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
      argument: { name: 'id', value: '12' },
    });
    expect(template.completion.values).toEqual(['123', '124']);
  });

  it("relays an upstream tool's progress to a client that sent a progress token", async () => {
    const client = await connect('one');
    const progress: unknown[] = [];
    const result = await client.callTool(
      { name: 'test_tool_with_progress', arguments: {} },
      { onprogress: (update) => void progress.push(update) },
    );
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Progress test completed' }] });
    // The last may be lost before toolgate: the v1 client toolgate reads the upstream with drops a progress
    // notification that arrives in the same read as its call's result (it handles notifications a microtask late).
    expect(progress.slice(0, 2)).toEqual([
      { progress: 0, total: 100 },
      { progress: 50, total: 100 },
    ]);
  });

  it("relays an upstream tool's log messages at or above the level the request names, none without", async () => {
    const client = await connect('one');
    const messages: unknown[] = [];
    client.setNotificationHandler('notifications/message', ({ params }) => void messages.push(params.data));
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(messages).toEqual([]);

    await client.callTool({ name: 'test_tool_with_logging', arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: 'info' } });
    expect(messages).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
    await client.callTool({
      name: 'test_tool_with_logging',
      arguments: {},
      _meta: { [LOG_LEVEL_META_KEY]: 'warning' },
    });
    expect(messages).toHaveLength(3);
  });

  it("a subscriptions/listen stream gets its resource's updates, from its own gateway only, until closed", async () => {
    const watcher = await connect('one');
    const outsider = await connect('picked');
    const other = await connect('one');
    const updates: string[] = [];
    const outsiderUpdates: string[] = [];
    watcher.setNotificationHandler('notifications/resources/updated', ({ params }) => void updates.push(params.uri));
    outsider.setNotificationHandler(
      'notifications/resources/updated',
      ({ params }) => void outsiderUpdates.push(params.uri),
    );
    const filter = {
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ['test://watched-resource'],
    };
    const subscription = await watcher.listen(filter);
    expect(subscription.honoredFilter).toEqual(filter);
    const outsiderSubscription = await outsider.listen(filter);

    // The upstream subscription is made once the stream is open: poke until its update arrives.
    await expect
      .poll(async () => {
        await other.callTool({ name: 'test_resource_update', arguments: {} });
        return updates.length;
      })
      .toBeGreaterThan(0);
    expect(new Set(updates)).toEqual(new Set(['test://watched-resource']));
    expect(outsiderUpdates).toEqual([]);

    subscription.close();
    expect(await subscription.closed).toBe('local');
    const seen = updates.length;
    await other.callTool({ name: 'test_resource_update', arguments: {} });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(updates).toHaveLength(seen);
    expect(outsiderUpdates).toEqual([]);
    outsiderSubscription.close();
  });

  it("a subscriptions/listen stream gets its gateway's list changes", async () => {
    const watcher = await connect('one');
    const other = await connect('one');
    const changes: string[] = [];
    for (const method of [
      'notifications/tools/list_changed',
      'notifications/resources/list_changed',
      'notifications/prompts/list_changed',
    ] as const) {
      watcher.setNotificationHandler(method, () => void changes.push(method));
    }
    const subscription = await watcher.listen({
      toolsListChanged: true,
      resourcesListChanged: true,
      promptsListChanged: true,
    });
    await expect
      .poll(async () => {
        await other.callTool({ name: 'test_list_changes', arguments: {} });
        return new Set(changes).size;
      })
      .toBe(3);
    subscription.close();
  });

  it("an upstream tool's elicitation/create is refused to the upstream, even for a client that can elicit", async () => {
    const asked: unknown[] = [];
    const client = await connectModernClient(mcpUrl(h, '/mcp/one'), {
      elicit: async (request) => {
        asked.push(request.params);
        return { action: 'accept', content: { username: 'x', email: 'x@example.com' } };
      },
    });
    clients.push(client);
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    expect(JSON.stringify(result.content)).toContain('toolgate cannot pass elicitation/create on');
    expect(asked).toEqual([]);
  });

  it('a gateway that names some tools of a server gets its tools only: no resources, no prompts', async () => {
    const client = await connect('picked');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['test_simple_text']);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
  });
});
