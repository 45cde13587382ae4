// Start a turn: the viewer's message to an agent, in a new thread or one of theirs. The loop runs it
// (src/agent/runner.ts); this decides whether it may start: the message and the key are checked here, the agent,
// the thread (the viewer's, of this agent, not busy) and the key's earlier use by the store, in one transaction.
import type { ElicitationRecord, ThreadRecord, TurnRecord } from '../domain/records.js';
import { idempotencyKeyProblem } from '../domain/idempotency.js';
import type { NotFound, StartRefusal } from '../domain/refusals.js';
import type { AppDeps } from './deps.js';
import { textProblem, type TextProblem } from '../domain/text-problem.js';
import { type Outcome } from './outcome.js';
import type { Viewer } from './viewer.js';

export interface StartTurnInput {
  agentId: string;
  /** null: open a new thread. */
  threadId: string | null;
  message: string;
  /** Return at once with the turn RUNNING instead of when it stops. */
  background: boolean;
  /** The client's name for this request: sent again, it returns the first request's turn (src/domain/idempotency.ts). */
  idempotencyKey?: string | null;
}

export type StartTurnRefusal =
  | ({ code: 'INVALID_INPUT'; field: 'message' | 'idempotencyKey' } & TextProblem)
  | (NotFound<'agent'> & { field: 'agentId' })
  /** The agent is a gateway: its calls come from MCP clients, not from messages. */
  | (Extract<StartRefusal, { reason: 'GATEWAY' }> & { field: 'agentId' })
  /** No thread with this id of the viewer's, or one of another agent. */
  | (Extract<StartRefusal, { of: 'thread' }> & { field: 'threadId' })
  /** The thread's turn is RUNNING. */
  | (Extract<StartRefusal, { code: 'THREAD_BUSY' }> & { field: 'threadId' })
  /** The key was used before for another agent, thread or message. */
  | (Extract<StartRefusal, { code: 'IDEMPOTENCY_KEY_REUSED' }> & { field: 'idempotencyKey' });

export type StartTurnOutcome = Outcome<
  {
    thread: ThreadRecord;
    turn: TurnRecord;
    /** When `turn` is the pause the call stopped at: its elicitations as created. */
    pausedWith: ElicitationRecord[] | null;
  },
  StartTurnRefusal
>;

export async function startTurn(app: AppDeps, viewer: Viewer, input: StartTurnInput): Promise<StartTurnOutcome> {
  // A message of blanks is empty.
  const messageProblem = textProblem(input.message, input.message.trim().length === 0, app.limits.maxMessageLength);
  if (messageProblem) return { ok: false, code: 'INVALID_INPUT', field: 'message', ...messageProblem };
  const key = input.idempotencyKey ?? undefined;
  if (key !== undefined) {
    const keyProblem = idempotencyKeyProblem(key);
    if (keyProblem) return { ok: false, code: 'INVALID_INPUT', field: 'idempotencyKey', ...keyProblem };
  }
  const result = await app.runner.startTurn({
    agentId: input.agentId,
    ownerId: viewer.id,
    threadId: input.threadId,
    message: input.message,
    background: input.background,
    ...(key !== undefined && { idempotencyKey: key }),
  });
  if (result.ok) return result;
  return { ok: false, ...inField(result) };
}

/** A refusal of the store's start, with the input field it is about. */
function inField(refusal: StartRefusal): StartTurnRefusal {
  switch (refusal.code) {
    case 'NOT_FOUND':
      return refusal.of === 'agent' ? { ...refusal, field: 'agentId' } : { ...refusal, field: 'threadId' };
    case 'INVALID_INPUT':
      return { ...refusal, field: 'agentId' };
    case 'THREAD_BUSY':
      return { ...refusal, field: 'threadId' };
    case 'IDEMPOTENCY_KEY_REUSED':
      return { ...refusal, field: 'idempotencyKey' };
  }
}
