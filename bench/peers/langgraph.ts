// Child process of part 9: the HITL round trip in LangGraph JS, driven in this process (no server, no sockets).
// A StateGraph over MessagesAnnotation: `agent` (a zero-latency scripted model: on a user message an AI message
// with one `delete_entities` tool call, after the tool result a final text) -> `approve` (interrupt() before the
// tool runs) -> `tools` (the prebuilt ToolNode runs the tool) -> `agent` -> END. One round trip is
// `graph.invoke(input, {configurable: {thread_id}})`, which stops at the interrupt, then
// `graph.invoke(new Command({resume: {action: 'ACCEPT'}}), config)`, which runs the tool and completes.
// BENCH_PEER_CHECKPOINTER=sqlite (SqliteSaver on the file BENCH_DB) or postgres (PostgresSaver on the database
// BENCH_DB, a postgres:// URL); each with its own defaults (SqliteSaver sets only journal_mode=WAL), unless
// BENCH_PEER_SYNCHRONOUS=FULL.
import { randomUUID } from 'node:crypto';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import {
  Command,
  END,
  interrupt,
  isInterrupted,
  MessagesAnnotation,
  START,
  StateGraph,
  type BaseCheckpointSaver,
} from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { priorMessages, runFlows, serveCommands } from './child.js';

const database = process.env.BENCH_DB;
const kind = process.env.BENCH_PEER_CHECKPOINTER;
if (!database || (kind !== 'sqlite' && kind !== 'postgres'))
  throw new Error('bench/peers/langgraph.ts is started by part 9 (BENCH_DB, BENCH_PEER_CHECKPOINTER)');

const deleteEntities = tool(async ({ ids }) => `Deleted entities ${ids.join(', ')}.`, {
  name: 'delete_entities',
  description: 'Permanently deletes the entities with the given ids from the demo store.',
  schema: z.object({ ids: z.array(z.number()) }),
});

/** The scripted model: the same script as toolgate's demo model for "delete entities 1". */
function agent(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const last = state.messages.at(-1);
  if (last?.getType() === 'tool') return { messages: [new AIMessage(`Done. ${String(last.content)}`)] };
  return {
    messages: [
      new AIMessage({
        content: '',
        tool_calls: [
          { id: `call_${state.messages.length}`, name: 'delete_entities', args: { ids: [1] }, type: 'tool_call' },
        ],
      }),
    ],
  };
}

/** Pauses before the tool runs; on resume goes on to the tool (ACCEPT) or back to the agent. */
function approve(state: typeof MessagesAnnotation.State): Record<string, never> | Command {
  const call = (state.messages.at(-1) as AIMessage).tool_calls?.[0];
  const decision = interrupt<unknown, { action: string }>({ toolCall: call });
  if (decision.action === 'ACCEPT') return {};
  return new Command({ goto: END });
}

let checkpointer: BaseCheckpointSaver;
let sqlite: Database.Database | null = null;
if (kind === 'sqlite') {
  sqlite = new Database(database);
  // BENCH_PEER_SYNCHRONOUS=FULL: each commit fsynced before it returns, a durability like toolgate's (for comparison;
  // SqliteSaver's own setting is the connection's default).
  if (process.env.BENCH_PEER_SYNCHRONOUS === 'FULL') sqlite.pragma('synchronous = FULL');
  checkpointer = new SqliteSaver(sqlite); // creates its tables (and sets WAL) on first use
} else {
  const saver = PostgresSaver.fromConnString(database);
  await saver.setup();
  checkpointer = saver;
}

const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', agent)
  .addNode('approve', approve, { ends: ['tools', END] })
  .addNode('tools', new ToolNode([deleteEntities]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? 'approve' : END))
  .addEdge('approve', 'tools')
  .addEdge('tools', 'agent')
  .compile({ checkpointer });

async function roundTrip(threadId: string = randomUUID()): Promise<void> {
  const config = { configurable: { thread_id: threadId } };
  const paused = await graph.invoke({ messages: [new HumanMessage('delete entities 1')] }, config);
  if (!isInterrupted(paused)) throw new Error(`the run did not pause: ${JSON.stringify(paused).slice(0, 200)}`);
  const done = await graph.invoke(new Command({ resume: { action: 'ACCEPT' } }), config);
  const last = done.messages.at(-1);
  if (isInterrupted(done) || last?.getType() !== 'ai' || !String(last.content).startsWith('Done.'))
    throw new Error(`the run did not complete: ${JSON.stringify(last).slice(0, 200)}`);
}

serveCommands(
  {
    run: (args) => runFlows(Number(args.flows), Number(args.seconds), () => roundTrip()),
    /** A thread whose state holds `length` prior messages (one checkpoint, as if the agent had written them). */
    seed: async (args) => {
      const threadId = randomUUID();
      const messages = priorMessages(Number(args.length)).map((m) =>
        m.role === 'user' ? new HumanMessage(m.text) : new AIMessage(m.text),
      );
      await graph.updateState({ configurable: { thread_id: threadId } }, { messages }, 'agent');
      return threadId;
    },
    roundTrip: (args) => roundTrip(String(args.threadId)),
    settings: () =>
      sqlite
        ? {
            journal_mode: sqlite.pragma('journal_mode', { simple: true }),
            synchronous: sqlite.pragma('synchronous', { simple: true }),
          }
        : {},
  },
  '',
  async () => {
    if (checkpointer instanceof PostgresSaver) await checkpointer.end();
    sqlite?.close();
  },
);
