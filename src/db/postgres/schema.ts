// The drizzle schema of the PostgreSQL store. Migrations in ../../../drizzle/postgres are generated from it
// (npm run db:generate:postgres). The same tables as the SQLite store (../schema.ts), in PostgreSQL's types: times
// are timestamptz (read back as ISO-8601 strings, what the domain uses), JSON is jsonb, sequence numbers are
// identity columns. What SQLite got from one writer at a time, the database enforces here (see the indexes).
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** timestamptz(3), as the domain's ISO-8601 UTC strings ("2026-01-01T00:00:00.000Z"). */
const time = customType<{ data: string; driverData: string | Date }>({
  dataType: () => 'timestamp(3) with time zone',
  toDriver: (value) => value,
  fromDriver: (value) => new Date(value).toISOString(),
});

const seq = (name: string) => bigint(name, { mode: 'number' }).generatedAlwaysAsIdentity();

export const agents = pgTable('agents', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  modelId: text('model_id').notNull(),
  systemPrompt: text('system_prompt').notNull(),
  toolIds: jsonb('tool_ids').$type<string[]>().notNull(),
  requireToolConfirmation: boolean('require_tool_confirmation').notNull(),
  pauseTtlSeconds: integer('pause_ttl_seconds').notNull(),
  maxIterations: integer('max_iterations').notNull(),
  /** Once updateAgent changed gating, later config syncs keep it. */
  gatingSetByApi: boolean('gating_set_by_api').notNull().default(false),
  /** May a user edit a call's arguments when accepting it (per tool: agent_tool_overrides.allow_edit). */
  allowEdit: boolean('allow_edit').notNull().default(true),
  /** Who answers its confirmations (AgentApprovers: the agent's policy and its tools'); null: the requester alone. */
  approvers: jsonb('approvers'),
  createdAt: time('created_at').notNull(),
  updatedAt: time('updated_at').notNull(),
});

export const agentToolOverrides = pgTable(
  'agent_tool_overrides',
  {
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    toolId: text('tool_id').notNull(),
    mode: text('mode', { enum: ['ALWAYS', 'NEVER', 'BY_ANNOTATION'] }).notNull(),
    /** Argument rules (ArgumentRule[]), evaluated in order before `mode`; null: none. */
    rules: jsonb('rules').$type<unknown[]>(),
    /** Overrides the agent's allow_edit for this tool; null: the agent's. */
    allowEdit: boolean('allow_edit'),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.toolId] })],
);

export const threads = pgTable(
  'threads',
  {
    seq: seq('seq').primaryKey(),
    id: text('id').notNull().unique(),
    agentId: text('agent_id').notNull(),
    ownerId: text('owner_id').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [index('threads_owner_seq').on(t.ownerId, t.seq)],
);

export const turns = pgTable(
  'turns',
  {
    /** Creation order of a thread's turns (two turns may share a millisecond). */
    seq: seq('seq').notNull().unique(),
    id: text('id').primaryKey(),
    threadId: text('thread_id').notNull(),
    agentId: text('agent_id').notNull(),
    ownerId: text('owner_id').notNull(),
    status: text('status', {
      enum: ['RUNNING', 'PAUSED', 'COMPLETED', 'CANCELLED', 'FAILED', 'EXPIRED'],
    }).notNull(),
    text: text('text'),
    error: text('error'),
    iterations: integer('iterations').notNull().default(0),
    /** The loop state of a paused step (PendingStep, versioned: src/domain/pending-step.ts), null otherwise. */
    step: jsonb('step'),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
    expiresAt: time('expires_at'),
    /** Which server process runs this RUNNING turn ("host:pid:nonce"), and until when its lease holds. */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: time('lease_expires_at'),
    /** How often another process took this turn over from one that died running it. */
    recoveries: integer('recoveries').notNull().default(0),
  },
  (t) => [
    index('turns_thread').on(t.threadId, t.seq),
    // One active turn per thread, whichever instance starts it: a second insert fails (THREAD_BUSY).
    uniqueIndex('turns_one_active_per_thread')
      .on(t.threadId)
      .where(sql`status IN ('RUNNING', 'PAUSED')`),
    // The sweeper's due turns and recovery's running ones, without reading finished turns.
    index('turns_paused_expiry')
      .on(t.expiresAt)
      .where(sql`status = 'PAUSED'`),
    index('turns_running')
      .on(t.leaseOwner)
      .where(sql`status = 'RUNNING'`),
  ],
);

export const messages = pgTable(
  'messages',
  {
    seq: seq('seq').primaryKey(),
    id: text('id').notNull().unique(),
    threadId: text('thread_id').notNull(),
    turnId: text('turn_id').notNull(),
    role: text('role', { enum: ['SYSTEM', 'USER', 'ASSISTANT', 'TOOL'] }).notNull(),
    text: text('text'),
    toolCalls: jsonb('tool_calls'),
    toolCallId: text('tool_call_id'),
    createdAt: time('created_at').notNull(),
  },
  (t) => [
    index('messages_thread_seq').on(t.threadId, t.seq),
    index('messages_turn_seq').on(t.turnId, t.seq),
    // Exactly one TOOL message per call, enforced by the database even if two instances race on one turn.
    uniqueIndex('messages_tool_answer')
      .on(t.turnId, t.toolCallId)
      .where(sql`role = 'TOOL'`),
  ],
);

export const elicitations = pgTable(
  'elicitations',
  {
    seq: seq('seq').primaryKey(),
    id: text('id').notNull().unique(),
    turnId: text('turn_id').notNull(),
    threadId: text('thread_id').notNull(),
    agentId: text('agent_id').notNull(),
    ownerId: text('owner_id').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    status: text('status', { enum: ['PENDING', 'ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'] }).notNull(),
    request: jsonb('request').notNull(),
    toolCall: jsonb('tool_call').notNull(),
    responseAction: text('response_action', { enum: ['ACCEPT', 'DECLINE', 'CANCEL'] }),
    responseContent: jsonb('response_content'),
    /** ACCEPT with edited arguments: what runs instead of tool_call.arguments (kept for the audit). */
    responseArguments: jsonb('response_arguments'),
    /** ACCEPT with remember: the grant it recorded ({scope, ttlSeconds, grantId}). */
    responseRemember: jsonb('response_remember'),
    resolvedBy: text('resolved_by'),
    /** Who resolved it as they were then: {name, issuer, subject, roles} (AnswerIdentity); null before identities were kept. */
    resolvedByIdentity: jsonb('resolved_by_identity'),
    resolvedAt: time('resolved_at'),
    /** CANCEL on behalf of a gateway caller that stopped waiting: CANCELLED or DISCONNECTED (CallerWithdrawal). */
    withdrawn: text('withdrawn', { enum: ['CANCELLED', 'DISCONNECTED'] }),
    createdAt: time('created_at').notNull(),
    expiresAt: time('expires_at').notNull(),
    /** Who may answer besides the requester, decided at the pause (ElicitationApproval); null: the requester alone. */
    approval: jsonb('approval'),
    /** approval.escalation.at as a column, for the sweeper's index; null without an escalation. */
    escalationDueAt: time('escalation_due_at'),
    /** When the sweeper marked it escalated (docs/approvers.md "Escalation"), once; null before. */
    escalatedAt: time('escalated_at'),
    /** A gateway call's request: until when the MCP client that made the call waits for it; null: no client has yet. */
    callerWaitingUntil: time('caller_waiting_until'),
  },
  (t) => [
    // A viewer's requests of one status in seq order (the pending list and its count).
    index('elicitations_owner_status_seq').on(t.ownerId, t.status, t.seq),
    // The audit list (any status, in seq order).
    index('elicitations_owner_seq').on(t.ownerId, t.seq),
    index('elicitations_turn').on(t.turnId),
    // The sweeper's retention pass and the metrics gauge.
    index('elicitations_status_expiry').on(t.status, t.expiresAt),
    // The sweeper's escalation pass: only the waiting requests with an escalation still to make are in it.
    index('elicitations_escalation_due')
      .on(t.escalationDueAt)
      .where(sql`status = 'PENDING' AND escalated_at IS NULL AND escalation_due_at IS NOT NULL`),
  ],
);

/**
 * The answers to a request under an approvers policy, one per approver (docs/approvers.md): the quorum is counted from
 * them in the answer's transaction, its turn's row locked; the request's own response columns hold the answer that
 * decided it.
 */
export const elicitationAnswers = pgTable(
  'elicitation_answers',
  {
    elicitationId: text('elicitation_id').notNull(),
    approverId: text('approver_id').notNull(),
    /** The order the answers were given in, within the request. */
    position: integer('position').notNull(),
    action: text('action', { enum: ['ACCEPT', 'DECLINE', 'CANCEL'] }).notNull(),
    content: jsonb('content'),
    /** ACCEPT with edited arguments: the proposal it makes; null: the model's arguments. */
    arguments: jsonb('arguments'),
    remember: jsonb('remember'),
    createdAt: time('created_at').notNull(),
    /** Who answered as they were then: {name, issuer, subject, roles} (AnswerIdentity); null before identities were kept. */
    approverIdentity: jsonb('approver_identity'),
  },
  (t) => [primaryKey({ columns: [t.elicitationId, t.approverId] })],
);

/**
 * Who may answer a PENDING request under a policy, by role (docs/approvers.md "Visibility"): one row per role of its
 * policy (from its creation) and per escalation role (from the escalation time), written at the pause and deleted
 * when the request stops waiting, so that the list of what a viewer may answer reads by role, never all requests.
 */
export const elicitationApproverRoles = pgTable(
  'elicitation_approver_roles',
  {
    elicitationId: text('elicitation_id').notNull(),
    role: text('role').notNull(),
    /** From when members of the role may answer. */
    fromTime: time('from_time').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.elicitationId, t.role] }),
    index('elicitation_approver_roles_role').on(t.role, t.fromTime),
  ],
);

/** The at-most-once journal: a row is committed before the tool runs, finished_at after. */
export const toolExecutions = pgTable(
  'tool_executions',
  {
    turnId: text('turn_id').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    startedAt: time('started_at').notNull(),
    finishedAt: time('finished_at'),
    /** The remembered approval that let this call run unasked, if one did. */
    grantId: text('grant_id'),
    /** A gateway's call: the tool's result as its client gets it (MCP CallToolResult), kept with the journal. */
    result: jsonb('result'),
  },
  (t) => [primaryKey({ columns: [t.turnId, t.toolCallId] }), index('tool_executions_grant').on(t.grantId)],
);

/** Remembered approvals: a user's ACCEPT that lets later calls of one tool run unasked (docs/approvals.md). */
export const approvalGrants = pgTable(
  'approval_grants',
  {
    seq: seq('seq').primaryKey(),
    id: text('id').notNull().unique(),
    ownerId: text('owner_id').notNull(),
    agentId: text('agent_id').notNull(),
    scope: text('scope', { enum: ['THREAD', 'AGENT'] }).notNull(),
    /** THREAD scope: the thread it holds in; null for AGENT scope. */
    threadId: text('thread_id'),
    toolId: text('tool_id').notNull(),
    /** Hash of the tool's trusted definition when granted: a changed tool takes no grant. */
    definitionHash: text('definition_hash').notNull(),
    /** The answer that recorded it. */
    elicitationId: text('elicitation_id').notNull(),
    createdAt: time('created_at').notNull(),
    expiresAt: time('expires_at').notNull(),
    revokedAt: time('revoked_at'),
    /** The approvers policy it was given under (approversKey); it covers calls under that policy only. */
    approvers: text('approvers'),
  },
  (t) => [
    index('approval_grants_lookup').on(t.ownerId, t.agentId, t.toolId),
    index('approval_grants_owner_seq').on(t.ownerId, t.seq),
  ],
);

/** The webhook outbox: one row per event and endpoint, written in the transaction of the change (docs/webhooks.md). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    seq: seq('seq').primaryKey(),
    /** The `webhook-id`: stable across retries, for receivers to deduplicate on. */
    id: text('id').notNull().unique(),
    endpoint: text('endpoint').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['PENDING', 'DELIVERED', 'FAILED'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: time('next_attempt_at').notNull(),
    /** The process delivering it now, and until when (another takes it over after). */
    lockedBy: text('locked_by'),
    lockedUntil: time('locked_until'),
    lastError: text('last_error'),
    lastStatusCode: integer('last_status_code'),
    createdAt: time('created_at').notNull(),
    finishedAt: time('finished_at'),
  },
  (t) => [index('webhook_deliveries_due').on(t.status, t.nextAttemptAt)],
);

/**
 * startTurn's idempotency keys (src/domain/idempotency.ts): one row per user and key, claimed first in the transaction
 * that creates the turn, so two starts with one key at once wait on each other's claim and make one turn. The sweeper
 * deletes a row a day after it was claimed.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    ownerId: text('owner_id').notNull(),
    key: text('key').notNull(),
    /** What the first request asked (agent, thread, message), hashed: a retry must ask the same. */
    fingerprint: text('fingerprint').notNull(),
    turnId: text('turn_id').notNull(),
    threadId: text('thread_id').notNull(),
    createdAt: time('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.ownerId, t.key] }), index('idempotency_keys_created').on(t.createdAt)],
);

/**
 * The decision records (src/domain/decision-records.ts, docs/receipts.md): one chain per deployment, appended in the
 * transaction of the change each describes, under a transaction-level advisory lock. `seq` is assigned by the
 * appender (the head's plus one), so two appends that read the same head cannot both commit. `record` is the signed
 * record as exported, kept as text (jsonb would not keep it byte for byte).
 */
export const decisionRecords = pgTable(
  'decision_records',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    hash: text('hash').notNull(),
    kind: text('kind').notNull(),
    turnId: text('turn_id').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    at: text('at').notNull(),
    record: text('record').notNull(),
  },
  (t) => [index('decision_records_call').on(t.turnId, t.toolCallId), index('decision_records_at').on(t.at)],
);

/**
 * The signing key of the decision records generated for a deployment without a configured one (docs/receipts.md):
 * one row, written by the first instance that starts; the others read it.
 */
export const receiptKeys = pgTable('receipt_keys', {
  id: text('id').primaryKey(),
  /** PKCS8 PEM. */
  privateKey: text('private_key').notNull(),
  createdAt: time('created_at').notNull(),
});

/**
 * The passkeys users registered for step-up (docs/receipts.md#passkey-step-up): one row per credential, its public key
 * as the authenticator gave it (COSE, base64url) and its signature counter, advanced by each assertion.
 */
export const passkeys = pgTable(
  'passkeys',
  {
    credentialId: text('credential_id').primaryKey(),
    userId: text('user_id').notNull(),
    publicKey: text('public_key').notNull(),
    algorithm: integer('algorithm').notNull(),
    rpId: text('rp_id').notNull(),
    counter: bigint('counter', { mode: 'number' }).notNull(),
    transports: jsonb('transports').notNull(),
    createdAt: time('created_at').notNull(),
    lastUsedAt: time('last_used_at'),
  },
  (t) => [index('passkeys_user').on(t.userId)],
);

/** A registration in progress: the challenge the user's authenticator must sign, one per user, until it expires. */
export const passkeyChallenges = pgTable('passkey_challenges', {
  userId: text('user_id').primaryKey(),
  challenge: text('challenge').notNull(),
  rpId: text('rp_id').notNull(),
  expiresAt: time('expires_at').notNull(),
});

/**
 * The chat cards of notifier channels (docs/slack.md): one row per request and channel it was posted to, written
 * before the post (state POSTING, under a lease) so that one card is posted per request and channel, and holding the
 * message's reference (Slack: its ts) that later updates edit.
 */
export const notifierCards = pgTable(
  'notifier_cards',
  {
    notifier: text('notifier').notNull(),
    elicitationId: text('elicitation_id').notNull(),
    target: text('target').notNull(),
    state: text('state', { enum: ['POSTING', 'POSTED'] }).notNull(),
    /** The message (Slack: its ts), once posted. */
    messageRef: text('message_ref'),
    /** A digest of what the card shows now: an update that changes nothing is not sent. */
    shown: text('shown'),
    leaseOwner: text('lease_owner'),
    leaseUntil: time('lease_until'),
    /** When the post under way started: a process taking a lapsed POSTING over looks for a message since then. */
    postingSince: time('posting_since'),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.notifier, t.elicitationId, t.target] })],
);

/** Signed requests a notifier already took (Slack interactions): a replay within the signature's window is refused. */
export const notifierReplays = pgTable(
  'notifier_replays',
  {
    notifier: text('notifier').notNull(),
    key: text('key').notNull(),
    seenAt: time('seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.notifier, t.key] }), index('notifier_replays_seen').on(t.seenAt)],
);
