// An agent's per-tool gating as the config file writes it (a mode, or {mode, rules, allowEdit, approvers}) → the Agent
// record's fields, and the checks zod cannot make: argument rules (the schema compiles, a DENY has a reason) and
// approvers (only an asking rule names them, an escalation comes before the pause expires).
import { argumentRuleProblems } from '../domain/gate/argument-rules.js';
import type { Agent, Approvers, ArgumentRule, ToolConfirmationMode } from '../domain/records.js';
import type { AgentConfig, ApproversConfig, ArgumentRuleConfig } from './schema.js';

type AgentGating = Pick<
  Agent,
  'toolConfirmation' | 'toolRules' | 'toolAllowEdit' | 'allowEdit' | 'approvers' | 'toolApprovers'
>;

export function gatingFromConfig(
  agent: Pick<AgentConfig, 'toolConfirmation' | 'allowEdit' | 'approvers'>,
): AgentGating {
  const toolConfirmation: Record<string, ToolConfirmationMode> = {};
  const toolRules: Record<string, ArgumentRule[]> = {};
  const toolAllowEdit: Record<string, boolean> = {};
  const toolApprovers: Record<string, Approvers> = {};
  for (const [toolId, value] of Object.entries(agent.toolConfirmation)) {
    if (typeof value === 'string') {
      toolConfirmation[toolId] = value;
      continue;
    }
    // Stored with an explicit mode, so that what is read back equals what was configured (src/domain/agent-overrides.ts).
    toolConfirmation[toolId] = value.mode ?? 'BY_ANNOTATION';
    if (value.rules?.length) toolRules[toolId] = value.rules.map(copyRule);
    if (value.allowEdit !== undefined) toolAllowEdit[toolId] = value.allowEdit;
    if (value.approvers !== undefined) toolApprovers[toolId] = approversFromConfig(value.approvers);
  }
  return {
    toolConfirmation,
    toolRules,
    toolAllowEdit,
    allowEdit: agent.allowEdit ?? true,
    approvers: agent.approvers === undefined ? 'REQUESTER' : approversFromConfig(agent.approvers),
    toolApprovers,
  };
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

/**
 * One line per approvers policy that cannot work: one on a rule that never asks (NEVER, DENY), an escalation that
 * would come at or after the pause expires (`escalate.afterSeconds` must be below the agent's `pauseTtlSeconds`).
 */
export function approversConfigProblems(
  agents: readonly Pick<AgentConfig, 'toolConfirmation' | 'approvers' | 'pauseTtlSeconds'>[],
  file: string,
): string[] {
  const problems: string[] = [];
  agents.forEach((agent, i) => {
    const check = (approvers: ApproversConfig | undefined, where: string) => {
      if (approvers === undefined || approvers === 'REQUESTER' || !approvers.escalate) return;
      if (approvers.escalate.afterSeconds >= agent.pauseTtlSeconds) {
        problems.push(
          `${file}: agents[${i}].${where}.escalate.afterSeconds: ${approvers.escalate.afterSeconds} is not below the agent's pauseTtlSeconds (${agent.pauseTtlSeconds}): the request would expire before it escalates`,
        );
      }
    };
    check(agent.approvers, 'approvers');
    for (const [toolId, value] of Object.entries(agent.toolConfirmation)) {
      if (typeof value === 'string') continue;
      check(value.approvers, `toolConfirmation.${toolId}.approvers`);
      value.rules?.forEach((rule, j) => {
        const where = `toolConfirmation.${toolId}.rules[${j}].approvers`;
        if (rule.approvers !== undefined && rule.mode !== 'ALWAYS') {
          problems.push(
            `${file}: agents[${i}].${where}: only a rule that asks (mode ALWAYS) has approvers; a ${rule.mode} rule asks no one`,
          );
        }
        check(rule.approvers, where);
      });
    }
  });
  return problems;
}

function approversFromConfig(approvers: ApproversConfig): Approvers {
  if (approvers === 'REQUESTER') return 'REQUESTER';
  return {
    roles: [...new Set(approvers.roles)],
    required: approvers.required,
    requester: approvers.requester,
    escalate: approvers.escalate
      ? { afterSeconds: approvers.escalate.afterSeconds, roles: [...new Set(approvers.escalate.roles)] }
      : null,
  };
}

function copyRule(rule: ArgumentRuleConfig): ArgumentRule {
  return {
    match: rule.match,
    mode: rule.mode,
    ...(rule.reason !== undefined && { reason: rule.reason }),
    ...(rule.approvers !== undefined && { approvers: approversFromConfig(rule.approvers) }),
  };
}
