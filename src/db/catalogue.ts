// The statements the Store (sql-store.ts) and its transaction scripts (scripts.ts) run, by name, with their named parameters and the rows they
// return: each dialect's catalogue (sqlite/statements.ts, postgres/statements.ts) implements this interface, so a
// statement missing from one, or taking other parameters, fails type-checking. A statement that returns columns gives
// its rows; one that returns none, how many rows it changed.
//
// The loop's writes are one statement each here: PostgreSQL runs them as one (data-modifying CTEs, one round trip);
// SQLite, which has no such statements, runs a few prepared ones in a row (no round trips to save there).
//
// `owner` in a loop write is the lease owner: with one, the statement writes only while that process holds the turn's
// lease (status RUNNING, lease_owner = owner), checked in the statement itself, and returns no row otherwise; null
// writes unconditioned (tests, admin paths).
import type { ToolOverrideRow } from '../domain/agent-overrides.js';
import { storedConditionsFor } from '../domain/expiry.js';
import type {
  ApprovalGrantRecord,
  ChatMessage,
  ElicitationDraft,
  ElicitationStatus,
  MessageRole,
  ToolMessageDraft,
} from '../domain/records.js';
import type { WebhookDeliveryDraft, WebhookDeliveryStatus } from '../domain/webhook-events.js';
import type {
  AgentRow,
  ElicitationAnswerRow,
  ElicitationRow,
  GrantRow,
  GrantUseRow,
  IdempotencyKeyRow,
  LeaseRow,
  MessageRow,
  ThreadRow,
  TurnRow,
  WebhookRow,
} from './rows.js';
import type { PasskeyChallengeRow, PasskeyRow } from './passkey-rows.js';

type Ids = { ids: readonly string[] };
type Count = [{ count: number }];
type Held = { thread_id: string }[];

/** The list filters of a viewer's elicitations (pending list and audit list). */
interface ElicitationFilter {
  ownerId: string;
  now: string;
  threadId: string | null;
  agentId: string | null;
}
interface ThreadFilter {
  ownerId: string;
  agentId: string | null;
}
interface PageParams {
  after: number;
  limit: number;
}
/** The requests a viewer may answer as an approver: `ownerId` is the viewer, `roles` theirs. */
interface ToAnswerFilter extends ElicitationFilter {
  roles: readonly string[];
}
/** The audit list: statuses as read at `now` (deduplicated, sorted; null: any). */
interface AuditFilter extends ElicitationFilter {
  statuses: readonly ElicitationStatus[] | null;
}

/** The model's answer (an ASSISTANT message) a loop write appends with it; null: none. */
interface AnswerMessage {
  answer: ChatMessage | null;
}

export interface Catalogue {
  // ---- agents
  agent(p: { id: string }): AgentRow[];
  agents(): AgentRow[];
  /** Insert or update; the gating columns only while gating_set_by_api is false. Booleans as 0/1. */
  upsertAgent(p: {
    id: string;
    name: string;
    description: string | null;
    modelId: string;
    systemPrompt: string;
    toolIds: string;
    maxIterations: number;
    requireToolConfirmation: number;
    pauseTtlSeconds: number;
    allowEdit: number;
    /** JSON (AgentApprovers), null for none: written on every sync, whoever changed the gating. */
    approvers: string | null;
    now: string;
  }): { gating_set_by_api: boolean | number }[];
  deleteOverrides(p: { agentId: string }): number;
  insertOverrides(p: { agentId: string; overrides: readonly ToolOverrideRow[] }): number;
  /** Null leaves a column as it is. Booleans as 0/1. */
  updateAgentGating(p: {
    id: string;
    requireToolConfirmation: number | null;
    pauseTtlSeconds: number | null;
    allowEdit: number | null;
    now: string;
  }): number;
  /** One tool's row: a new one takes the defaults for what `columns` does not name; an existing one changes only those. */
  upsertOverride(p: {
    agentId: string;
    toolId: string;
    columns: readonly ('mode' | 'rules' | 'allowEdit')[];
    mode: string | null;
    /** JSON. */
    rules: string | null;
    allowEdit: number | null;
  }): number;

  // ---- reads for a viewer (the owner is part of the lookup) and the API's batched reads
  ownedThread(p: { id: string; ownerId: string }): ThreadRow[];
  threadPage(p: ThreadFilter & PageParams): ThreadRow[];
  /** Newest first: the rows before `after` (seqBound, src/domain/pagination.ts), by seq descending. */
  threadPageNewest(p: ThreadFilter & PageParams): ThreadRow[];
  ownedTurn(p: { id: string; ownerId: string }): TurnRow[];
  turn(p: { id: string }): TurnRow[];
  threadTurns(p: { threadId: string }): TurnRow[];
  threadMessages(p: { threadId: string }): MessageRow[];
  turnMessages(p: { turnId: string }): MessageRow[];
  ownedElicitation(p: { id: string; ownerId: string }): ElicitationRow[];
  elicitation(p: { id: string }): ElicitationRow[];
  turnElicitations(p: { turnId: string }): ElicitationRow[];
  turnsByIds(p: Ids): TurnRow[];
  threadsByIds(p: Ids): ThreadRow[];
  turnsOfThreads(p: Ids): TurnRow[];
  messagesOfTurns(p: Ids): MessageRow[];
  messagesOfThreads(p: Ids): MessageRow[];
  elicitationsOfTurns(p: Ids): ElicitationRow[];
  /** PENDING and not expired at `now`: storedConditionsFor('PENDING') (src/domain/expiry.ts). */
  pendingPage(p: ElicitationFilter & PageParams): ElicitationRow[];
  pendingCount(p: ElicitationFilter): Count;
  /**
   * PENDING and not expired at `now`, of another owner than the viewer, offered by role to one of `roles` by `now`
   * (elicitation_approver_roles), and without an answer of the viewer's that still counts: what they may answer.
   */
  toAnswerPage(p: ToAnswerFilter & PageParams): ElicitationRow[];
  toAnswerCount(p: ToAnswerFilter): Count;
  auditPage(p: AuditFilter & PageParams): ElicitationRow[];
  /** Newest first: the rows before `after`, by seq descending. */
  auditPageNewest(p: AuditFilter & PageParams): ElicitationRow[];
  auditCount(p: AuditFilter): Count;
  allPendingCount(p: { now: string }): Count;

  // ---- starting a turn
  /**
   * Claims the owner's idempotency key for this turn (src/domain/idempotency.ts): 1, or 0 when it was claimed before.
   * A claim by a transaction still open makes it wait for that one's end where writers run at once.
   */
  claimIdempotencyKey(p: {
    ownerId: string;
    key: string;
    fingerprint: string;
    turnId: string;
    threadId: string;
    now: string;
  }): number;
  idempotencyKey(p: { ownerId: string; key: string }): IdempotencyKeyRow[];
  /** Takes the thread's row lock where writers run at once. */
  lockOwnedThread(p: { id: string; ownerId: string }): ThreadRow[];
  /** The thread's RUNNING or PAUSED turn, its row locked where writers run at once. */
  lockActiveTurn(p: { threadId: string }): TurnRow[];
  /**
   * A turn, RUNNING, with its first message (the user's, `messageId` and `text`), on a new thread when `newThread`
   * (`threadId` its id): one statement, so that a start on a new thread writes without a transaction of its own.
   */
  insertTurn(p: {
    id: string;
    threadId: string;
    newThread: boolean;
    agentId: string;
    ownerId: string;
    now: string;
    leaseOwner: string | null;
    leaseUntil: string | null;
    messageId: string;
    text: string;
  }): number;
  insertMessage(p: {
    id: string;
    threadId: string;
    turnId: string;
    role: MessageRole;
    text: string | null;
    /** JSON, null without tool calls. */
    toolCalls: string | null;
    toolCallId: string | null;
    now: string;
  }): number;

  // ---- the loop's writes to a RUNNING turn: no row when `owner` does not hold its lease (or no such turn)
  /** updated_at, and iterations unless null. */
  touchTurn(p: { id: string; owner: string | null; iterations: number | null; now: string }): Held;
  /** touchTurn, then the message. */
  appendMessage(p: {
    turnId: string;
    owner: string | null;
    iterations: number | null;
    now: string;
    id: string;
    role: MessageRole;
    text: string | null;
    toolCalls: string | null;
    toolCallId: string | null;
  }): Held;
  /** touchTurn, then one TOOL message per draft (a call's second one is dropped). */
  appendToolMessages(p: {
    turnId: string;
    owner: string | null;
    now: string;
    drafts: readonly ToolMessageDraft[];
  }): Held;
  /** Journals the call started: started 1, or 0 if it was before. */
  startTool(p: {
    turnId: string;
    owner: string | null;
    toolCallId: string;
    now: string;
    grantId: string | null;
  }): { started: number }[];
  toolStartedBefore(p: { turnId: string; toolCallId: string }): unknown[];
  /** Journals the call finished and appends its TOOL message (`id`). */
  finishTool(p: {
    turnId: string;
    owner: string | null;
    toolCallId: string;
    now: string;
    id: string;
    text: string;
    /** JSON: a gateway call's result for its client; null otherwise. */
    result: string | null;
  }): unknown[];
  /** RUNNING to PAUSED with its step (JSON), the answer that asked, and one PENDING elicitation per draft. */
  pauseTurn(
    p: {
      id: string;
      owner: string | null;
      step: string;
      text: string;
      expiresAt: string;
      now: string;
      iterations: number | null;
      drafts: readonly ElicitationDraft[];
    } & AnswerMessage,
  ): TurnRow[];
  /** RUNNING to a final state, with the answer that ended it. */
  finishTurn(
    p: {
      id: string;
      owner: string | null;
      status: string;
      text: string | null;
      error: string | null;
      now: string;
      iterations: number | null;
    } & AnswerMessage,
  ): TurnRow[];

  // ---- answers, expiry, closing a paused turn
  /** The turn of the owner's elicitation, its row locked, where writers run at once; elsewhere (one writer at a time) nothing is locked and no row comes back. */
  lockTurnOfElicitation(p: { id: string; ownerId: string }): TurnRow[];
  /** Every elicitation of the turn of the owner's elicitation `id`, oldest first. */
  elicitationsWithSibling(p: { id: string; ownerId: string }): ElicitationRow[];
  /**
   * The turn of elicitation `id` whoever owns it, its row locked where writers run at once (elsewhere no row): only
   * for the answer of an approver the caller authorized (src/app/answer-elicitation.ts).
   */
  lockTurnOfElicitationForApprover(p: { id: string }): TurnRow[];
  /** Every elicitation of the turn of elicitation `id`, whoever owns it: as lockTurnOfElicitationForApprover. */
  elicitationsWithSiblingForApprover(p: { id: string }): ElicitationRow[];
  /** The approvers' answers to a request under a policy, in the order given. */
  elicitationAnswers(p: { id: string }): ElicitationAnswerRow[];
  /** The approvers' answers to these requests, each request's in the order given. */
  answersOfElicitations(p: Ids): ElicitationAnswerRow[];
  /** The requests no longer wait: they are offered to no role any more. */
  deleteApproverRoles(p: Ids): number;
  /** Records one approver's answer, replacing theirs (JSON columns as JSON). */
  upsertElicitationAnswer(p: {
    elicitationId: string;
    approverId: string;
    position: number;
    action: string;
    content: string | null;
    arguments: string | null;
    remember: string | null;
    identity: string | null;
    now: string;
  }): number;
  /** Records the answer of a PENDING elicitation (JSON columns as JSON). */
  answer(p: {
    id: string;
    status: ElicitationStatus;
    action: string;
    content: string | null;
    arguments: string | null;
    remember: string | null;
    by: string;
    /** Who answered as they were then (AnswerIdentity as JSON); null when not known. */
    byIdentity: string | null;
    /** CallerWithdrawal: a CANCEL on behalf of a gateway caller that stopped waiting; null for any other answer. */
    withdrawn: string | null;
    now: string;
  }): ElicitationRow[];
  /** PAUSED to RUNNING under a new lease: the claim only one answer wins. */
  resumeTurn(p: { id: string; now: string; leaseOwner: string | null; leaseUntil: string | null }): TurnRow[];
  /** PAUSED turns due at `now`; where writers run at once, those another one holds are skipped. */
  lockDueTurns(p: { now: string; limit: number }): TurnRow[];
  /**
   * escalated_at = now for at most `limit` PENDING requests whose escalation_due_at has come and whose expires_at has
   * not, by escalation time: only rows not escalated yet (the WHERE is the guard: of several writers at once, one marks
   * each request); where writers run at once, rows another one holds are skipped. The rows it marked.
   */
  escalateDue(p: { now: string; limit: number }): ElicitationRow[];
  closeElicitations(p: { ids: readonly string[]; status: string; now: string }): number;
  /** One TOOL message per draft (a call's second one is dropped). */
  insertToolMessages(p: { threadId: string; turnId: string; drafts: readonly ToolMessageDraft[]; now: string }): number;
  /** The paused turn to its final status; its text, the question, goes with its step. */
  closeTurn(p: { id: string; status: string; now: string }): TurnRow[];

  // ---- recovery and leases
  runningTurns(): TurnRow[];
  runningLeases(): LeaseRow[];
  unfinishedToolCalls(p: { turnId: string }): { tool_call_id: string }[];
  /** JSON text: the result finishTool kept for a gateway call. */
  toolResult(p: { turnId: string; toolCallId: string }): { result: string | null }[];
  /** Compare-and-swap of a RUNNING turn's lease from `expected` (null: none), counting a recovery. */
  claimTurn(p: { id: string; expected: string | null; owner: string; until: string; now: string }): TurnRow[];
  renewLeases(p: { owner: string; until: string; now: string }): number;
  leaseOwner(p: { id: string }): { lease_owner: string | null }[];

  // ---- retention: at most `limit` rows, those another writer holds skipped
  deleteDeliveredWebhooks(p: { before: string; limit: number }): number;
  deleteLapsedGrants(p: { before: string; limit: number }): number;
  /**
   * With each request, its approvers' answers and its role rows (no foreign keys cascade): in one transaction, so
   * none is left without its request.
   */
  deleteExpiredElicitations(p: { before: string; limit: number }): number;
  deleteIdempotencyKeys(p: { before: string; limit: number }): number;

  // ---- remembered approvals
  /** The grant, held FOR SHARE where writers run at once: a revoke waits for the start that reads it. */
  lockGrant(p: { id: string }): GrantRow[];
  /** The owner's grant, locked for the revoke where writers run at once. */
  lockGrantForRevoke(p: { id: string; ownerId: string }): GrantRow[];
  ownedGrant(p: { id: string; ownerId: string }): GrantRow[];
  grantCandidates(p: { ownerId: string; agentId: string; toolId: string }): GrantRow[];
  /** `activeOnly` (0/1): only those ACTIVE at `now` as grantStateAt reads it (not revoked, not yet expired). */
  grantPage(
    p: {
      ownerId: string;
      agentId: string | null;
      threadId: string | null;
      activeOnly: number;
      now: string;
    } & PageParams,
  ): GrantRow[];
  insertGrant(p: ApprovalGrantRecord): number;
  lastGrantUse(p: { id: string }): { started_at: string | null }[];
  revokeGrant(p: { id: string; revokedAt: string }): number;
  /** The pending requests of a gateway call: until when its caller waits (null: unknown). */
  markCallerWaiting(p: { turnId: string; ownerId: string; until: string | null }): number;
  grantUses(p: Ids): GrantUseRow[];

  // ---- decision records (docs/receipts.md)
  /** Holds the deployment's chain until the transaction ends (PostgreSQL); SQLite's write transaction already does. */
  lockDecisionChain(): unknown[];
  decisionChainHead(): { seq: number; hash: string }[];
  insertDecisionRecord(p: {
    seq: number;
    hash: string;
    kind: string;
    turnId: string;
    toolCallId: string;
    at: string;
    record: string;
  }): number;
  /** The records from `from` to `to` (inclusive, either null: open), in chain order. */
  decisionRecords(p: { from: string | null; to: string | null }): { record: string }[];
  /** The records of one call, in chain order. */
  decisionsOfCall(p: { turnId: string; toolCallId: string }): { record: string }[];
  /** The ACCEPTED records of these turns' calls, in chain order. */
  acceptedDecisionsOfTurns(p: Ids): { record: string }[];
  /** Every record of these turns' calls, in chain order. */
  decisionsOfTurns(p: Ids): { record: string }[];

  /** The generated signing key: inserted once (a second insert, from another instance, changes nothing), then read. */
  insertReceiptKey(p: { id: string; privateKey: string; now: string }): number;
  receiptKey(p: { id: string }): { private_key: string }[];

  // ---- passkeys (docs/receipts.md#passkey-step-up)
  upsertPasskeyChallenge(p: { userId: string; challenge: string; rpId: string; expiresAt: string }): number;
  takePasskeyChallenge(p: { userId: string }): PasskeyChallengeRow[];
  /** 0 when the credential id is registered already. */
  insertPasskey(p: {
    credentialId: string;
    userId: string;
    publicKey: string;
    algorithm: number;
    rpId: string;
    counter: number;
    transports: string;
    now: string;
  }): number;
  userPasskeys(p: { userId: string }): PasskeyRow[];
  passkey(p: { credentialId: string }): PasskeyRow[];
  /** Only forward, or 0 to 0 (an authenticator that keeps no counter). */
  advancePasskeyCounter(p: { credentialId: string; counter: number; now: string }): number;

  // ---- webhooks (docs/webhooks.md): nothing of these runs on a change's path unless an endpoint subscribes to it
  /** The outbox rows of a change, in its transaction. */
  insertWebhookDeliveries(p: { deliveries: readonly WebhookDeliveryDraft[]; now: string }): number;
  claimWebhookDeliveries(p: {
    owner: string;
    endpoints: readonly string[];
    now: string;
    until: string;
    limit: number;
  }): WebhookRow[];
  recordWebhookAttempt(p: {
    id: string;
    owner: string;
    status: WebhookDeliveryStatus;
    counted: number;
    nextAttemptAt: string | null;
    lastError: string | null;
    lastStatusCode: number | null;
    finishedAt: string | null;
  }): number;
  webhookDeliveryPage(p: { status: WebhookDeliveryStatus | null } & PageParams): WebhookRow[];
  webhookDeliveryCount(p: { status: WebhookDeliveryStatus | null }): Count;
}

export type StatementName = keyof Catalogue;
export type Params<K extends StatementName> = Parameters<Catalogue[K]>;
export type Result<K extends StatementName> = ReturnType<Catalogue[K]>;

/**
 * The catalogue as the scripts see it: calling a statement with its parameters gives what the script yields to its
 * driver, which hands back the statement's result (Result<K>). SQLite runs the statement right there (its driver is
 * synchronous and hands the rows straight back); PostgreSQL returns the query, which its driver sends.
 */
export type Queries = { readonly [K in StatementName]: (...params: Params<K>) => unknown };

/** The audit list's condition on statuses as read at @now (storedConditionsFor, src/domain/expiry.ts), in both dialects. */
export function auditStatusCondition(statuses: readonly ElicitationStatus[]): string {
  const asRead = (status: ElicitationStatus) =>
    storedConditionsFor(status)
      .map(
        ({ status, pastExpiry }) =>
          `(status = '${status}'${pastExpiry === undefined ? '' : pastExpiry ? ' AND expires_at <= @now' : ' AND expires_at > @now'})`,
      )
      .join(' OR ');
  return `(${statuses.map(asRead).join(' OR ') || 'false'})`;
}

/**
 * Insert or update an agent; its gating only while no admin changed it (gating_set_by_api), its approvers always (the
 * config owns them): alike in both dialects.
 */
export const UPSERT_AGENT = `INSERT INTO agents (id, name, description, model_id, system_prompt, tool_ids, max_iterations,
    require_tool_confirmation, pause_ttl_seconds, allow_edit, approvers, created_at, updated_at)
  VALUES (@id, @name, @description, @modelId, @systemPrompt, @toolIds, @maxIterations, @requireToolConfirmation,
    @pauseTtlSeconds, @allowEdit, @approvers, @now, @now)
  ON CONFLICT (id) DO UPDATE SET name = excluded.name, description = excluded.description, model_id = excluded.model_id,
    system_prompt = excluded.system_prompt, tool_ids = excluded.tool_ids, max_iterations = excluded.max_iterations,
    approvers = excluded.approvers, updated_at = excluded.updated_at,
    require_tool_confirmation = CASE WHEN agents.gating_set_by_api THEN agents.require_tool_confirmation
      ELSE excluded.require_tool_confirmation END,
    pause_ttl_seconds = CASE WHEN agents.gating_set_by_api THEN agents.pause_ttl_seconds ELSE excluded.pause_ttl_seconds END,
    allow_edit = CASE WHEN agents.gating_set_by_api THEN agents.allow_edit ELSE excluded.allow_edit END
  RETURNING gating_set_by_api`;
