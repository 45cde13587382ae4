import type { ToolPreExecuteEvent, ToolPreExecuteListener } from './event.js';
import { confirmationRequest } from './messages.js';
import type { Agent, ToolConfirmationMode, ToolDefinition } from '../domain/records.js';

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

/** Asks for confirmation where the gating matrix says so; a call already vetoed is left alone. */
export class ToolConfirmationListener implements ToolPreExecuteListener {
  readonly priority = 0;

  onToolPreExecute(event: ToolPreExecuteEvent): void {
    if (event.isVetoed() || event.getElicitationRequest()) return;
    if (requiresConfirmation(event.agent, event.tool)) {
      event.setElicitationRequest(confirmationRequest(event.tool, event.toolCall));
    }
  }
}
