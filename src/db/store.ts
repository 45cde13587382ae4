// The storage interface the rest of toolgate uses. The SQLite store implements it; a PostgreSQL store can
// later. Every method that changes state is one atomic transaction.
import type {
  Agent, ChatMessage, ToolMessageDraft, ElicitationAnswer, ElicitationRequest, ElicitationStatus, JsonObject, PendingStep,
  ToolAnnotations, ToolConfirmationMode, TurnStatus, CloseReason,
} from '../agent/types.js';

export interface ThreadRecord {
  id: string;
  agentId: string;
  ownerId: string;
  createdAt: string;
}

export interface TurnRecord {
  id: string;
  threadId: string;
  agentId: string;
  ownerId: string;
  status: TurnStatus;
  text: string | null;
  error: string | null;
  iterations: number;
  step: PendingStep | null;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
}

export interface MessageRecord extends ChatMessage {
  id: string;
  threadId: string;
  turnId: string;
  createdAt: string;
}

export interface ElicitationToolCall {
  name: string;
  toolId: string;
  arguments: JsonObject;
  annotations: ToolAnnotations;
}

export interface ElicitationRecord {
  id: string;
  turnId: string;
  threadId: string;
  agentId: string;
  ownerId: string;
  toolCallId: string;
  status: ElicitationStatus;
  request: ElicitationRequest;
  toolCall: ElicitationToolCall;
  response: ElicitationAnswer | null;
  resolvedBy: string | null;
  resolvedAt: string | null;
  createdAt: string;
  expiresAt: string;
}

export interface ElicitationDraft {
  id: string;
  toolCallId: string;
  request: ElicitationRequest;
  toolCall: ElicitationToolCall;
}

export type { ToolMessageDraft } from '../agent/types.js';

export interface Page<T> {
  items: T[];
  /** Opaque cursor of each item, for `after`. */
  cursors: string[];
  hasNextPage: boolean;
  /** Opaque cursor of the last item. */
  endCursor: string | null;
}

export type { CloseReason } from '../agent/types.js';

/**
 * Closes a paused step that will not run: decides the TOOL message of each of its calls (DESIGN.md's
 * texts). A pure function, called inside the store's transaction.
 */
export type CloseStep = (step: PendingStep, reason: CloseReason) => ToolMessageDraft[];

export type StartTurnResult =
  | { ok: true; thread: ThreadRecord; turn: TurnRecord; superseded: TurnRecord | null }
  | { ok: false; code: 'NOT_FOUND' | 'THREAD_BUSY' | 'WRONG_AGENT' };

export type ResolveResult =
  /** Answer recorded; other elicitations of the turn still wait. */
  | { kind: 'recorded'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** Answer recorded and it was the last: this caller now owns the RUNNING turn and must continue it. */
  | { kind: 'resume'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** CANCEL: the turn is CANCELLED, the step's open calls closed. */
  | { kind: 'cancelled'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** The same answer again: nothing changed. */
  | { kind: 'duplicate'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** Too late: the turn is EXPIRED now (changed by this call or before it). */
  | { kind: 'expired'; elicitation: ElicitationRecord; turn: TurnRecord; changed: boolean }
  | { kind: 'already_resolved'; elicitation: ElicitationRecord; turn: TurnRecord }
  | { kind: 'not_found' };

export interface AgentGatingPatch {
  requireToolConfirmation?: boolean;
  pauseTtlSeconds?: number;
  toolConfirmation?: Record<string, ToolConfirmationMode>;
}

export interface Store {
  // Agents
  /** Create the agent from the config, or update it: gating is kept once updateAgent changed it. */
  syncAgent(agent: Agent, now: string): Promise<Agent>;
  getAgent(id: string): Promise<Agent | null>;
  listAgents(): Promise<Agent[]>;
  updateAgentGating(id: string, patch: AgentGatingPatch, now: string): Promise<Agent | null>;

  // Reads, scoped to an owner: another owner's record reads as absent.
  getThread(id: string, ownerId: string): Promise<ThreadRecord | null>;
  listThreads(ownerId: string, agentId: string | null, first: number, after: string | null): Promise<Page<ThreadRecord>>;
  getTurn(id: string, ownerId: string): Promise<TurnRecord | null>;
  /** Unscoped: for the loop, which acts for the turn's owner. */
  loadTurn(id: string): Promise<TurnRecord | null>;
  listTurns(threadId: string): Promise<TurnRecord[]>;
  listThreadMessages(threadId: string): Promise<MessageRecord[]>;
  listTurnMessages(turnId: string): Promise<MessageRecord[]>;
  getElicitation(id: string, ownerId: string): Promise<ElicitationRecord | null>;
  listTurnElicitations(turnId: string): Promise<ElicitationRecord[]>;
  /** PENDING and not yet expired at `now`, oldest first. */
  listPendingElicitations(
    ownerId: string, filter: { threadId?: string | null; agentId?: string | null }, now: string, first: number, after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }>;

  // The loop's atomic steps.
  /** New thread or existing one (of this owner and agent); supersedes a PAUSED turn, refuses a RUNNING one. */
  startTurn(input: {
    turnId: string; newThreadId: string; threadId: string | null; agentId: string; ownerId: string; message: string; now: string;
  }, closeStep: CloseStep): Promise<StartTurnResult>;
  appendAssistantMessage(turnId: string, message: ChatMessage, now: string): Promise<MessageRecord>;
  /** Appends TOOL messages (synthetic answers) for calls that do not run. */
  appendToolMessages(turnId: string, messages: ToolMessageDraft[], now: string): Promise<void>;
  /** Journals the call as started, committed, before it runs. False if it was started before: do not run it. */
  markToolStarted(turnId: string, toolCallId: string, now: string): Promise<boolean>;
  /** Appends the call's TOOL message and journals it finished, in one transaction. */
  finishTool(turnId: string, message: ToolMessageDraft, now: string): Promise<void>;
  /** Persist the step, create its elicitations, turn PAUSED: writes proportional to what is new. */
  pauseTurn(turnId: string, step: PendingStep, elicitations: ElicitationDraft[], text: string, expiresAt: string, now: string): Promise<TurnRecord>;
  /** RUNNING turn to a final state. */
  finishTurn(turnId: string, status: 'COMPLETED' | 'FAILED' | 'CANCELLED', fields: { text?: string | null; error?: string | null }, now: string): Promise<TurnRecord>;
  setIterations(turnId: string, iterations: number, now: string): Promise<void>;
  /** Record an answer (idempotent by elicitation id); see ResolveResult. */
  resolveElicitation(input: {
    elicitationId: string; ownerId: string; answer: ElicitationAnswer; now: string;
  }, closeStep: CloseStep): Promise<ResolveResult>;
  /** Expire PAUSED turns whose expiresAt has passed (at most `limit`); returns those it expired. */
  expireDueTurns(now: string, limit: number, closeStep: CloseStep): Promise<TurnRecord[]>;
  /** Turns left RUNNING by a process that died: for recovery at start. */
  listRunningTurns(): Promise<TurnRecord[]>;
  /** Calls journaled as started but never finished, of one turn. */
  listUnfinishedToolCalls(turnId: string): Promise<string[]>;
  close(): void;
}
