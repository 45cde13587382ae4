import { answerInstructions, calledName, toolText } from './messages.js';
import type { CloseReason, ElicitationAnswer, GateOutcome, PendingStep, ToolMessageDraft } from '../records.js';

/**
 * The TOOL messages of a paused step that will not run: one per call, docs/design.md's texts. `answers` (by elicitation
 * id) are those already given: a call the user declined keeps its decline text; only unanswered ones (and accepted
 * ones, which never ran) get the closing text.
 */
export function closeStep(
  step: PendingStep,
  reason: CloseReason,
  answers: Readonly<Record<string, ElicitationAnswer | null>> = {},
): ToolMessageDraft[] {
  return step.calls.map(({ toolCall, outcome }) => ({
    toolCallId: toolCall.id,
    text: closingText(calledName(toolCall), outcome),
  }));

  function closingText(name: string, outcome: GateOutcome): string {
    if (outcome.kind === 'vetoed') return toolText.denied(name, outcome.reason);
    if (outcome.kind === 'rejected') return outcome.text;
    const answer = outcome.kind === 'confirm' ? answers[outcome.elicitationId] : null;
    if (answer?.action === 'DECLINE') return toolText.declined(name, answerInstructions(answer));
    if (reason === 'expired') return toolText.expired(name);
    if (reason === 'superseded') return toolText.superseded(name);
    return toolText.cancelledByUser(name);
  }
}
