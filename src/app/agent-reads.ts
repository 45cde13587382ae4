// Agents and how each of their tools is gated. Agents are shared: every viewer may see them and their settings (only
// administrators change them: update-agent-gating.ts).
import { editAllowed, gateDecision, requiresConfirmation, type GateDecision } from '../domain/gate/gating.js';
import type { Agent, ArgumentRule, JsonObject, ToolConfirmationMode } from '../domain/records.js';
import type { Tool } from '../tools/tool.js';
import type { AppDeps } from './deps.js';
import { type Outcome } from './outcome.js';

export type { GateDecision };

/** One tool of one agent: the pair the gating settings below are read from. */
export interface AgentTool {
  agent: Agent;
  tool: Tool;
}

export function listAgents(app: AppDeps): Promise<Agent[]> {
  return app.store.listAgents();
}

export function getAgent(app: AppDeps, id: string): Promise<Agent | null> {
  return app.store.getAgent(id);
}

/** The agent's tools as their sources list them now, in the agent's order. */
export async function agentTools(app: AppDeps, agent: Agent): Promise<AgentTool[]> {
  return (await app.tools.toolsFor(agent)).map((tool) => ({ agent, tool }));
}

export interface ToolGating {
  /** The per-tool override; BY_ANNOTATION unless set. */
  mode: ToolConfirmationMode;
  /** What a call gets when none of the rules matches: the agent's toggle, the mode and the annotations. */
  requiresConfirmation: boolean;
  /** In the order they are evaluated; empty when it has none. */
  rules: ArgumentRule[];
  /** Whether a user may edit a call's arguments when accepting it: the tool's own setting, else the agent's. */
  allowEdit: boolean;
  /** The tool's own allowEdit; null: the agent's applies. */
  allowEditOverride: boolean | null;
}

export function toolGating({ agent, tool }: AgentTool): ToolGating {
  return {
    mode: agent.toolConfirmation[tool.id] ?? 'BY_ANNOTATION',
    requiresConfirmation: requiresConfirmation(agent, tool),
    rules: agent.toolRules[tool.id] ?? [],
    allowEdit: editAllowed(agent, tool.id),
    allowEditOverride: agent.toolAllowEdit[tool.id] ?? null,
  };
}

export type GatePreviewRefusal = { code: 'INVALID_INPUT'; field: 'arguments'; reason: 'NOT_AN_OBJECT' };

/**
 * What the gate would decide now for a call of the tool with these arguments: the rules, then the mode and the
 * annotations (the tool's inputSchema is not checked). Arguments must be a JSON object, as a tool call's are.
 */
export function previewGate(
  { agent, tool }: AgentTool,
  args: unknown,
): Outcome<{ decision: GateDecision }, GatePreviewRefusal> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ok: false, code: 'INVALID_INPUT', field: 'arguments', reason: 'NOT_AN_OBJECT' };
  }
  return { ok: true, decision: gateDecision(agent, tool, args as JsonObject) };
}
