// The OpenAI Agents SDK (@openai/agents-core) with toolgate's /mcp as an MCP server of its agent
// (MCPServerStreamableHttp, docs/mcp-gateway.md): the agent's model calls delete_entities, and the call waits until a
// person accepts it in the inbox; then the tool runs once and the agent reads its result.
// Start the demo first (`npm start` in a checkout, or `npx toolgate`), then run it with
// `node --import tsx examples/mcp-openai-agents.ts` and accept the request at http://127.0.0.1:4000/inbox.
// TOOLGATE_MCP_URL (default http://127.0.0.1:4000/mcp) and TOOLGATE_TOKEN (a token of the server's "auth" section, if
// it has one) are read here, by the example. The model is scripted, so that the example runs offline: with
// @openai/agents installed, leave `model` out (or name one) to use OpenAI's.
import {
  Agent,
  MCPServerStreamableHttp,
  run,
  setTracingDisabled,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents-core';

// Nothing of this run leaves the machine: no traces to OpenAI's dashboard.
setTracingDisabled(true);

const url = process.env.TOOLGATE_MCP_URL || 'http://127.0.0.1:4000/mcp';
const token = process.env.TOOLGATE_TOKEN;

/** A model that calls delete_entities first, then says it is done. */
class ScriptedModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = typeof request.input === 'string' ? [] : request.input;
    const answered = items.some((item) => item.type === 'function_call_result');
    if (!answered) {
      const args = JSON.stringify({ ids: [2] });
      return {
        usage: new Usage(),
        output: [{ type: 'function_call', callId: 'call-1', name: 'delete_entities', arguments: args }],
      };
    }
    const text = 'Done: I asked to delete entity 2, and toolgate answered.';
    return {
      usage: new Usage(),
      output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }],
    };
  }

  // eslint-disable-next-line require-yield -- run() below does not stream.
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('The scripted model does not stream');
  }
}

const toolgate = new MCPServerStreamableHttp({
  url,
  name: 'toolgate',
  ...(token && { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  // A gated call waits for a person: give it longer than the default 60 s before the agent gives up on it.
  timeout: 15 * 60 * 1000,
});
await toolgate.connect();
try {
  const tools = await toolgate.listTools();
  console.log(
    `tools: ${tools
      .map((tool) => tool.name)
      .sort()
      .join(', ')}`,
  );
  const agent = new Agent({
    name: 'Entity manager',
    instructions: 'You manage a small store of entities.',
    model: new ScriptedModel(),
    mcpServers: [toolgate],
  });
  agent.on('agent_tool_start', (_context, tool, { toolCall }) => {
    const args = toolCall.type === 'function_call' ? toolCall.arguments : '';
    console.log(`calling ${tool.name} ${args}: it waits for a person's answer`);
  });
  const result = await run(agent, 'Delete entity 2.');
  // What the agent's model read of the gateway's answer: the text of the tool's result.
  for (const item of result.newItems) {
    if (item.type === 'tool_call_output_item') console.log(`result: ${textOf(item.output)}`);
  }
  console.log(`model: ${result.finalOutput}`);
} finally {
  await toolgate.close();
}

function textOf(output: unknown): string {
  if (typeof output === 'string') return output;
  const blocks = Array.isArray(output) ? output : [output];
  return blocks.map((block: { text?: string }) => block.text ?? JSON.stringify(block)).join('');
}
