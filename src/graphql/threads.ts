import type { MessageRecord, Page, ThreadRecord, ToolCall } from '../domain/records.js';
import { AgentRef } from './agents.js';
import { builder } from './builder.js';
import { clampFirst, NodeRef, optionalId, PageInfoRef } from './node.js';
import { TurnRef } from './turns.js';

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

export const MessageRef = builder.objectRef<MessageRecord>('Message').implement({
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

export const ThreadRef = builder.objectRef<ThreadRecord>('Thread');

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
    resolve: (_root, args, ctx) => ctx.services.store.getThread(String(args.id), ctx.viewer.id),
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
    resolve: async (_root, args, ctx) => {
      const page = await ctx.services.store.listThreads(
        ctx.viewer.id,
        optionalId(args.agentId),
        clampFirst(args.first, 20, 100),
        args.after ?? null,
        args.newestFirst === true,
      );
      return connection(page);
    },
  }),
}));

/** A Relay connection from a store page: each edge's cursor is its own position. */
export function connection<T>(page: Page<T>) {
  return {
    edges: page.items.map((node, i) => ({ cursor: page.cursors[i]!, node })),
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.endCursor },
  };
}
