// LangChain's MCP adapters (@langchain/mcp-adapters) in a LangGraph agent (createReactAgent), with toolgate's /mcp as
// their MCP server (docs/mcp-gateway.md): the agent's model calls delete_entities, and the call waits until a person
// accepts it in the inbox; then the tool runs once and the agent reads its result.
// Start the demo first (`npm start` in a checkout, or `npx toolgate`), then run it with
// `node --import tsx examples/mcp-langgraph.ts` and accept the request at http://127.0.0.1:4000/inbox.
// TOOLGATE_MCP_URL (default http://127.0.0.1:4000/mcp) and TOOLGATE_TOKEN (a token of the server's "auth" section, if
// it has one) are read here, by the example. The model is scripted, so that the example runs offline: put yours in
// its place (e.g. `new ChatOpenAI({ model: 'gpt-5' })` from @langchain/openai).
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';

/**
 * A tool message's text. A result whose `_meta` carries toolgate's signed receipt reaches the agent as the whole text
 * block (JSON, its `meta` beside its `text`): the adapters keep `_meta` with the content.
 */
function toolText(message: BaseMessage): string {
  try {
    const block = JSON.parse(message.text) as { type?: string; text?: string };
    return block.type === 'text' && typeof block.text === 'string' ? block.text : message.text;
  } catch {
    return message.text;
  }
}

const url = process.env.TOOLGATE_MCP_URL || 'http://127.0.0.1:4000/mcp';
const token = process.env.TOOLGATE_TOKEN;

/** A chat model that calls delete_entities first, then says it is done. */
class ScriptedChatModel extends BaseChatModel {
  _llmType(): string {
    return 'scripted';
  }

  // The agent binds its tools to the model; this one knows its script already.
  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const answered = messages.some((message) => message.getType() === 'tool');
    const message = answered
      ? new AIMessage('Done: I asked to delete entity 2, and toolgate answered.')
      : new AIMessage({ content: '', tool_calls: [{ id: 'call-1', name: 'delete_entities', args: { ids: [2] } }] });
    return { generations: [{ text: message.text, message }] };
  }
}

const client = new MultiServerMCPClient({
  mcpServers: {
    toolgate: {
      transport: 'http',
      url,
      ...(token && { headers: { authorization: `Bearer ${token}` } }),
      // A gated call waits for a person: give it longer than the default 60 s before the agent gives up on it.
      defaultToolTimeout: 15 * 60 * 1000,
    },
  },
});
try {
  const tools = await client.getTools();
  console.log(
    `tools: ${tools
      .map((tool) => tool.name)
      .sort()
      .join(', ')}`,
  );
  const agent = createReactAgent({ llm: new ScriptedChatModel({}), tools });
  for await (const update of await agent.stream(
    { messages: [{ role: 'user', content: 'Delete entity 2.' }] },
    { streamMode: 'updates' },
  )) {
    for (const message of Object.values(update).flatMap((node) => (node?.messages ?? []) as BaseMessage[])) {
      if (AIMessage.isInstance(message) && message.tool_calls?.length) {
        for (const call of message.tool_calls) {
          console.log(`calling ${call.name} ${JSON.stringify(call.args)}: it waits for a person's answer`);
        }
      } else if (message.getType() === 'tool') console.log(`result: ${toolText(message)}`);
      else console.log(`model: ${message.text}`);
    }
  }
} finally {
  await client.close();
}
