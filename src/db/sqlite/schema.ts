// The drizzle schema of the embedded SQLite store. Migrations in ../../drizzle are generated from it.

import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

const json = <T>(name: string) => text(name, { mode: 'json' }).$type<T>();

export const agents = sqliteTable('agents', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  modelId: text('model_id').notNull(),
  systemPrompt: text('system_prompt').notNull(),
  toolIds: json<string[]>('tool_ids').notNull(),
  requireToolConfirmation: integer('require_tool_confirmation', { mode: 'boolean' }).notNull(),
  pauseTtlSeconds: integer('pause_ttl_seconds').notNull(),
  maxIterations: integer('max_iterations').notNull(),
  /** Once updateAgent changed gating, later config syncs keep it. */
  gatingSetByApi: integer('gating_set_by_api', { mode: 'boolean' }).notNull().default(false),
  /** May a user edit a call's arguments when accepting it (per tool: agent_tool_overrides.allow_edit). */
  allowEdit: integer('allow_edit', { mode: 'boolean' }).notNull().default(true),
  /** Who answers its confirmations (AgentApprovers: the agent's policy and its tools'); null: the requester alone. */
  approvers: json<unknown>('approvers'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export const agentToolOverrides = sqliteTable(
  'agent_tool_overrides',
  {
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    toolId: text('tool_id').notNull(),
    mode: text('mode', { enum: ['ALWAYS', 'NEVER', 'BY_ANNOTATION'] }).notNull(),
    /** Argument rules (ArgumentRule[]), evaluated in order before `mode`; null: none. */
    rules: json<unknown[]>('rules'),
    /** Overrides the agent's allow_edit for this tool; null: the agent's. */
    allowEdit: integer('allow_edit', { mode: 'boolean' }),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.toolId] })],
);

export const threads = sqliteTable(
  'threads',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    agentId: text('agent_id').notNull(),
    ownerId: text('owner_id').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('threads_owner_seq').on(t.ownerId, t.seq)],
);

export const turns = sqliteTable(
  'turns',
  {
    id: text('id').primaryKey(),
    threadId: text('thread_id').notNull(),
    agentId: text('agent_id').notNull(),
    ownerId: text('owner_id').notNull(),
    status: text('status', { enum: ['RUNNING', 'PAUSED', 'COMPLETED', 'CANCELLED', 'FAILED', 'EXPIRED'] }).notNull(),
    text: text('text'),
    error: text('error'),
    iterations: integer('iterations').notNull().default(0),
    /** The loop state of a paused step (PendingStep, versioned: src/domain/pending-step.ts), null otherwise. */
    step: text('step', { mode: 'json' }),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    expiresAt: text('expires_at'),
    /** Which server process runs this RUNNING turn ("host:pid:nonce"), and until when its lease holds (docs/durability.md). */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    /** How often a restart took this turn over from a process that died: a turn that keeps crashing servers stops. */
    recoveries: integer('recoveries').notNull().default(0),
  },
  (t) => [index('turns_thread').on(t.threadId, t.createdAt), index('turns_status_expiry').on(t.status, t.expiresAt)],
);

export const messages = sqliteTable(
  'messages',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    // Not indexed: nothing looks a message up by id (a thread's or turn's messages are read by their indexes), and
    // each index of this table costs a page in nearly every commit (4 messages per round trip). New ids are UUIDv7s.
    id: text('id').notNull(),
    threadId: text('thread_id').notNull(),
    turnId: text('turn_id').notNull(),
    role: text('role', { enum: ['SYSTEM', 'USER', 'ASSISTANT', 'TOOL'] }).notNull(),
    text: text('text'),
    toolCalls: text('tool_calls', { mode: 'json' }),
    toolCallId: text('tool_call_id'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    index('messages_thread_seq').on(t.threadId, t.seq),
    index('messages_turn_seq').on(t.turnId, t.seq),
    // Exactly one TOOL message per call, enforced by the database even if two processes race on one turn.
    uniqueIndex('messages_tool_answer')
      .on(t.turnId, t.toolCallId)
      .where(sql`role = 'TOOL'`),
  ],
);

export const elicitations = sqliteTable(
  'elicitations',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    turnId: text('turn_id').notNull(),
    threadId: text('thread_id').notNull(),
    agentId: text('agent_id').notNull(),
    ownerId: text('owner_id').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    status: text('status', { enum: ['PENDING', 'ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'] }).notNull(),
    request: text('request', { mode: 'json' }).notNull(),
    toolCall: text('tool_call', { mode: 'json' }).notNull(),
    responseAction: text('response_action', { enum: ['ACCEPT', 'DECLINE', 'CANCEL'] }),
    responseContent: text('response_content', { mode: 'json' }),
    /** ACCEPT with edited arguments: what runs instead of tool_call.arguments (kept for the audit). */
    responseArguments: text('response_arguments', { mode: 'json' }),
    /** ACCEPT with remember: the grant it recorded ({scope, ttlSeconds, grantId}). */
    responseRemember: text('response_remember', { mode: 'json' }),
    resolvedBy: text('resolved_by'),
    /** Who resolved it as they were then: {name, issuer, subject, roles} (AnswerIdentity); null before identities were kept. */
    resolvedByIdentity: text('resolved_by_identity', { mode: 'json' }),
    resolvedAt: text('resolved_at'),
    /** CANCEL on behalf of a gateway caller that stopped waiting: CANCELLED or DISCONNECTED (CallerWithdrawal). */
    withdrawn: text('withdrawn', { enum: ['CANCELLED', 'DISCONNECTED'] }),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    /** Who may answer besides the requester, decided at the pause (ElicitationApproval); null: the requester alone. */
    approval: text('approval', { mode: 'json' }),
    /** approval.escalation.at as a column, for the sweeper's index; null without an escalation. */
    escalationDueAt: text('escalation_due_at'),
    /** When the sweeper marked it escalated (docs/approvers.md "Escalation"), once; null before. */
    escalatedAt: text('escalated_at'),
    /** A gateway call's request: until when the MCP client that made the call waits for it; null: no client has yet. */
    callerWaitingUntil: text('caller_waiting_until'),
  },
  (t) => [
    // A viewer's requests of one status in seq order (the pending list); expires_at last, so that counting by status as
    // read now (PENDING past its expiry reads EXPIRED) needs the index alone.
    index('elicitations_owner_status_seq').on(t.ownerId, t.status, t.seq, t.expiresAt),
    // The audit list (any status, in seq order): a page reads its own rows, not every row of the viewer's history.
    index('elicitations_owner_seq').on(t.ownerId, t.seq),
    index('elicitations_turn').on(t.turnId),
    // The sweeper's retention pass finds long-expired elicitations without a scan.
    index('elicitations_status_expiry').on(t.status, t.expiresAt),
    // The sweeper's escalation pass: only the waiting requests with an escalation still to make are in it, so the
    // other requests' writes never touch it.
    index('elicitations_escalation_due')
      .on(t.escalationDueAt)
      .where(sql`status = 'PENDING' AND escalated_at IS NULL AND escalation_due_at IS NOT NULL`),
  ],
);

/**
 * The answers to a request under an approvers policy, one per approver (docs/approvers.md): the quorum is counted from
 * them in the answer's transaction; the request's own response columns hold the answer that decided it.
 */
export const elicitationAnswers = sqliteTable(
  'elicitation_answers',
  {
    elicitationId: text('elicitation_id').notNull(),
    approverId: text('approver_id').notNull(),
    /** The order the answers were given in, within the request. */
    position: integer('position').notNull(),
    action: text('action', { enum: ['ACCEPT', 'DECLINE', 'CANCEL'] }).notNull(),
    content: text('content', { mode: 'json' }),
    /** ACCEPT with edited arguments (canonical JSON): the proposal it makes; null: the model's arguments. */
    arguments: text('arguments', { mode: 'json' }),
    remember: text('remember', { mode: 'json' }),
    createdAt: text('created_at').notNull(),
    /** Who answered as they were then: {name, issuer, subject, roles} (AnswerIdentity); null before identities were kept. */
    approverIdentity: text('approver_identity', { mode: 'json' }),
  },
  (t) => [primaryKey({ columns: [t.elicitationId, t.approverId] })],
);

/**
 * Who may answer a PENDING request under a policy, by role (docs/approvers.md "Visibility"): one row per role of its
 * policy (from its creation) and per escalation role (from the escalation time), written at the pause and deleted
 * when the request stops waiting, so that the list of what a viewer may answer reads by role, never all requests.
 */
export const elicitationApproverRoles = sqliteTable(
  'elicitation_approver_roles',
  {
    elicitationId: text('elicitation_id').notNull(),
    role: text('role').notNull(),
    /** From when members of the role may answer. */
    fromTime: text('from_time').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.elicitationId, t.role] }),
    index('elicitation_approver_roles_role').on(t.role, t.fromTime),
  ],
);

/** The at-most-once journal: a row is committed before the tool runs, finished_at after. */
export const toolExecutions = sqliteTable(
  'tool_executions',
  {
    turnId: text('turn_id').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    startedAt: text('started_at').notNull(),
    finishedAt: text('finished_at'),
    /** The remembered approval that let this call run unasked, if one did. */
    grantId: text('grant_id'),
    /** A gateway's call: the tool's result as its client gets it (MCP CallToolResult), kept with the journal. */
    result: text('result', { mode: 'json' }),
  },
  (t) => [
    primaryKey({ columns: [t.turnId, t.toolCallId] }),
    // Partial: only the calls a remembered approval let through are in it, so the others write no page of it.
    index('tool_executions_grant')
      .on(t.grantId)
      .where(sql`grant_id IS NOT NULL`),
  ],
);

/** Remembered approvals: a user's ACCEPT that lets later calls of one tool run unasked (docs/approvals.md). */
export const approvalGrants = sqliteTable(
  'approval_grants',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
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
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    revokedAt: text('revoked_at'),
    /** The approvers policy it was given under (approversKey); it covers calls under that policy only. */
    approvers: text('approvers'),
  },
  (t) => [
    index('approval_grants_lookup').on(t.ownerId, t.agentId, t.toolId),
    index('approval_grants_owner_seq').on(t.ownerId, t.seq),
  ],
);

/** The webhook outbox: one row per event and endpoint, written in the transaction of the change (docs/webhooks.md). */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    /** The `webhook-id`: stable across retries, for receivers to deduplicate on. */
    id: text('id').notNull().unique(),
    endpoint: text('endpoint').notNull(),
    eventType: text('event_type').notNull(),
    payload: text('payload', { mode: 'json' }).notNull(),
    status: text('status', { enum: ['PENDING', 'DELIVERED', 'FAILED'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: text('next_attempt_at').notNull(),
    /** The process delivering it now, and until when (another takes it over after). */
    lockedBy: text('locked_by'),
    lockedUntil: text('locked_until'),
    lastError: text('last_error'),
    lastStatusCode: integer('last_status_code'),
    createdAt: text('created_at').notNull(),
    finishedAt: text('finished_at'),
  },
  (t) => [index('webhook_deliveries_due').on(t.status, t.nextAttemptAt)],
);

/**
 * startTurn's idempotency keys (src/domain/idempotency.ts): one row per user and key, claimed in the transaction that
 * creates the turn, so a retry with the key finds the turn instead of starting another. The sweeper deletes a row a
 * day after it was claimed.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    ownerId: text('owner_id').notNull(),
    key: text('key').notNull(),
    /** What the first request asked (agent, thread, message), hashed: a retry must ask the same. */
    fingerprint: text('fingerprint').notNull(),
    turnId: text('turn_id').notNull(),
    threadId: text('thread_id').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.ownerId, t.key] }), index('idempotency_keys_created').on(t.createdAt)],
);

/**
 * The decision records (src/domain/decision-records.ts, docs/receipts.md): one chain per deployment, appended in the
 * transaction of the change each describes. `seq` is assigned by the appender (the head's plus one), so two appends
 * that read the same head cannot both commit. `record` is the signed record as exported.
 */
export const decisionRecords = sqliteTable(
  'decision_records',
  {
    seq: integer('seq').primaryKey(),
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
export const receiptKeys = sqliteTable('receipt_keys', {
  id: text('id').primaryKey(),
  /** PKCS8 PEM. */
  privateKey: text('private_key').notNull(),
  createdAt: text('created_at').notNull(),
});

/**
 * The passkeys users registered for step-up (docs/receipts.md#passkey-step-up): one row per credential, its public key
 * as the authenticator gave it (COSE, base64url) and its signature counter, advanced by each assertion.
 */
export const passkeys = sqliteTable(
  'passkeys',
  {
    credentialId: text('credential_id').primaryKey(),
    userId: text('user_id').notNull(),
    publicKey: text('public_key').notNull(),
    algorithm: integer('algorithm').notNull(),
    rpId: text('rp_id').notNull(),
    counter: integer('counter').notNull(),
    transports: text('transports').notNull(),
    createdAt: text('created_at').notNull(),
    lastUsedAt: text('last_used_at'),
  },
  (t) => [index('passkeys_user').on(t.userId)],
);

/** A registration in progress: the challenge the user's authenticator must sign, one per user, until it expires. */
export const passkeyChallenges = sqliteTable('passkey_challenges', {
  userId: text('user_id').primaryKey(),
  challenge: text('challenge').notNull(),
  rpId: text('rp_id').notNull(),
  expiresAt: text('expires_at').notNull(),
});

/**
 * The chat cards of notifier channels (docs/slack.md): one row per request and channel it was posted to, written
 * before the post (state POSTING, under a lease) so that one card is posted per request and channel, and holding the
 * message's reference (Slack: its ts) that later updates edit.
 */
export const notifierCards = sqliteTable(
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
    leaseUntil: text('lease_until'),
    /** When the post under way started: a process taking a lapsed POSTING over looks for a message since then. */
    postingSince: text('posting_since'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.notifier, t.elicitationId, t.target] })],
);

/** Signed requests a notifier already took (Slack interactions): a replay within the signature's window is refused. */
export const notifierReplays = sqliteTable(
  'notifier_replays',
  {
    notifier: text('notifier').notNull(),
    key: text('key').notNull(),
    seenAt: text('seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.notifier, t.key] }), index('notifier_replays_seen').on(t.seenAt)],
);
