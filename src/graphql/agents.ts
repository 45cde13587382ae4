import { requiresConfirmation } from '../agent/gating.js';
import type { Agent, ToolAnnotations, ToolConfirmationMode } from '../domain/records.js';
import type { Tool } from '../tools/tool.js';
import { builder } from './builder.js';
import { NodeRef } from './node.js';
import { userError, UserErrorRef, type UserError } from './user-errors.js';

export const ToolConfirmationModeEnum = builder.enumType('ToolConfirmationMode', {
  values: ['ALWAYS', 'NEVER', 'BY_ANNOTATION'] as const,
});

export const ToolAnnotationsRef = builder.objectRef<ToolAnnotations>('ToolAnnotations').implement({
  description: 'MCP tool annotations; an absent hint is null (the MCP defaults then apply).',
  fields: (t) => ({
    title: t.string({ nullable: true, resolve: (a) => a.title ?? null }),
    readOnlyHint: t.boolean({ nullable: true, resolve: (a) => a.readOnlyHint ?? null }),
    destructiveHint: t.boolean({ nullable: true, resolve: (a) => a.destructiveHint ?? null }),
    idempotentHint: t.boolean({ nullable: true, resolve: (a) => a.idempotentHint ?? null }),
    openWorldHint: t.boolean({ nullable: true, resolve: (a) => a.openWorldHint ?? null }),
  }),
});

const AgentToolRef = builder.objectRef<{ agent: Agent; tool: Tool }>('AgentTool').implement({
  fields: (t) => ({
    toolId: t.id({ description: '<source>:<tool name>, e.g. demo:delete_entities', resolve: ({ tool }) => tool.id }),
    name: t.string({ resolve: ({ tool }) => tool.name }),
    label: t.string({
      description: 'From the trusted tool definition (annotations.title, else the name).',
      resolve: ({ tool }) => tool.label,
    }),
    description: t.string({ resolve: ({ tool }) => tool.description }),
    inputSchema: t.field({ type: 'JSON', resolve: ({ tool }) => tool.inputSchema }),
    annotations: t.field({ type: ToolAnnotationsRef, resolve: ({ tool }) => tool.annotations }),
    confirmation: t.field({
      type: ToolConfirmationModeEnum,
      description: 'The per-tool override; BY_ANNOTATION unless set.',
      resolve: ({ agent, tool }) => agent.toolConfirmation[tool.id] ?? 'BY_ANNOTATION',
    }),
    requiresConfirmation: t.boolean({
      description: 'The effective decision from the agent toggle, the override and the annotations.',
      resolve: ({ agent, tool }) => requiresConfirmation(agent, tool),
    }),
  }),
});

export const AgentRef = builder.objectRef<Agent>('Agent').implement({
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    requireToolConfirmation: t.exposeBoolean('requireToolConfirmation', {
      description: 'Master toggle; when false no tool call of this agent asks for confirmation.',
    }),
    pauseTtlSeconds: t.exposeInt('pauseTtlSeconds', {
      description: 'How long a paused turn and its elicitations stay answerable.',
    }),
    maxIterations: t.exposeInt('maxIterations', { description: 'Model calls a turn may make before it stops FAILED.' }),
    tools: t.field({
      type: [AgentToolRef],
      resolve: async (agent, _args, ctx) => (await ctx.services.tools.toolsFor(agent)).map((tool) => ({ agent, tool })),
    }),
  }),
});

builder.queryFields((t) => ({
  agents: t.field({
    type: [AgentRef],
    description: 'Agents the viewer may talk to.',
    resolve: (_root, _args, ctx) => ctx.services.store.listAgents(),
  }),
  agent: t.field({
    type: AgentRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.store.getAgent(String(args.id)),
  }),
}));

const ToolConfirmationInput = builder.inputType('ToolConfirmationInput', {
  fields: (t) => ({
    toolId: t.id({ required: true }),
    mode: t.field({ type: ToolConfirmationModeEnum, required: true }),
  }),
});

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  fields: (t) => ({
    agentId: t.id({ required: true }),
    requireToolConfirmation: t.boolean(),
    pauseTtlSeconds: t.int(),
    toolConfirmation: t.field({
      type: [ToolConfirmationInput],
      description: 'Per-tool overrides to set; tools not named keep theirs.',
    }),
  }),
});

const UpdateAgentPayload = builder
  .objectRef<{ agent: Agent | null; userErrors: UserError[] }>('UpdateAgentPayload')
  .implement({
    fields: (t) => ({
      agent: t.field({ type: AgentRef, nullable: true, resolve: (p) => p.agent }),
      userErrors: t.field({ type: [UserErrorRef], resolve: (p) => p.userErrors }),
    }),
  });

const MAX_PAUSE_TTL = 30 * 24 * 3600;

builder.mutationField('updateAgent', (t) =>
  t.field({
    type: UpdateAgentPayload,
    description: "Administrators only: the agent's tool-confirmation gating and pause expiry.",
    args: { input: t.arg({ type: UpdateAgentInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const fail = (error: UserError) => ({ agent: null, userErrors: [error] });
      if (!ctx.viewer.isAdmin) return fail(userError('FORBIDDEN', 'Only administrators may change agents.'));
      const agent = await ctx.services.store.getAgent(String(input.agentId));
      if (!agent) return fail(userError('NOT_FOUND', 'No agent with this id.', ['input', 'agentId']));
      const ttl = input.pauseTtlSeconds;
      if (ttl !== null && ttl !== undefined && (ttl < 1 || ttl > MAX_PAUSE_TTL)) {
        return fail(
          userError('INVALID_INPUT', `pauseTtlSeconds must be between 1 and ${MAX_PAUSE_TTL}.`, [
            'input',
            'pauseTtlSeconds',
          ]),
        );
      }
      const known = new Set((await ctx.services.tools.toolsFor(agent)).map((tool) => tool.id));
      const overrides: Record<string, ToolConfirmationMode> = {};
      for (const [i, entry] of (input.toolConfirmation ?? []).entries()) {
        const toolId = String(entry.toolId);
        if (!known.has(toolId)) {
          return fail(
            userError('INVALID_INPUT', `The agent has no tool ${toolId}.`, [
              'input',
              'toolConfirmation',
              String(i),
              'toolId',
            ]),
          );
        }
        overrides[toolId] = entry.mode;
      }
      const updated = await ctx.services.store.updateAgentGating(
        agent.id,
        {
          ...(input.requireToolConfirmation != null && { requireToolConfirmation: input.requireToolConfirmation }),
          ...(ttl != null && { pauseTtlSeconds: ttl }),
          toolConfirmation: overrides,
        },
        ctx.services.clock().toISOString(),
      );
      return { agent: updated, userErrors: [] };
    },
  }),
);
