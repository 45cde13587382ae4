// One vocabulary of refusals. The store and the rules refuse with these, the runner passes them on unchanged, the use
// cases (src/app/) add the input field at fault, and only the entrances word them (src/graphql/refusals.ts,
// src/mcp/refusals.ts). A refusal is the caller's mistake and changes nothing; what the caller must be told travels
// with it as data (a status, a time, a limit), never as words.
import type { ElicitationStatus } from './records.js';

/** Every code a request is refused with; the GraphQL API's UserErrorCode enum is this list. */
export const REFUSAL_CODES = [
  'NOT_FOUND',
  'EXPIRED',
  'ALREADY_RESOLVED',
  'INVALID_CONTENT',
  'INVALID_INPUT',
  'THREAD_BUSY',
  'FORBIDDEN',
  'IDEMPOTENCY_KEY_REUSED',
  'PASSKEY_REQUIRED',
  'PASSKEY_INVALID',
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** What a request may name that is not there for its caller. */
export type Missing = 'agent' | 'thread' | 'turn' | 'elicitation' | 'grant' | 'tool';

/** No such record for the caller: another user's reads as absent, exactly like an unknown id. */
export interface NotFound<Of extends Missing = Missing> {
  code: 'NOT_FOUND';
  of: Of;
}

/** Why a turn does not start (the store's startTurn): nothing is written, and an idempotency key it claimed is not kept. */
export type StartRefusal =
  | NotFound<'agent'>
  /** No thread of the caller's with this id (NO_SUCH_THREAD), or one of another agent (OTHER_AGENT). */
  | (NotFound<'thread'> & { reason: 'NO_SUCH_THREAD' | 'OTHER_AGENT' })
  /** A message to a gateway, whose calls come from its MCP clients. */
  | { code: 'INVALID_INPUT'; reason: 'GATEWAY' }
  /** The thread's turn is RUNNING. */
  | { code: 'THREAD_BUSY' }
  /** The idempotency key was claimed before by another request (another agent, thread or message). */
  | { code: 'IDEMPOTENCY_KEY_REUSED' };

/** Why an answer is not recorded (the store's resolveElicitation), with what the request is now. */
export type AnswerRefusal =
  | NotFound<'elicitation'>
  /**
   * Answered before with another answer: by the caller, whose first answer stands (`status` still PENDING while the
   * request waits for other approvers), or decided.
   */
  | { code: 'ALREADY_RESOLVED'; status: ElicitationStatus }
  /** Past its expiry: nothing ran. */
  | { code: 'EXPIRED'; expiresAt: string };
