import { GraphQLError } from 'graphql';
import {
  agentTools,
  getAgent,
  listAgents,
  previewGate,
  toolGating,
  type AgentTool,
  type GateDecision,
} from '../app/agent-reads.js';
import { updateAgentGating } from '../app/update-agent-gating.js';
import { isGateway } from '../domain/gateway.js';
import type { Agent, ArgumentRule } from '../domain/records.js';
import { builder } from './builder.js';
import { NodeRef } from './node.js';
import { AgentRef, ToolAnnotationsRef } from './refs.js';
import { updateAgentError } from './refusals.js';
import { UserErrorRef, type UserError } from './user-errors.js';

export const ToolConfirmationModeEnum = builder.enumType('ToolConfirmationMode', {
  values: ['ALWAYS', 'NEVER', 'BY_ANNOTATION'] as const,
});

ToolAnnotationsRef.implement({
  description: 'MCP tool annotations; an absent hint is null (the MCP defaults then apply).',
  fields: (t) => ({
    title: t.string({ nullable: true, resolve: (a) => a.title ?? null }),
    readOnlyHint: t.boolean({ nullable: true, resolve: (a) => a.readOnlyHint ?? null }),
    destructiveHint: t.boolean({ nullable: true, resolve: (a) => a.destructiveHint ?? null }),
    idempotentHint: t.boolean({ nullable: true, resolve: (a) => a.idempotentHint ?? null }),
    openWorldHint: t.boolean({ nullable: true, resolve: (a) => a.openWorldHint ?? null }),
  }),
});

// ---- argument rules and editing (docs/argument-rules.md) ----

export const ArgumentRuleModeEnum = builder.enumType('ArgumentRuleMode', {
  description: 'What an argument rule does with the calls it matches.',
  values: {
    ALWAYS: { description: 'Ask for confirmation, every time (a remembered approval does not stand in).' },
    NEVER: { description: 'Run without asking.' },
    DENY: { description: "Refuse the call; the model is told the rule's reason." },
  },
});

const ArgumentRuleRef = builder.objectRef<ArgumentRule>('ArgumentRule').implement({
  description:
    "One of a tool's argument rules: evaluated in order, the first whose `match` accepts a call's arguments decides.",
  fields: (t) => ({
    match: t.field({
      type: 'JSON',
      description: "A JSON Schema (2020-12) validated against the call's arguments.",
      resolve: (rule) => rule.match,
    }),
    mode: t.field({ type: ArgumentRuleModeEnum, resolve: (rule) => rule.mode }),
    reason: t.string({
      nullable: true,
      description: 'For DENY, what the model is told; otherwise an explanation.',
      resolve: (rule) => rule.reason ?? null,
    }),
  }),
});

const GATE_ACTIONS = { run: 'RUN', ask: 'ASK', deny: 'DENY' } as const;

const ToolGateActionEnum = builder.enumType('ToolGateAction', {
  values: {
    RUN: { description: 'The call runs without asking.' },
    ASK: { description: 'The turn pauses and asks for confirmation.' },
    DENY: { description: 'The call is vetoed; the model is told the reason.' },
  },
});

const ToolGateDecisionRef = builder.objectRef<GateDecision>('ToolGateDecision').implement({
  description: "What toolgate's own gate decides for a call (listeners of plugins may still veto or ask).",
  fields: (t) => ({
    action: t.field({
      type: ToolGateActionEnum,
      resolve: (d) => GATE_ACTIONS[d.action],
    }),
    ruleIndex: t.int({
      nullable: true,
      description:
        "The index of the tool's rule that decided; null when none matched (the mode and annotations decided).",
      resolve: (d) => d.ruleIndex,
    }),
    reason: t.string({
      nullable: true,
      description: 'The veto reason (DENY).',
      resolve: (d) => (d.action === 'deny' ? d.reason : null),
    }),
    grantable: t.boolean({
      description:
        'ASK only: whether a remembered approval may stand in for asking (not when the mode or rule is ALWAYS).',
      resolve: (d) => d.action === 'ask' && d.grantable,
    }),
  }),
});

// ---- end of argument rules and editing ----

const AgentToolRef = builder.objectRef<AgentTool>('AgentTool').implement({
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
      resolve: (agentTool) => toolGating(agentTool).mode,
    }),
    requiresConfirmation: t.boolean({
      description:
        "The effective decision from the agent toggle, the override and the annotations: what a call gets when none of the tool's argument rules matches (see `gate` for given arguments).",
      resolve: (agentTool) => toolGating(agentTool).requiresConfirmation,
    }),
    // ---- argument rules and editing (issue 15) ----
    rules: t.field({
      type: [ArgumentRuleRef],
      description: "The tool's argument rules, in the order they are evaluated; empty when it has none.",
      resolve: (agentTool) => toolGating(agentTool).rules,
    }),
    allowEdit: t.boolean({
      description:
        "Whether a user may edit this tool's arguments when accepting a call: allowEditOverride, else the agent's allowEdit.",
      resolve: (agentTool) => toolGating(agentTool).allowEdit,
    }),
    allowEditOverride: t.boolean({
      nullable: true,
      description: "This tool's own allowEdit; null: the agent's applies.",
      resolve: (agentTool) => toolGating(agentTool).allowEditOverride,
    }),
    gate: t.field({
      type: ToolGateDecisionRef,
      description:
        "What the gate would decide for a call of this tool with these arguments, now: the argument rules, then the mode and annotations. The tool's inputSchema is not checked.",
      args: { arguments: t.arg({ type: 'JSON', required: true }) },
      resolve: (agentTool, args) => {
        const preview = previewGate(agentTool, args.arguments);
        // A field's argument has no userErrors: refused as GraphQL's own input errors are.
        if (!preview.ok)
          throw new GraphQLError('arguments must be a JSON object, as a tool call has.', {
            extensions: { code: 'BAD_USER_INPUT' },
          });
        return preview.decision;
      },
    }),
  }),
});

AgentRef.implement({
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
    isGateway: t.boolean({
      description:
        'Whether this agent is a gateway: it has no model, and MCP clients at /mcp choose its calls, each a turn of a thread of its own.',
      resolve: (agent) => isGateway(agent),
    }),
    allowEdit: t.exposeBoolean('allowEdit', {
      description:
        "Whether a user may edit a call's arguments when accepting it; a tool's own setting wins (AgentTool.allowEdit).",
    }),
    tools: t.field({
      type: [AgentToolRef],
      resolve: (agent, _args, ctx) => agentTools(ctx.services, agent),
    }),
  }),
});

builder.queryFields((t) => ({
  agents: t.field({
    type: [AgentRef],
    description: 'Agents the viewer may talk to.',
    resolve: (_root, _args, ctx) => listAgents(ctx.services),
  }),
  agent: t.field({
    type: AgentRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getAgent(ctx.services, String(args.id)),
  }),
}));

const ArgumentRuleInput = builder.inputType('ArgumentRuleInput', {
  fields: (t) => ({
    match: t.field({
      type: 'JSON',
      required: true,
      description: "A JSON Schema (2020-12) object for the call's arguments; {} matches every call.",
    }),
    mode: t.field({ type: ArgumentRuleModeEnum, required: true }),
    reason: t.string({ description: 'Required for DENY: the model is told it.' }),
  }),
});

const ToolConfirmationInput = builder.inputType('ToolConfirmationInput', {
  fields: (t) => ({
    toolId: t.id({ required: true }),
    mode: t.field({
      type: ToolConfirmationModeEnum,
      description: 'The mode to set; absent or null keeps the current one.',
    }),
    rules: t.field({
      type: [ArgumentRuleInput],
      description: "Replaces the tool's argument rules (in order); [] removes them; absent or null keeps them.",
    }),
    allowEdit: t.boolean({
      description: "The tool's own allowEdit; null removes it (the agent's applies); absent keeps it.",
    }),
  }),
});

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  fields: (t) => ({
    agentId: t.id({ required: true }),
    requireToolConfirmation: t.boolean(),
    pauseTtlSeconds: t.int(),
    allowEdit: t.boolean({ description: "Whether a user may edit a call's arguments when accepting it." }),
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

builder.mutationField('updateAgent', (t) =>
  t.field({
    type: UpdateAgentPayload,
    description:
      "Administrators only: the agent's tool-confirmation gating (modes, argument rules, allowEdit) and pause expiry. " +
      'It sets what it names, so the same input sent again (a retry after a GraphQL error or a timeout) leaves the ' +
      'agent as the first one did.',
    args: { input: t.arg({ type: UpdateAgentInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const outcome = await updateAgentGating(ctx.services, ctx.viewer, {
        ...input,
        agentId: String(input.agentId),
        toolConfirmation: input.toolConfirmation?.map((entry) => ({ ...entry, toolId: String(entry.toolId) })),
      });
      if (!outcome.ok) return { agent: null, userErrors: [updateAgentError(outcome)] };
      return { agent: outcome.agent, userErrors: [] };
    },
  }),
);

// Its display fields (labelDisplay, nameDisplay) are added in visible-text.ts.
export { AgentToolRef };
