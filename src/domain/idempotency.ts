// Idempotency keys of startTurn, after Stripe's: a client names a request with a key of its choosing, and sending it
// again (after an error or a timeout whose outcome it cannot know) returns the turn the first one started instead of
// starting a second. A key belongs to one user, is claimed in the transaction that creates the turn (a unique
// (owner, key) row), and is kept at least IDEMPOTENCY_KEY_RETENTION_MS; the sweeper deletes it after that.
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { ToolCall } from './records.js';
import { textProblem, type TextProblem } from './text-problem.js';

/** The longest key accepted, in characters (Stripe's limit). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** What is wrong with a key a client sent, or null: a key is a name, and any non-empty storable one will do. */
export function idempotencyKeyProblem(key: string): TextProblem | null {
  return textProblem(key, key.length === 0, MAX_IDEMPOTENCY_KEY_LENGTH);
}

/** How long a key is kept: a retry within this time gets the first turn; after it, the sweeper deletes the key. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 3600 * 1000;

/**
 * What a retry must send again for its key to return the first turn: the agent, the thread (null for a new one) and
 * the message. `background` is not part of it: it changes when the response comes, not what is committed.
 */
export function startTurnFingerprint(request: {
  agentId: string;
  threadId: string | null;
  message: string;
  /** A gateway's call: its tool and arguments stand for the request (its id is ours, made anew each time). */
  call?: Pick<ToolCall, 'toolId' | 'arguments'>;
}): string {
  // A gateway's call is named by its tool and arguments; its message only says who sent it.
  const parts = request.call
    ? [request.agentId, request.threadId, request.call.toolId, canonicalJson(request.call.arguments)]
    : [request.agentId, request.threadId, request.message];
  const text = JSON.stringify(parts);
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}
