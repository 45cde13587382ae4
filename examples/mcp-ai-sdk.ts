// The AI SDK's MCP client (@ai-sdk/mcp) calling a gated tool through toolgate's /mcp (docs/mcp-gateway.md): the
// gateway's tools become the AI SDK's tools, the model calls delete_entities, and the call waits until a person
// accepts it in the inbox; then the tool runs once and the model reads its result.
// Start the demo first (`npm start` in a checkout, or `npx toolgate`), then run it with
// `node --import tsx examples/mcp-ai-sdk.ts` and accept the request at http://127.0.0.1:4000/inbox.
// TOOLGATE_MCP_URL (default http://127.0.0.1:4000/mcp) and TOOLGATE_TOKEN (a token of the server's "auth" section, if
// it has one) are read here, by the example. The model is scripted, so that the example runs offline: put yours in
// its place (e.g. `openai('gpt-5')` from @ai-sdk/openai).
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

const url = process.env.TOOLGATE_MCP_URL || 'http://127.0.0.1:4000/mcp';
const token = process.env.TOOLGATE_TOKEN;

/** A model that calls delete_entities first, then says it is done. */
const scriptedModel = new MockLanguageModelV3({
  doGenerate: async (options) => {
    const usage = {
      inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 0, text: 0, reasoning: 0 },
    };
    const toolMessage = options.prompt.find((message) => message.role === 'tool');
    if (!toolMessage) {
      const input = JSON.stringify({ ids: [2] });
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'delete_entities', input }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    }
    return {
      content: [{ type: 'text', text: 'Done: I asked to delete entity 2, and toolgate answered.' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage,
      warnings: [],
    };
  },
});

const mcp = await createMCPClient({
  transport: { type: 'http', url, ...(token && { headers: { authorization: `Bearer ${token}` } }) },
});
try {
  const tools = await mcp.tools();
  console.log(`tools: ${Object.keys(tools).sort().join(', ')}`);
  const { steps, text } = await generateText({
    model: scriptedModel,
    tools,
    prompt: 'Delete entity 2.',
    stopWhen: stepCountIs(2),
    experimental_onToolCallStart: ({ toolCall }) => {
      console.log(`calling ${toolCall.toolName} ${JSON.stringify(toolCall.input)}: it waits for a person's answer`);
    },
  });
  // The gateway's answer is an MCP CallToolResult: its text blocks, and isError when it did not run.
  for (const { output } of steps.flatMap((step) => step.toolResults)) {
    const result = output as { content: { type: string; text?: string }[]; isError?: boolean };
    const said = result.content.map((block) => block.text ?? '').join('');
    console.log(`${result.isError ? 'refused' : 'result'}: ${said}`);
  }
  console.log(`model: ${text}`);
} finally {
  await mcp.close();
}
