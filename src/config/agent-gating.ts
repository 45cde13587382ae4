// An agent's per-tool gating as the config file writes it (a mode, or {mode, rules, allowEdit}) → the Agent record's
// fields, and the checks of argument rules that zod cannot make (the schema compiles, a DENY has a reason).
import { argumentRuleProblems } from '../agent/argument-rules.js';
import type { Agent, ArgumentRule, ToolConfirmationMode } from '../domain/records.js';
import type { AgentConfig } from './schema.js';

type AgentGating = Pick<Agent, 'toolConfirmation' | 'toolRules' | 'toolAllowEdit' | 'allowEdit'>;

export function gatingFromConfig(agent: Pick<AgentConfig, 'toolConfirmation' | 'allowEdit'>): AgentGating {
  const toolConfirmation: Record<string, ToolConfirmationMode> = {};
  const toolRules: Record<string, ArgumentRule[]> = {};
  const toolAllowEdit: Record<string, boolean> = {};
  for (const [toolId, value] of Object.entries(agent.toolConfirmation)) {
    if (typeof value === 'string') {
      toolConfirmation[toolId] = value;
      continue;
    }
    // Stored with an explicit mode, so that what is read back equals what was configured (src/domain/agent-overrides.ts).
    toolConfirmation[toolId] = value.mode ?? 'BY_ANNOTATION';
    if (value.rules?.length) toolRules[toolId] = value.rules.map(copyRule);
    if (value.allowEdit !== undefined) toolAllowEdit[toolId] = value.allowEdit;
  }
  return { toolConfirmation, toolRules, toolAllowEdit, allowEdit: agent.allowEdit ?? true };
}

/** One line per unusable rule: `<file>: agents[0].toolConfirmation.fs:write_file.rules[1].match: <problem>`. */
export function argumentRuleConfigProblems(
  agents: readonly Pick<AgentConfig, 'toolConfirmation'>[],
  file: string,
): string[] {
  const problems: string[] = [];
  agents.forEach((agent, i) => {
    for (const [toolId, value] of Object.entries(agent.toolConfirmation)) {
      if (typeof value === 'string' || !value.rules) continue;
      for (const { path, message } of argumentRuleProblems(value.rules.map(copyRule))) {
        const where = path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('');
        problems.push(`${file}: agents[${i}].toolConfirmation.${toolId}.rules${where}: ${message}`);
      }
    }
  });
  return problems;
}

function copyRule(rule: { match: Record<string, unknown>; mode: ArgumentRule['mode']; reason?: string | undefined }) {
  return { match: rule.match, mode: rule.mode, ...(rule.reason !== undefined && { reason: rule.reason }) };
}
