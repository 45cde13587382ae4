import { toolText } from './messages.js';
import type { CloseReason, PendingStep, ToolMessageDraft } from './types.js';

/** The TOOL messages of a paused step that will not run: one per call, DESIGN.md's texts. */
export function closeStep(step: PendingStep, reason: CloseReason): ToolMessageDraft[] {
  return step.calls.map(({ toolCall, outcome }) => ({
    toolCallId: toolCall.id,
    text: outcome.kind === 'vetoed' ? toolText.denied(toolCall.name, outcome.reason)
      : outcome.kind === 'rejected' ? outcome.text
      : reason === 'expired' ? toolText.expired(toolCall.name)
      : reason === 'superseded' ? toolText.superseded(toolCall.name)
      : toolText.cancelledByUser(toolCall.name),
  }));
}
