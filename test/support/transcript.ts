// The transcript invariant of docs/design.md: every tool call of an assistant message gets exactly one TOOL message,
// right after it and in the calls' order, so the transcript is valid for any chat-completions API.
import { expect } from 'vitest';

/** The shape shared by GraphQL `Message`s and the model's `ModelMessage`s. */
export interface TranscriptMessage {
  role: string;
  text?: string | null;
  toolCalls: { id: string; name?: string }[];
  toolCallId: string | null;
}

/**
 * Everything wrong with a transcript, in words; empty when it is valid. With `openLastStep`, the last assistant
 * message's calls may still be unanswered (a PAUSED turn: its calls get their TOOL messages when it resumes or closes).
 */
export function transcriptProblems(messages: TranscriptMessage[], options: { openLastStep?: boolean } = {}): string[] {
  const problems: string[] = [];
  const lastAssistant = messages.findLastIndex((m) => m.role === 'ASSISTANT');
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'TOOL') {
      problems.push(`message ${i}: TOOL message for ${message.toolCallId} does not follow its assistant message`);
      continue;
    }
    if (message.role !== 'ASSISTANT' || message.toolCalls.length === 0) continue;
    const answers: string[] = [];
    while (messages[i + 1]?.role === 'TOOL') answers.push(messages[++i]!.toolCallId ?? '<null>');
    const expected = message.toolCalls.map((call) => call.id);
    if (answers.length === 0 && options.openLastStep && i === lastAssistant) continue;
    if (new Set(expected).size !== expected.length)
      problems.push(`assistant message ${i}: duplicate call ids ${expected.join(', ')}`);
    if (JSON.stringify(answers) !== JSON.stringify(expected)) {
      problems.push(
        `assistant message calls [${expected.join(', ')}] answered by TOOL messages [${answers.join(', ')}]`,
      );
    }
  }
  return problems;
}

export function expectValidTranscript(messages: TranscriptMessage[], options: { openLastStep?: boolean } = {}): void {
  expect(transcriptProblems(messages, options)).toEqual([]);
}

/** Every request a model received had a complete transcript: the loop never calls a model with an open call. */
export function expectValidModelRequests(requests: { messages: TranscriptMessage[] }[]): void {
  for (const [i, request] of requests.entries()) {
    expect(transcriptProblems(request.messages), `model request ${i}`).toEqual([]);
  }
}

/** The TOOL message that answers one call, by call id. */
export function toolMessageFor<M extends TranscriptMessage>(messages: M[], toolCallId: string): M | undefined {
  return messages.find((m) => m.role === 'TOOL' && m.toolCallId === toolCallId);
}
