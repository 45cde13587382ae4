// The storage interface the rest of toolgate uses: src/db/sql-store.ts implements it over SQLite and PostgreSQL
// (docs/architecture.md). Every method that changes state is one atomic transaction, committed when its
// promise resolves.
import type {
  Agent,
  AnswerIdentity,
  CallerWithdrawal,
  ApprovalGrantRecord,
  ApproverAnswer,
  ArgumentRule,
  ChatMessage,
  ElicitationAnswer,
  ElicitationDraft,
  ElicitationRecord,
  ElicitationStatus,
  GrantUseRecord,
  JsonObject,
  MessageRecord,
  Page,
  PendingStep,
  ThreadRecord,
  ToolCall,
  ToolConfirmationMode,
  ToolMessageDraft,
  TurnRecord,
} from './records.js';
import type { DecisionRecord } from './decision-records.js';
import type { RecordedAssertion } from './passkey-challenge.js';
import type { Passkeys } from './passkeys.js';
import type { AnswerRefusal, StartRefusal } from './refusals.js';
import type { WebhookAttemptOutcome, WebhookDeliveryRecord, WebhookDeliveryStatus } from './webhook-events.js';

export type StartTurnResult =
  | {
      ok: true;
      replayed?: false;
      thread: ThreadRecord;
      turn: TurnRecord;
      superseded: TurnRecord | null;
      /** The agent as read in the transaction: a gating change committed before the turn applies to it. */
      agent: Agent;
      /** The USER message as stored. */
      message: MessageRecord;
    }
  /**
   * The idempotency key was claimed before by the same request: the turn it started, as it is now (RUNNING, PAUSED or
   * ended), and its thread. Nothing was written.
   */
  | {
      ok: true;
      replayed: true;
      thread: ThreadRecord;
      turn: TurnRecord;
      superseded?: never;
      agent?: never;
      message?: never;
    }
  /** Refused (src/domain/refusals.ts): nothing was written. */
  | ({ ok: false } & StartRefusal);

/**
 * Thrown inside a store's startTurn transaction to refuse the start: the transaction rolls back, so an idempotency key
 * it claimed is not kept (a refused request may be sent again with its key). The store returns it as the result.
 */
export class StartRefused extends Error {
  constructor(readonly refusal: StartRefusal) {
    super(`startTurn was refused: ${refusal.code}`);
  }
}

/** The result a StartRefused stands for; any other error is thrown again. */
export function refusalOf(error: unknown): StartTurnResult {
  if (error instanceof StartRefused) return { ok: false, ...error.refusal };
  throw error;
}

export type ResolveResult =
  /** Answer recorded; other elicitations of the turn still wait. */
  | { ok: true; kind: 'recorded'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** An approver's answer recorded under the request's policy, which it did not decide: the request still waits. */
  | { ok: true; kind: 'counted'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** Answer recorded and it was the last: this caller now owns the RUNNING turn and must continue it. */
  | {
      ok: true;
      kind: 'resume';
      elicitation: ElicitationRecord;
      turn: TurnRecord;
      /** Every elicitation of the turn's step with its answer, as committed: what the execute phase runs on. */
      elicitations: ElicitationRecord[];
    }
  /** CANCEL: the turn is CANCELLED, the step's open calls closed. */
  | { ok: true; kind: 'cancelled'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** The same answer again: nothing changed. */
  | { ok: true; kind: 'duplicate'; elicitation: ElicitationRecord; turn: TurnRecord }
  /** Refused (src/domain/refusals.ts): nothing was recorded. */
  | ({ ok: false } & Exclude<AnswerRefusal, { code: 'EXPIRED' }>)
  /**
   * Too late: the turn is EXPIRED now. `closed`: the turn as this call expired it (its closing is to be reported),
   * null when it was expired before.
   */
  | ({ ok: false } & Extract<AnswerRefusal, { code: 'EXPIRED' }> & { closed: TurnRecord | null });

/**
 * A RUNNING turn is run by one server process at a time: the one holding its lease. `owner` names the process
 * ("host:pid:nonce"); the lease is renewed while it runs and can be taken over once it lapses (docs/durability.md).
 */
export interface TurnLease {
  owner: string;
  until: string;
}

/** A RUNNING turn's lease as stored, for recovery. */
export interface RunningTurnLease {
  turnId: string;
  owner: string | null;
  expiresAt: string | null;
  /** Times a process took this turn over after another one died running it. */
  recoveries: number;
}

export interface AgentGatingPatch {
  requireToolConfirmation?: boolean;
  pauseTtlSeconds?: number;
  toolConfirmation?: Record<string, ToolConfirmationMode>;
  // Argument rules and editing.
  allowEdit?: boolean;
  /** Replaces the rules of each tool named; [] clears them. */
  toolRules?: Record<string, ArgumentRule[]>;
  /** Sets each named tool's allowEdit; null clears it (the agent's applies again). */
  toolAllowEdit?: Record<string, boolean | null>;
}

/** A write made on behalf of a lease holder found the lease held by another process (or the turn no longer RUNNING). */
export class LeaseLostError extends Error {
  constructor(readonly turnId: string) {
    super(`This process no longer holds the lease of turn ${turnId}.`);
  }
}

/**
 * markToolStarted was told a remembered approval let the call run, and that approval no longer holds (revoked or
 * expired since the gate): nothing was written, the call must not run.
 */
export class GrantLapsedError extends Error {
  constructor(readonly grantId: string) {
    super(`The remembered approval ${grantId} no longer holds.`);
  }
}

/**
 * markToolStarted found the accepting decision record of the call's request missing, altered, not signed by the
 * deployment, or bound to other arguments than those about to run: nothing was written, the call must not run.
 */
export class AcceptanceUnverifiedError extends Error {
  constructor(
    readonly elicitationId: string,
    readonly problem: string,
  ) {
    super(`The accepting decision record of request ${elicitationId} does not verify: ${problem}.`);
  }
}

/**
 * What a loop write that matched no turn row throws: with `leaseOwner` (a leased writer), the lease is not (or no
 * longer) that process's (LeaseLostError, nothing written); without (an unleased writer), there is no such turn.
 */
export function loopWriteRefused(turnId: string, leaseOwner: string | undefined): Error {
  return leaseOwner !== undefined ? new LeaseLostError(turnId) : new Error(`No turn ${turnId}.`);
}

/** A call about to run, as its decision records name it (TurnWriter.markToolStarted). */
export interface RunningCall {
  toolId: string;
  arguments: JsonObject;
  toolDefinitionDigest: string | null;
  /**
   * The call runs without a request (the gate let it, or a remembered approval) of this agent's turn: neither the
   * turn nor its requests are read to name it.
   */
  unasked?: { agentId: string };
}

/** An answer to record (Store.resolveElicitation). */
export interface AnswerInput {
  elicitationId: string;
  /**
   * The requester answering their own request: the lookup is scoped to them (another owner's reads as not found).
   * null: an approver's answer to another user's request under a policy, which the caller authorized
   * (src/app/answer-elicitation.ts) before the store reaches the request whoever owns it.
   */
  ownerId: string | null;
  /** Who answers: the requester (ownerId), or the approver the caller authorized. */
  answeredBy: string;
  /** Who answers as they are now (name, issuer, subject, roles), kept with the answer. */
  answeredAs?: AnswerIdentity;
  answer: ElicitationAnswer;
  /** A CANCEL on behalf of a caller that stopped waiting: why, kept with the request. */
  withdrawn?: CallerWithdrawal;
  now: string;
  /** The process that will continue the turn when this answer resumes it (taken in the same transaction). */
  lease?: TurnLease;
  /** The id of the grant an ACCEPT with `remember` records (recordedAnswer), in the same transaction. */
  grantId?: string;
  /** An ACCEPT under passkey step-up: the verified assertion, kept in the ACCEPTED record it decides. */
  assertion?: RecordedAssertion;
}

/** The model's answer a loop write appends (an ASSISTANT message), with the turn's iteration count it makes. */
export interface StepAnswer {
  message: ChatMessage;
  iterations: number;
}

/** A RUNNING turn and the lease under which a process writes to it. */
export interface LeasedTurn {
  turnId: string;
  lease: { owner: string };
}

/**
 * The loop's writes to one turn (TurnLog.turnWriter), bound to the turn and its lease: a write cannot leave the lease
 * out. Each takes one input object and is one transaction.
 */
export interface TurnWriter {
  readonly turnId: string;
  /** Appends the model's answer and, when given, the turn's new iteration count, in one transaction. */
  appendAssistantMessage(input: { message: ChatMessage; iterations?: number; now: string }): Promise<MessageRecord>;
  /** Appends TOOL messages (synthetic answers) for calls that do not run. */
  appendToolMessages(input: { messages: ToolMessageDraft[]; now: string }): Promise<void>;
  /**
   * Journals the call as started, committed, before it runs. False if it was started before: do not run it.
   * `grantId`: the remembered approval that let it run unasked, recorded with it; checked in the same transaction (an
   * approval revoked or expired since the gate throws GrantLapsedError and writes nothing), so a revoke either
   * precedes the start and the call does not run, or follows it.
   */
  markToolStarted(input: {
    toolCallId: string;
    grantId?: string;
    now: string;
    /**
     * With decision records: what is about to run, the arguments (their digest goes in the RAN record, and must be
     * the one the request's ACCEPTED record holds, else AcceptanceUnverifiedError and nothing is written) and the
     * digest of the tool's definition. Absent: the accepted arguments, or the model's.
     */
    running?: RunningCall;
  }): Promise<boolean>;
  /**
   * Appends the call's TOOL message and journals it finished, in one transaction. `result`: a gateway call's result
   * as its client gets it, kept with the journal (Reads.toolResult). With decision records, its RESULT record (the
   * digest of what is kept), or INTERRUPTED for a call started before and found unfinished (`interrupted`).
   */
  finishTool(input: {
    message: ToolMessageDraft;
    result?: JsonObject;
    interrupted?: boolean;
    now: string;
  }): Promise<void>;
  /**
   * Persist the step, create its elicitations, turn PAUSED: writes proportional to what is new. Returns both as stored.
   * `answer`: the model's answer that asked for the step's calls and the turn's iteration count, appended in the same
   * transaction, so a step that asks is saved with its pause or not at all (one commit fewer per step).
   */
  pauseTurn(input: {
    step: PendingStep;
    elicitations: ElicitationDraft[];
    text: string;
    expiresAt: string;
    answer?: StepAnswer;
    now: string;
  }): Promise<{ turn: TurnRecord; elicitations: ElicitationRecord[] }>;
  /**
   * RUNNING turn to a final state. `answer`: the model's final answer (an ASSISTANT message without tool calls) and
   * the turn's iteration count, appended in the same transaction, so the answer and the end commit together.
   */
  finishTurn(input: {
    status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
    text?: string | null;
    error?: string | null;
    answer?: StepAnswer;
    now: string;
  }): Promise<TurnRecord>;
  setIterations(input: { iterations: number; now: string }): Promise<void>;
}

/**
 * Writes to a turn started without a lease, which no process runs: the store's own tests and tools that drive a
 * store directly. Not part of TurnLog: the loop always writes under its lease.
 */
export interface UnleasedWrites {
  unleasedTurnWriter(turnId: string): TurnWriter;
}

// The Store port is split by role: each consumer depends on the interfaces it uses (docs/architecture.md), so
// what a module may do to the database is read from its imports. `Store` is their intersection, for wiring.

/** The agents of the config and their gating (src/domain/gate/gating.ts, the agent use cases). */
export interface Agents {
  /** Create the agent from the config, or update it: gating is kept once updateAgent changed it. */
  syncAgent(agent: Agent, now: string): Promise<Agent>;
  getAgent(id: string): Promise<Agent | null>;
  listAgents(): Promise<Agent[]>;
  updateAgentGating(id: string, patch: AgentGatingPatch, now: string): Promise<Agent | null>;
}

/** Reads, for the API and the loop. */
export interface Reads {
  // Scoped to an owner: another owner's record reads as absent.
  getThread(id: string, ownerId: string): Promise<ThreadRecord | null>;
  /** Oldest first, or newest first. */
  listThreads(
    ownerId: string,
    agentId: string | null,
    first: number,
    after: string | null,
    newestFirst?: boolean,
  ): Promise<Page<ThreadRecord>>;
  getTurn(id: string, ownerId: string): Promise<TurnRecord | null>;
  /** Unscoped: for the loop, which acts for the turn's owner. */
  loadTurn(id: string): Promise<TurnRecord | null>;
  listTurns(threadId: string): Promise<TurnRecord[]>;
  listThreadMessages(threadId: string): Promise<MessageRecord[]>;
  listTurnMessages(turnId: string): Promise<MessageRecord[]>;
  getElicitation(id: string, ownerId: string): Promise<ElicitationRecord | null>;
  /**
   * Unscoped: for the answer use case, which decides whether the viewer may answer a request of another user (an
   * approver of its policy) before anything of it is shown or recorded.
   */
  loadElicitation(id: string): Promise<ElicitationRecord | null>;
  /** The approvers' answers to these requests (under a policy), each request's in the order given. */
  listApproverAnswers(elicitationIds: readonly string[]): Promise<ApproverAnswer[]>;
  /** The signed ACCEPTED decision records of these turns' calls (docs/receipts.md), in chain order. */
  listAcceptedDecisions(turnIds: readonly string[]): Promise<DecisionRecord[]>;
  /** Every decision record of these turns' calls (asked, decided, ran), in chain order. */
  listDecisionsOfTurns(turnIds: readonly string[]): Promise<DecisionRecord[]>;
  /** A gateway call's result as finishTool kept it; null when none was kept (it did not run, or not to its end). */
  getToolResult(turnId: string, toolCallId: string): Promise<JsonObject | null>;

  // Batched reads for the API (src/app/loaders.ts): one query for the items of a whole list, unscoped (the
  // caller filters by owner). Each returns the records found, in no promised order but by seq within a parent.
  loadTurns(ids: readonly string[]): Promise<TurnRecord[]>;
  loadThreads(ids: readonly string[]): Promise<ThreadRecord[]>;
  /** Every message of these turns, oldest first. */
  listMessagesOfTurns(turnIds: readonly string[]): Promise<MessageRecord[]>;
  /** Every message of these threads, oldest first. */
  listMessagesOfThreads(threadIds: readonly string[]): Promise<MessageRecord[]>;
  /** Every turn of these threads, in creation order. */
  listTurnsOfThreads(threadIds: readonly string[]): Promise<TurnRecord[]>;
  /** Every elicitation of these turns, oldest first. */
  listElicitationsOfTurns(turnIds: readonly string[]): Promise<ElicitationRecord[]>;
  listTurnElicitations(turnId: string): Promise<ElicitationRecord[]>;
  /** PENDING and not yet expired at `now`, oldest first. */
  listPendingElicitations(
    ownerId: string,
    filter: { threadId?: string | null; agentId?: string | null },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }>;
  /**
   * What `viewerId` may answer as an approver (docs/approvers.md): requests of other owners PENDING and not expired at
   * `now`, whose policy offers them to one of `roles` by `now` (an escalation role from its time), and that the viewer
   * has not answered, or answered with an ACCEPT an edit outdated since. Oldest first.
   */
  listElicitationsToAnswer(
    viewerId: string,
    roles: readonly string[],
    filter: { threadId?: string | null; agentId?: string | null },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }>;
  /**
   * The owner's elicitations of every status, oldest first (or newest first): the audit trail of who answered what
   * and when. `statuses` as the API reads them at `now` (a PENDING one past its expiry counts as EXPIRED).
   */
  listElicitations(
    ownerId: string,
    filter: { threadId?: string | null; agentId?: string | null; statuses?: ElicitationStatus[] | null },
    now: string,
    first: number,
    after: string | null,
    newestFirst?: boolean,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }>;

  /** Every owner's elicitations PENDING and not yet expired at `now` (the metrics gauge, read at scrape time). */
  countPendingElicitations(now: string): Promise<number>;
}

/** The transitions of a turn the runner makes: start it, record an answer, and the loop's writes while it runs. */
export interface TurnLog {
  /** New thread or existing one (of this owner and agent); supersedes a PAUSED turn, refuses a RUNNING one. */
  startTurn(input: {
    turnId: string;
    newThreadId: string;
    threadId: string | null;
    agentId: string;
    ownerId: string;
    message: string;
    now: string;
    /** The process that will run the new turn. */
    lease?: TurnLease;
    /**
     * The caller's idempotency key (src/domain/idempotency.ts), claimed for this owner in the same transaction: when
     * the owner claimed it before, nothing is written and the result is that request's turn (replayed) or, for
     * another request, IDEMPOTENCY_KEY_REUSED. Two starts with one key at once: one turn, both get it.
     */
    idempotencyKey?: string;
    /**
     * A gateway's call (src/domain/gateway.ts): saved after the message as the turn's one step, an ASSISTANT message
     * asking for it, in the same transaction; part of what the idempotency key stands for.
     */
    call?: ToolCall;
  }): Promise<StartTurnResult>;
  /**
   * A gateway's read-only call that ran unasked, recorded whole after it returned, in one transaction
   * (docs/durability.md): the turn started as startTurn starts it (no idempotency key), its call journaled started and
   * finished with its TOOL message and `result`, the turn COMPLETED with the message's text, and with decision records
   * its RAN and RESULT. Refused as startTurn refuses, nothing written.
   */
  recordCallRan(
    input: Omit<Parameters<TurnLog['startTurn']>[0], 'idempotencyKey' | 'call'> & {
      call: ToolCall;
      running: RunningCall;
      /** The call's TOOL message. */
      text: string;
      /** The call's result as its client gets it. */
      result: JsonObject;
      /** When it returned: the journal's and the turn's end (`now`: its start). */
      finishedAt: string;
    },
  ): Promise<StartTurnResult>;
  /** Record an answer (idempotent by elicitation id); see ResolveResult. */
  resolveElicitation(input: AnswerInput): Promise<ResolveResult>;
  /**
   * The writes of the loop to one RUNNING turn, made for the process holding its lease: each happens only while that
   * process holds it, checked in the same transaction (else LeaseLostError, nothing written).
   */
  turnWriter(target: LeasedTurn): TurnWriter;
}

/**
 * What the sweeper and recovery do without a request: expiry and escalation of paused turns' requests, and the leases
 * of RUNNING turns.
 */
export interface TurnMaintenance {
  /** Expire PAUSED turns whose expiresAt has passed (at most `limit`); returns those it expired. */
  expireDueTurns(now: string, limit: number): Promise<TurnRecord[]>;
  /**
   * Mark escalated (escalatedAt = now) the PENDING requests whose escalation time has come by `now` and whose expiry
   * has not (at most `limit`), with their `elicitation.escalated` outbox rows in the same transaction. Each request is
   * marked once, also when several stores try at the same moment: returns those this call marked, as stored.
   */
  escalateDueElicitations(now: string, limit: number): Promise<ElicitationRecord[]>;
  /** Turns left RUNNING by a process that died: for recovery at start. */
  listRunningTurns(): Promise<TurnRecord[]>;
  /** Calls journaled as started but never finished, of one turn. */
  listUnfinishedToolCalls(turnId: string): Promise<string[]>;
  /** The leases of all RUNNING turns: recovery decides from them which ones nobody runs any more. */
  listRunningLeases(): Promise<RunningTurnLease[]>;
  /**
   * Take over a RUNNING turn whose lease is still held by `expectedOwner` (null: none), counting one recovery.
   * Compare-and-swap: of several processes trying, exactly one gets the turn; null for the others.
   */
  claimTurn(
    turnId: string,
    expectedOwner: string | null,
    lease: TurnLease,
    now: string,
  ): Promise<{ turn: TurnRecord; recoveries: number } | null>;
  /** Extend the leases of every RUNNING turn `owner` holds; returns how many. */
  renewLeases(owner: string, until: string, now: string): Promise<number>;
  /** True while `owner` holds the turn's lease (checked before each step it commits). */
  holdsLease(turnId: string, owner: string): Promise<boolean>;
}

/** The retention sweep: rows that are done with, deleted in bounded batches. */
export interface Retention {
  /**
   * Retention: delete at most `limit` DELIVERED webhook deliveries finished before `before` (FAILED ones stay, for the
   * admin to see); returns how many.
   */
  deleteDeliveredWebhooks(before: string, limit: number): Promise<number>;
  /** Retention: delete at most `limit` approval grants revoked, or expired, before `before`; returns how many. */
  deleteLapsedGrants(before: string, limit: number): Promise<number>;
  /** Retention: delete at most `limit` EXPIRED elicitations that expired before `before`; returns how many. */
  deleteExpiredElicitations(before: string, limit: number): Promise<number>;
  /** Retention: delete at most `limit` idempotency keys claimed before `before`; returns how many. */
  deleteIdempotencyKeys(before: string, limit: number): Promise<number>;
}

/** Remembered approvals (docs/approvals.md). */
export interface Grants {
  // src/domain/grants.ts decides which grant covers a call.
  /** The owner's grants of one agent's tool that are not revoked, oldest first: what coveringGrant chooses from. */
  listGrantCandidates(ownerId: string, agentId: string, toolId: string): Promise<ApprovalGrantRecord[]>;
  getApprovalGrant(id: string, ownerId: string): Promise<ApprovalGrantRecord | null>;
  /** The owner's grants, oldest first; with `activeOnly`, those ACTIVE at `now` (grantStateAt) alone. */
  listApprovalGrants(
    ownerId: string,
    filter: { agentId?: string | null; threadId?: string | null; activeOnly: boolean },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ApprovalGrantRecord>>;
  /** Revokes the owner's grant (the first revoke's time stands); null when the owner has no such grant. */
  revokeApprovalGrant(id: string, ownerId: string, now: string): Promise<ApprovalGrantRecord | null>;
  /** The calls these grants let run unasked, in the order they started. */
  listGrantUses(grantIds: readonly string[]): Promise<GrantUseRecord[]>;
}

/** The MCP clients waiting for their gateway calls, as every instance sees them. */
export interface GatewayCallers {
  /**
   * Until when the call's caller (`ownerId`) waits for it, on the call's pending requests (a time past: it stopped
   * waiting then; null: unknown). A request no longer pending is left as it is.
   */
  markCallerWaiting(turnId: string, ownerId: string, until: string | null): Promise<void>;
}

/** Webhooks (docs/webhooks.md). */
export interface WebhookDeliveries {
  // The outbox rows are written by the changes above, in their transactions, for the
  // endpoints the store was given at construction (WebhookOutbox); these deliver and list them.
  /**
   * Claim up to `limit` deliveries that are PENDING, due at `now`, of one of `endpoints` and not claimed by a process
   * whose claim still holds, oldest (by seq) first, for `owner` until `until`. Several processes may claim at once:
   * each delivery goes to one of them; a claim that lapsed is taken over.
   */
  claimWebhookDeliveries(
    owner: string,
    endpoints: readonly string[],
    now: string,
    until: string,
    limit: number,
  ): Promise<WebhookDeliveryRecord[]>;
  /** Record what became of an attempt, and drop the claim; false (nothing written) if `owner` no longer holds it. */
  recordWebhookAttempt(id: string, owner: string, outcome: WebhookAttemptOutcome, now: string): Promise<boolean>;
  /** The admin list: every delivery (or those of one status), oldest first. */
  listWebhookDeliveries(
    filter: { status?: WebhookDeliveryStatus | null },
    first: number,
    after: string | null,
  ): Promise<Page<WebhookDeliveryRecord> & { totalCount: number }>;
}

/** Readiness, durability and shutdown. */
export interface Lifecycle {
  /**
   * Readiness: null when the database answers a query and every migration this build knows is applied; else a
   * short reason (no paths, no data). Throws when the database does not answer at all (closed, unreadable).
   */
  ping(): Promise<string | null>;
  /**
   * Resolves once what was committed before the call survives power loss, not only a process crash: awaited before
   * a mutation's response is sent and an event is published. The SQLite store fsyncs its WAL here, once for
   * every request waiting (group commit); a store whose commits are durable already returns at once. `soon`: no
   * request waits on this one (an event): the store may wait a few milliseconds for a flush that one asks for.
   */
  flush(options?: { soon?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** Every role: what a backend implements and the server wires. */
export interface Store
  extends
    Agents,
    Reads,
    TurnLog,
    UnleasedWrites,
    TurnMaintenance,
    Retention,
    Grants,
    GatewayCallers,
    WebhookDeliveries,
    Passkeys,
    Lifecycle {}
