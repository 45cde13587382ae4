// What the loop reads of a thread's transcript: the calls still open, and the messages the model is sent.
import type { MessageRecord, ToolCall } from '../domain/records.js';
import type { ModelMessage } from '../models/model.js';
import type { ToolNames } from '../domain/gate/tool-names.js';

/** Tool calls of the turn's last ASSISTANT message that have no TOOL message yet (none if it is another turn's). */
export function openToolCalls(transcript: MessageRecord[], turnId: string): ToolCall[] {
  const lastAssistant = transcript.findLastIndex((m) => m.role === 'ASSISTANT');
  if (lastAssistant < 0 || transcript[lastAssistant]!.turnId !== turnId) return [];
  const answered = new Set(
    transcript
      .slice(lastAssistant + 1)
      .filter((m) => m.role === 'TOOL')
      .map((m) => m.toolCallId),
  );
  return transcript[lastAssistant]!.toolCalls.filter((call) => !answered.has(call.id));
}

/** The transcript as the model is sent it: no SYSTEM message, each call under its model-facing name. */
export function toModelMessages(transcript: MessageRecord[], names: ToolNames): ModelMessage[] {
  return transcript
    .filter((m) => m.role !== 'SYSTEM')
    .map((m) => ({
      role: m.role as ModelMessage['role'],
      text: m.text,
      toolCalls: m.toolCalls.map((call) => ({
        id: call.id,
        name: names.modelName(call.toolId),
        arguments: call.arguments,
      })),
      toolCallId: m.toolCallId,
    }));
}
