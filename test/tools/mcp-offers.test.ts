// The mcp tool source's offers besides tools, and its relay of a call's upstream messages, against a real MCP server
// process (test/fixtures/conformance-upstream.mjs): a tool's outputSchema, counted subscriptions, the server's
// announcements, and a log message or question reaching the relay of the call in flight.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/records.js';
import { relayingCalls, type CallRelay } from '../../src/tools/call-relay.js';
import { McpToolSource } from '../../src/tools/mcp.js';
import type { Tool, UpstreamChange } from '../../src/tools/tool.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-upstream.mjs', import.meta.url));
const options = { where: 'test.json: toolSources.up', baseDir: process.cwd(), forwardStderr: false };
let turns = 0;
const context = () => ({ agentId: 'a', threadId: 't', turnId: `trn_${++turns}`, toolCallId: 'c' });

describe('McpToolSource: what a server offers besides tools', () => {
  let source: McpToolSource;
  let tools: Tool[];
  const tool = (name: string) => tools.find((t) => t.name === name)!;
  beforeAll(async () => {
    source = await McpToolSource.start('up', { type: 'mcp', command: process.execPath, args: [FIXTURE] }, options);
    tools = await source.listTools();
  });
  afterAll(() => source?.close());

  it("keeps a tool's outputSchema, and only where the server declares one", () => {
    expect(tool('test_structured_output').outputSchema).toMatchObject({ required: ['city', 'celsius'] });
    expect(tool('test_simple_text')).not.toHaveProperty('outputSchema');
  });

  it('reads what the server declared', async () => {
    expect(await source.offers.capabilities()).toEqual({
      resources: true,
      subscribe: true,
      prompts: true,
      completions: true,
    });
  });

  it('counts subscriptions: the server hears of updates until the last subscriber stops', async () => {
    const changes: UpstreamChange[] = [];
    const stop = source.offers.onChange((change) => changes.push(change));
    const uri = 'test://watched-resource';
    const update = async () => {
      await tool('test_resource_update').execute({}, context());
      await new Promise((resolve) => setTimeout(resolve, 100));
      return changes.splice(0).filter((change) => change.method === 'notifications/resources/updated');
    };
    await source.offers.subscribe(uri);
    await source.offers.subscribe(uri);
    await source.offers.unsubscribe(uri);
    expect(await update()).toEqual([{ method: 'notifications/resources/updated', uri }]);
    await source.offers.unsubscribe(uri);
    expect(await update()).toEqual([]);
    stop();
  });

  it("passes a call's log messages and questions to the relay of the one call in flight", async () => {
    const logged: JsonObject[] = [];
    const relay: CallRelay = {
      log: (params) => void logged.push(params),
      elicit: async () => ({ action: 'accept', content: { username: 'u', email: 'e@example.com' } }),
    };
    const logging = await relayingCalls(relay, () => tool('test_tool_with_logging').execute({}, context()));
    expect(logging.isError).toBe(false);
    expect(logged.map((params) => params.data)).toEqual([
      'Tool execution started',
      'Tool processing data',
      'Tool execution completed',
    ]);
    const asked = await relayingCalls(relay, () => tool('test_elicitation').execute({ message: 'm' }, context()));
    expect(asked.text).toBe('User response: action=accept, content={"username":"u","email":"e@example.com"}');
    // Without a relay (no client waits for the call in this process), the question is refused.
    const alone = await tool('test_elicitation').execute({ message: 'm' }, context());
    expect(alone).toMatchObject({ isError: true, text: expect.stringContaining('toolgate cannot pass') });
  });
});
