// Plain values for the unit tests of src/agent/: an agent, trusted tool definitions and a call.
import type { Agent, ToolAnnotations, ToolCall, ToolDefinition } from '../../src/domain/records.js';

export function agent(overrides: Partial<Agent> = {}): Agent {
  return {
    id: 'a',
    name: 'A',
    description: null,
    modelId: 'm',
    systemPrompt: 'sp',
    toolIds: ['s:*'],
    requireToolConfirmation: true,
    toolConfirmation: {},
    pauseTtlSeconds: 60,
    maxIterations: 5,
    allowEdit: true,
    toolRules: {},
    toolAllowEdit: {},
    approvers: 'REQUESTER',
    toolApprovers: {},
    ...overrides,
  };
}

export function tool(
  name: string,
  annotations: ToolAnnotations = {},
  overrides: Partial<ToolDefinition> = {},
): ToolDefinition {
  return {
    id: `s:${name}`,
    source: 's',
    name,
    label: annotations.title ?? name,
    description: `Does ${name}.`,
    inputSchema: { type: 'object' },
    annotations,
    ...overrides,
  };
}

export function toolCall(name: string, args: Record<string, unknown> = {}): ToolCall {
  return { id: `call_${name}`, name, toolId: `s:${name}`, arguments: args };
}
