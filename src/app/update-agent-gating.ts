// Change an agent's gating: its confirmation toggle, per-tool modes, argument rules, allowEdit and pause expiry.
// Administrators only. It sets what the input names and keeps the rest, so the same input sent again leaves the agent
// as the first one did.
import { argumentRuleProblems } from '../domain/gate/argument-rules.js';
import { longestEscalation } from '../domain/approvers.js';
import type { Agent, ArgumentRule, ArgumentRuleMode, JsonObject, ToolConfirmationMode } from '../domain/records.js';
import type { NotFound } from '../domain/refusals.js';
import type { AppDeps } from './deps.js';
import { type Outcome } from './outcome.js';
import type { Viewer } from './viewer.js';

/** The longest pause an agent may keep a turn waiting for answers: 30 days. */
export const MAX_PAUSE_TTL_SECONDS = 30 * 24 * 3600;

export interface ToolGatingInput {
  toolId: string;
  /** Absent or null: keep the current mode. */
  mode?: ToolConfirmationMode | null;
  /** Replaces the tool's rules, in order; [] removes them; absent or null keeps them. */
  rules?: readonly { match?: unknown; mode: ArgumentRuleMode; reason?: string | null }[] | null;
  /** The tool's own allowEdit; null removes it (the agent's applies); absent (undefined) keeps it. */
  allowEdit?: boolean | null;
}

export interface UpdateAgentGatingInput {
  agentId: string;
  requireToolConfirmation?: boolean | null;
  pauseTtlSeconds?: number | null;
  allowEdit?: boolean | null;
  /** Per-tool settings; tools not named keep theirs. */
  toolConfirmation?: readonly ToolGatingInput[] | null;
}

export type UpdateAgentGatingRefusal =
  | { code: 'FORBIDDEN'; reason: 'ADMIN_ONLY' }
  | (NotFound<'agent'> & { field: 'agentId' })
  | { code: 'INVALID_INPUT'; field: 'pauseTtlSeconds'; reason: 'OUT_OF_RANGE'; max: number }
  /** A request would expire before one of the agent's approvers policies escalates it (docs/approvers.md). */
  | { code: 'INVALID_INPUT'; field: 'pauseTtlSeconds'; reason: 'BELOW_ESCALATION'; escalateAfterSeconds: number }
  /** Entry `at[0]` of toolConfirmation names a tool the agent does not have. */
  | { code: 'INVALID_INPUT'; field: 'toolConfirmation'; at: [number, 'toolId']; reason: 'UNKNOWN_TOOL'; toolId: string }
  /**
   * Entry `at[0]`'s rules cannot be used: `rule` is the index of the rule at fault (null: the list itself), `at` goes
   * on to the part of it, `problem` says what is wrong.
   */
  | {
      code: 'INVALID_INPUT';
      field: 'toolConfirmation';
      at: [number, 'rules', ...(string | number)[]];
      reason: 'INVALID_RULES';
      toolId: string;
      rule: number | null;
      problem: string;
    };

/** `agent`: as updated; null only when it was deleted meanwhile. */
export type UpdateAgentGatingOutcome = Outcome<{ agent: Agent | null }, UpdateAgentGatingRefusal>;

export async function updateAgentGating(
  app: AppDeps,
  viewer: Viewer,
  input: UpdateAgentGatingInput,
): Promise<UpdateAgentGatingOutcome> {
  if (!viewer.isAdmin) return { ok: false, code: 'FORBIDDEN', reason: 'ADMIN_ONLY' };
  const agent = await app.store.getAgent(input.agentId);
  if (!agent) return { ok: false, code: 'NOT_FOUND', of: 'agent', field: 'agentId' };
  const ttl = input.pauseTtlSeconds;
  if (ttl != null && (ttl < 1 || ttl > MAX_PAUSE_TTL_SECONDS)) {
    return {
      ok: false,
      code: 'INVALID_INPUT',
      field: 'pauseTtlSeconds',
      reason: 'OUT_OF_RANGE',
      max: MAX_PAUSE_TTL_SECONDS,
    };
  }
  const escalateAfter = longestEscalation(agent);
  if (ttl != null && escalateAfter !== null && ttl <= escalateAfter) {
    return {
      ok: false,
      code: 'INVALID_INPUT',
      field: 'pauseTtlSeconds',
      reason: 'BELOW_ESCALATION',
      escalateAfterSeconds: escalateAfter,
    };
  }
  const known = new Set((await app.tools.toolsFor(agent)).map((tool) => tool.id));
  const overrides: Record<string, ToolConfirmationMode> = {};
  const toolRules: Record<string, ArgumentRule[]> = {};
  const toolAllowEdit: Record<string, boolean | null> = {};
  for (const [i, entry] of (input.toolConfirmation ?? []).entries()) {
    const { toolId } = entry;
    if (!known.has(toolId)) {
      return {
        ok: false,
        code: 'INVALID_INPUT',
        field: 'toolConfirmation',
        at: [i, 'toolId'],
        reason: 'UNKNOWN_TOOL',
        toolId,
      };
    }
    if (entry.mode != null) overrides[toolId] = entry.mode;
    if (entry.rules != null) {
      const rules = entry.rules.map((rule): ArgumentRule => ({
        match: rule.match as JsonObject,
        mode: rule.mode,
        ...(rule.reason != null && { reason: rule.reason }),
      }));
      const problem = argumentRuleProblems(rules)[0];
      if (problem) {
        return {
          ok: false,
          code: 'INVALID_INPUT',
          field: 'toolConfirmation',
          at: [i, 'rules', ...problem.path],
          reason: 'INVALID_RULES',
          toolId,
          rule: problem.path.length > 0 ? Number(problem.path[0]) : null,
          problem: problem.message,
        };
      }
      toolRules[toolId] = rules;
    }
    if (entry.allowEdit !== undefined) toolAllowEdit[toolId] = entry.allowEdit;
  }
  const updated = await app.store.updateAgentGating(
    agent.id,
    {
      ...(input.requireToolConfirmation != null && { requireToolConfirmation: input.requireToolConfirmation }),
      ...(ttl != null && { pauseTtlSeconds: ttl }),
      toolConfirmation: overrides,
      ...(input.allowEdit != null && { allowEdit: input.allowEdit }),
      toolRules,
      toolAllowEdit,
    },
    app.clock().toISOString(),
  );
  return { ok: true, agent: updated };
}
