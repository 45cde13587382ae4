// How an agent's per-tool settings map to agent_tool_overrides rows (one per tool: mode, argument rules, allowEdit),
// and its approvers to the agents row's approvers column, for both stores: pure functions from records to rows and back.
import type { Agent, Approvers, ArgumentRule, ToolConfirmationMode } from './records.js';
import type { AgentGatingPatch } from './store.js';

export interface ToolOverrideRow {
  toolId: string;
  mode: ToolConfirmationMode;
  /** null: none (an empty list is stored as none). */
  rules: ArgumentRule[] | null;
  /** null: the agent's. */
  allowEdit: boolean | null;
}

/** One row per tool with a mode, rules or an allowEdit of its own; a tool with no mode gets BY_ANNOTATION. */
export function overrideRows(
  agent: Pick<Agent, 'toolConfirmation' | 'toolRules' | 'toolAllowEdit'>,
): ToolOverrideRow[] {
  const toolIds = new Set([
    ...Object.keys(agent.toolConfirmation),
    ...Object.keys(agent.toolRules),
    ...Object.keys(agent.toolAllowEdit),
  ]);
  return [...toolIds].map((toolId) => ({
    toolId,
    mode: agent.toolConfirmation[toolId] ?? 'BY_ANNOTATION',
    rules: storedRules(agent.toolRules[toolId]),
    allowEdit: agent.toolAllowEdit[toolId] ?? null,
  }));
}

export interface ToolOverrideChange {
  toolId: string;
  /** Only what the patch names; the row's other columns stay (a new row takes the defaults). */
  set: Partial<Omit<ToolOverrideRow, 'toolId'>>;
}

/** A gating patch's per-tool changes, one per tool it names. */
export function overrideChanges(patch: AgentGatingPatch): ToolOverrideChange[] {
  const changes = new Map<string, ToolOverrideChange['set']>();
  const setOf = (toolId: string) => changes.get(toolId) ?? changes.set(toolId, {}).get(toolId)!;
  for (const [toolId, mode] of Object.entries(patch.toolConfirmation ?? {})) setOf(toolId).mode = mode;
  for (const [toolId, rules] of Object.entries(patch.toolRules ?? {})) setOf(toolId).rules = storedRules(rules);
  for (const [toolId, allowEdit] of Object.entries(patch.toolAllowEdit ?? {})) setOf(toolId).allowEdit = allowEdit;
  return [...changes].map(([toolId, set]) => ({ toolId, set }));
}

/** The agent's argument rules and edit settings from its allow_edit and its override rows. */
export function argumentRulesFromRows(
  allowEdit: boolean,
  rows: readonly { toolId: string; rules: unknown[] | null; allowEdit: boolean | null }[],
): Pick<Agent, 'allowEdit' | 'toolRules' | 'toolAllowEdit'> {
  const toolRules: Record<string, ArgumentRule[]> = {};
  const toolAllowEdit: Record<string, boolean> = {};
  for (const row of rows) {
    if (row.rules?.length) toolRules[row.toolId] = row.rules as ArgumentRule[];
    if (row.allowEdit !== null) toolAllowEdit[row.toolId] = row.allowEdit;
  }
  return { allowEdit, toolRules, toolAllowEdit };
}

function storedRules(rules: ArgumentRule[] | undefined): ArgumentRule[] | null {
  return rules?.length ? rules : null;
}

/**
 * The agents row's `approvers` column: the agent's policy and its tools' (a rule's own travels with the rule). Kept
 * apart from the gating columns, which updateAgent owns once it changed them: approvers come from the config only,
 * so each start writes the config's (docs/approvers.md).
 */
export interface AgentApprovers {
  agent: Approvers;
  tools: Record<string, Approvers>;
}

/** The column's value; null when the requester alone answers everywhere (no tool has a policy either). */
export function agentApproversColumn(agent: Pick<Agent, 'approvers' | 'toolApprovers'>): AgentApprovers | null {
  if (agent.approvers === 'REQUESTER' && Object.keys(agent.toolApprovers).length === 0) return null;
  return { agent: agent.approvers, tools: agent.toolApprovers };
}

export function agentApproversFromColumn(value: unknown): Pick<Agent, 'approvers' | 'toolApprovers'> {
  const stored = value as AgentApprovers | null;
  return { approvers: stored?.agent ?? 'REQUESTER', toolApprovers: stored?.tools ?? {} };
}
