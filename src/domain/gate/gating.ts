import { ruleMatches } from './argument-rules.js';
import type { ToolPreExecuteEvent, ToolPreExecuteListener } from './listeners.js';
import { confirmationRequest } from './messages.js';
import type { Agent, Approvers, JsonObject, ToolConfirmationMode, ToolDefinition } from '../records.js';

/** The gating matrix of docs/design.md: agent toggle × per-tool override × annotations. */
export function requiresConfirmation(
  agent: Pick<Agent, 'requireToolConfirmation' | 'toolConfirmation'>,
  tool: ToolDefinition,
): boolean {
  if (!agent.requireToolConfirmation) return false;
  const mode: ToolConfirmationMode = agent.toolConfirmation[tool.id] ?? 'BY_ANNOTATION';
  if (mode === 'ALWAYS') return true;
  if (mode === 'NEVER') return false;
  // Unannotated tools ask: the MCP default of readOnlyHint is false.
  return tool.annotations.readOnlyHint !== true;
}

// ---- argument rules -----------------------------------------------------------------------------------------

/**
 * What the gate does with one call. `ruleIndex`: the tool's rule that decided, null when none matched (the matrix
 * above decided). `grantable`: whether a remembered approval may stand in for asking; not when the ask comes from
 * the tool's mode ALWAYS or from an ALWAYS rule, which ask every time.
 */
export type GateDecision =
  | { action: 'run'; ruleIndex: number | null }
  | { action: 'ask'; ruleIndex: number | null; grantable: boolean }
  | { action: 'deny'; ruleIndex: number; reason: string };

/** The veto's reason when a stored rule cannot be evaluated (config and updateAgent refuse such rules). */
export const UNUSABLE_RULE_REASON = "the agent's argument rules for this tool cannot be evaluated";

/**
 * The gate for one call: the tool's rules in order, the first whose schema accepts the arguments decides (ALWAYS:
 * ask, NEVER: run, DENY: veto with its reason); no rule matches: the matrix. A DENY is policy and applies with the
 * master toggle off too; with the toggle off nothing asks, so a matching ALWAYS or NEVER rule runs the call. A rule
 * that cannot be evaluated vetoes the call (fail closed: nothing runs unconfirmed).
 */
export function gateDecision(
  agent: Pick<Agent, 'requireToolConfirmation' | 'toolConfirmation' | 'toolRules'>,
  tool: ToolDefinition,
  args: JsonObject,
): GateDecision {
  const rules = agent.toolRules[tool.id] ?? [];
  for (const [ruleIndex, rule] of rules.entries()) {
    let matches: boolean;
    try {
      matches = ruleMatches(rule, args);
    } catch {
      return { action: 'deny', ruleIndex, reason: UNUSABLE_RULE_REASON };
    }
    if (!matches) continue;
    // Config and updateAgent require a reason; a rule stored without one still vetoes.
    if (rule.mode === 'DENY')
      return { action: 'deny', ruleIndex, reason: rule.reason ?? 'an argument rule forbids it' };
    if (rule.mode === 'ALWAYS' && agent.requireToolConfirmation) return { action: 'ask', ruleIndex, grantable: false };
    return { action: 'run', ruleIndex };
  }
  if (!requiresConfirmation(agent, tool)) return { action: 'run', ruleIndex: null };
  return { action: 'ask', ruleIndex: null, grantable: agent.toolConfirmation[tool.id] !== 'ALWAYS' };
}

/**
 * Who answers the confirmation of a call (docs/approvers.md): the policy of the tool's first argument rule that
 * matches the arguments, else the tool's, else the agent's. The rules are evaluated only when one of them names
 * approvers; one that cannot be evaluated names none (the gate vetoes such a call anyway).
 */
export function approversFor(
  agent: Pick<Agent, 'approvers' | 'toolApprovers' | 'toolRules'>,
  toolId: string,
  args: JsonObject,
): Approvers {
  const rules = agent.toolRules[toolId] ?? [];
  if (rules.some((rule) => rule.approvers !== undefined)) {
    for (const rule of rules) {
      let matches: boolean;
      try {
        matches = ruleMatches(rule, args);
      } catch {
        break;
      }
      if (!matches) continue;
      if (rule.approvers !== undefined) return rule.approvers;
      break;
    }
  }
  return agent.toolApprovers[toolId] ?? agent.approvers;
}

/** Whether a user may edit this tool's arguments when accepting a call: the tool's own setting, else the agent's. */
export function editAllowed(agent: Pick<Agent, 'allowEdit' | 'toolAllowEdit'>, toolId: string): boolean {
  return agent.toolAllowEdit[toolId] ?? agent.allowEdit;
}

/**
 * Applies the gate: a DENY vetoes (also over a request an earlier listener set: a veto beats a confirmation
 * request), an ask sets the confirmation request; a call already vetoed or asked about is otherwise left alone.
 */
export class ToolConfirmationListener implements ToolPreExecuteListener {
  readonly priority = 0;

  onToolPreExecute(event: ToolPreExecuteEvent): void {
    if (event.isVetoed()) return;
    const decision = gateDecision(event.agent, event.tool, event.toolCall.arguments);
    if (decision.action === 'deny') event.setVeto(decision.reason);
    else if (decision.action === 'ask' && !event.getElicitationRequest())
      event.setElicitationRequest(confirmationRequest(event.tool, event.toolCall), { grantable: decision.grantable });
  }
}
