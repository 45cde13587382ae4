import { getThread, listThreads } from '../app/reads.js';
import type { ThreadRecord, ToolCall } from '../domain/records.js';
import { builder } from './builder.js';
import { connection, NodeRef, optionalId, PageInfoRef } from './node.js';
import { AgentRef, MessageRef, ThreadRef, TurnRef } from './refs.js';

const MessageRoleEnum = builder.enumType('MessageRole', { values: ['SYSTEM', 'USER', 'ASSISTANT', 'TOOL'] as const });

const ToolCallRef = builder.objectRef<ToolCall>('ToolCall').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    toolId: t.exposeID('toolId'),
    arguments: t.field({ type: 'JSON', resolve: (c) => c.arguments }),
  }),
});

// ToolCall.argumentsDisplay and Message.textDisplay are added in visible-text.ts.
export { ToolCallRef };

MessageRef.implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.field({ type: MessageRoleEnum, resolve: (m) => m.role }),
    text: t.exposeString('text', { nullable: true }),
    toolCalls: t.field({
      type: [ToolCallRef],
      description: 'ASSISTANT messages: the tool calls the model asked for.',
      resolve: (m) => m.toolCalls,
    }),
    toolCallId: t.exposeString('toolCallId', {
      nullable: true,
      description: 'TOOL messages: the call this message answers.',
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (m) => m.createdAt }),
  }),
});

ThreadRef.implement({
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id'),
    agent: t.field({
      type: AgentRef,
      resolve: async (thread, _args, ctx) => {
        const agent = await ctx.loaders.agent(thread.agentId);
        if (!agent) throw new Error(`thread ${thread.id} refers to a missing agent`);
        return agent;
      },
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (thread) => thread.createdAt }),
    messages: t.field({
      type: [MessageRef],
      description: 'The whole conversation, oldest first: user, assistant and tool messages.',
      resolve: (thread, _args, ctx) => ctx.loaders.threadMessages(thread.id),
    }),
    turns: t.field({ type: [TurnRef], resolve: (thread, _args, ctx) => ctx.loaders.threadTurns(thread.id) }),
  }),
});

const ThreadEdgeRef = builder.objectRef<{ cursor: string; node: ThreadRecord }>('ThreadEdge').implement({
  fields: (t) => ({ cursor: t.exposeString('cursor'), node: t.field({ type: ThreadRef, resolve: (e) => e.node }) }),
});

const ThreadConnectionRef = builder
  .objectRef<{
    edges: { cursor: string; node: ThreadRecord }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  }>('ThreadConnection')
  .implement({
    fields: (t) => ({
      edges: t.field({ type: [ThreadEdgeRef], resolve: (c) => c.edges }),
      pageInfo: t.field({ type: PageInfoRef, resolve: (c) => c.pageInfo }),
    }),
  });

builder.queryFields((t) => ({
  thread: t.field({
    type: ThreadRef,
    nullable: true,
    description: "One of the viewer's threads; null when it does not exist or belongs to someone else.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getThread(ctx.services, ctx.viewer, String(args.id)),
  }),
  threads: t.field({
    type: ThreadConnectionRef,
    description:
      "The viewer's threads, in the order they were started: oldest first, or with newestFirst newest first.",
    args: {
      agentId: t.arg.id(),
      first: t.arg.int({ defaultValue: 20 }),
      after: t.arg.string(),
      newestFirst: t.arg.boolean({
        defaultValue: false,
        description: 'Newest first; `after` then pages on towards older ones.',
      }),
    },
    resolve: async (_root, args, ctx) =>
      connection(
        await listThreads(ctx.services, ctx.viewer, {
          agentId: optionalId(args.agentId),
          first: args.first,
          after: args.after,
          newestFirst: args.newestFirst === true,
        }),
      ),
  }),
}));
