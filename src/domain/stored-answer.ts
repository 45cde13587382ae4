// How a recorded answer is kept in an elicitation's response columns, and read back: one mapping for every store, so
// that what one backend writes the other reads the same (the stores only serialise the values).
import { grantFromAnswer } from './grants.js';
import type {
  ApprovalGrantRecord,
  ElicitationAnswer,
  ElicitationRecord,
  JsonObject,
  RememberChoice,
} from './records.js';

/** `response_remember`: the remember choice and the grant it recorded. */
export type StoredRemember = RememberChoice & { grantId: string | null };

/** The response columns after the action, as JSON values (null: none). */
export interface StoredAnswerColumns {
  content: JsonObject | null;
  arguments: JsonObject | null;
  remember: StoredRemember | null;
}

/**
 * What recording `answer` writes: its response columns and, for an ACCEPT that asks to remember, the grant it
 * records in the same transaction (`grantId`: the id the caller chose for it).
 */
export function recordedAnswer(
  elicitation: Pick<ElicitationRecord, 'id' | 'ownerId' | 'agentId' | 'threadId' | 'toolCall' | 'approval'>,
  answer: ElicitationAnswer,
  grantId: string | undefined,
  now: string,
): { columns: StoredAnswerColumns; grant: ApprovalGrantRecord | null } {
  const grant =
    answer.action === 'ACCEPT' && answer.remember && grantId
      ? grantFromAnswer(elicitation, answer.remember, grantId, now)
      : null;
  return {
    columns: {
      content: answer.content,
      arguments: answer.arguments ?? null,
      remember: answer.remember ? { ...answer.remember, grantId: grant?.id ?? null } : null,
    },
    grant,
  };
}

/** The answer as given, read back: edited arguments and the remember choice only when there were some. */
export function answerFromColumns(
  action: ElicitationAnswer['action'],
  columns: { content: unknown; arguments: unknown; remember: unknown },
): ElicitationAnswer {
  const remember = columns.remember as StoredRemember | null;
  return {
    action,
    content: (columns.content as JsonObject | null) ?? null,
    ...(columns.arguments != null && { arguments: columns.arguments as JsonObject }),
    ...(remember && { remember: { scope: remember.scope, ttlSeconds: remember.ttlSeconds } }),
  };
}

/** The grant an answer recorded, from its `response_remember` column. */
export function grantIdFromColumn(remember: unknown): string | null {
  return (remember as StoredRemember | null)?.grantId ?? null;
}
