// The SQLite catalogue (../catalogue.ts): every statement prepared once, when the store opens (a statement prepared per
// call costs CPU, an INSERT with its indexes compiles to a long program, and native memory V8 does not see). A call
// runs the statement at once and returns its result: the scripts run inside a transaction that the caller (the write
// batch) holds, one writer at a time, so nothing here locks rows. Where PostgreSQL writes with one statement (a
// data-modifying CTE), SQLite runs two or three in a row. Lists are bound as one JSON array (json_each).
import type Database from 'better-sqlite3';
import { approverRoles } from '../../domain/approvers.js';
import { newId } from '../../domain/ids.js';
import type { ChatMessage } from '../../domain/records.js';
import { auditStatusCondition, UPSERT_AGENT, type Catalogue } from '../catalogue.js';

/**
 * A prepared statement as a catalogue entry: its rows when it returns columns, else the rows it changed (typed by the
 * Catalogue entry it is assigned to).
 */
type Entry = (params?: object) => never;

const NONE: never[] = [];
const HELD = [{}];
const STARTED = [{ started: 1 }];
const NOT_STARTED = [{ started: 0 }];

/** The lease condition of a loop write (see catalogue.ts): with @owner, only while it holds the RUNNING turn. */
const HOLDS = "(@owner IS NULL OR (status = 'RUNNING' AND lease_owner = @owner))";
const IDS = '(SELECT value FROM json_each(@ids))';
const AGENT = `SELECT agents.*, (SELECT json_group_array(json_array(tool_id, mode, json(rules), allow_edit))
    FROM agent_tool_overrides WHERE agent_id = agents.id) AS overrides FROM agents`;

/** `outboxWritten`: called when a statement wrote outbox rows; the commit that follows tells the deliverer. */
export function sqliteStatements(db: Database.Database, outboxWritten: () => void): Catalogue {
  const prepared = (sql: string): Entry => {
    const statement = db.prepare(sql);
    if (!statement.reader) return ((params: object = {}) => statement.run(params).changes) as Entry;
    return ((params: object = {}) => statement.all(params)) as Entry;
  };
  const raw = (sql: string) => db.prepare(sql);
  /** A statement taking `@ids`, a list bound as a JSON array. */
  const byIds = (sql: string) => {
    const statement = raw(sql);
    return (params: { ids: readonly string[] }) => statement.all({ ids: JSON.stringify(params.ids) }) as never;
  };
  /** A write taking `@ids`: how many rows it changed. */
  const byIdsRun = (sql: string) => {
    const statement = raw(sql);
    return (params: { ids: readonly string[] }) => statement.run({ ids: JSON.stringify(params.ids) }).changes;
  };

  const holdsLease = raw("SELECT 1 FROM turns WHERE id = @turnId AND status = 'RUNNING' AND lease_owner = @owner");
  /** True when the write names a lease owner that no longer holds the turn (then nothing may be written). */
  const leaseLost = (params: { turnId: string; owner: string | null }) =>
    params.owner !== null && holdsLease.get(params) === undefined;
  const touchTurn = raw(`UPDATE turns SET updated_at = @now WHERE id = @turnId AND ${HOLDS} RETURNING thread_id`);
  const touchTurnCounting = (id: string) => `UPDATE turns SET iterations = coalesce(@iterations, iterations),
    updated_at = @now WHERE id = ${id} AND ${HOLDS} RETURNING thread_id`;
  const insertMessage =
    raw(`INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
    VALUES (@id, @threadId, @turnId, @role, @text, @toolCalls, @toolCallId, @now)`);
  const insertThread = raw(
    'INSERT INTO threads (id, agent_id, owner_id, created_at) VALUES (@threadId, @agentId, @ownerId, @now)',
  );
  const insertTurn = raw(`INSERT INTO turns (id, thread_id, agent_id, owner_id, status, iterations, created_at,
    updated_at, lease_owner, lease_expires_at)
    VALUES (@id, @threadId, @agentId, @ownerId, 'RUNNING', 0, @now, @now, @leaseOwner, @leaseUntil)`);
  const appendTouch = raw(touchTurnCounting('@turnId'));
  /** A call's one TOOL message; a second one for the same call (two processes racing on a turn) is dropped. */
  const insertToolMessage =
    raw(`INSERT OR IGNORE INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
    VALUES (@id, @threadId, @turnId, 'TOOL', @text, NULL, @toolCallId, @now)`);
  const insertToolMessages = (
    turnId: string,
    threadId: string,
    drafts: Parameters<Catalogue['insertToolMessages']>[0]['drafts'],
    now: string,
  ) => {
    for (const draft of drafts) {
      insertToolMessage.run({
        id: newId('msg'),
        threadId,
        turnId,
        text: draft.text,
        toolCallId: draft.toolCallId,
        now,
      });
    }
  };
  /** The model's answer a pause or an end appends (the turn's row just written gives its thread). */
  const insertAnswer = (params: { id: string; answer: ChatMessage | null; now: string }, threadId: string) => {
    const { answer } = params;
    if (answer === null) return;
    insertMessage.run({
      id: newId('msg'),
      threadId,
      turnId: params.id,
      role: 'ASSISTANT',
      text: answer.text,
      toolCalls: answer.toolCalls.length ? JSON.stringify(answer.toolCalls) : null,
      toolCallId: null,
      now: params.now,
    });
  };
  const pauseTurn = raw(`UPDATE turns SET status = 'PAUSED', step = @step, text = @text, expires_at = @expiresAt,
      updated_at = @now, iterations = coalesce(@iterations, iterations) WHERE id = @id AND ${HOLDS} RETURNING *`);
  const insertElicitation =
    raw(`INSERT INTO elicitations (id, turn_id, thread_id, agent_id, owner_id, tool_call_id, status, request, tool_call,
      created_at, expires_at, approval, escalation_due_at)
    VALUES (@id, @turnId, @threadId, @agentId, @ownerId, @toolCallId, 'PENDING', @request, @toolCall, @now, @expiresAt,
      @approval, @escalationDueAt)`);
  const insertApproverRole = raw(`INSERT OR IGNORE INTO elicitation_approver_roles (elicitation_id, role, from_time)
    VALUES (@elicitationId, @role, @from)`);
  const finishTurn =
    raw(`UPDATE turns SET status = @status, text = @text, error = @error, step = NULL, expires_at = NULL,
      iterations = coalesce(@iterations, iterations), updated_at = @now WHERE id = @id AND ${HOLDS} RETURNING *`);
  const startTool = raw(`INSERT OR IGNORE INTO tool_executions (turn_id, tool_call_id, started_at, grant_id)
    SELECT @turnId, @toolCallId, @now, @grantId WHERE @owner IS NULL
      OR EXISTS (SELECT 1 FROM turns WHERE id = @turnId AND status = 'RUNNING' AND lease_owner = @owner)`);
  const finishTool =
    raw(`UPDATE tool_executions SET finished_at = @now, result = @result WHERE turn_id = @turnId AND tool_call_id = @toolCallId
      AND (@owner IS NULL OR EXISTS (SELECT 1 FROM turns WHERE id = @turnId AND status = 'RUNNING' AND lease_owner = @owner))`);
  const insertToolMessageOfTurn =
    raw(`INSERT OR IGNORE INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
    SELECT @id, thread_id, @turnId, 'TOOL', @text, NULL, @toolCallId, @now FROM turns WHERE id = @turnId`);
  const closeElicitations = raw(`UPDATE elicitations SET status = @status, resolved_at = @now
    WHERE id IN ${IDS} AND status = 'PENDING'`);
  const insertOverride = raw(`INSERT INTO agent_tool_overrides (agent_id, tool_id, mode, rules, allow_edit)
    VALUES (@agentId, @toolId, @mode, @rules, @allowEdit)`);
  const insertDelivery = raw(`INSERT INTO webhook_deliveries (id, endpoint, event_type, payload, status, attempts,
      next_attempt_at, created_at) VALUES (@id, @endpoint, @eventType, @payload, 'PENDING', 0, @now, @now)`);
  const claimDeliveries = raw(`UPDATE webhook_deliveries SET locked_by = @owner, locked_until = @until WHERE seq IN (
      SELECT seq FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= @now
        AND (locked_until IS NULL OR locked_until <= @now) AND endpoint IN (SELECT value FROM json_each(@endpoints))
      ORDER BY seq LIMIT @limit)
    RETURNING *`);
  const ownedGrant = prepared('SELECT * FROM approval_grants WHERE id = @id AND owner_id = @ownerId');
  // Retention of long-expired requests: a batch, then its answers and role rows, then the requests themselves.
  const expiredBatch = raw(`SELECT seq, id FROM elicitations WHERE status = 'EXPIRED' AND expires_at < @before
    LIMIT @limit`);
  const deleteAnswersOf = raw(`DELETE FROM elicitation_answers WHERE elicitation_id IN ${IDS}`);
  const deleteRolesOf = raw(`DELETE FROM elicitation_approver_roles WHERE elicitation_id IN ${IDS}`);
  const deleteElicitationsBySeq = raw('DELETE FROM elicitations WHERE seq IN (SELECT value FROM json_each(@seqs))');

  // What a viewer may answer as an approver: the requests offered to their roles (elicitation_approver_roles holds
  // only the waiting ones), of other owners, that they have not answered, or whose ACCEPT of theirs an edit outdated
  // (the arguments of the latest ACCEPT differ: stored canonical, the same arguments are the same text).
  const toAnswer = `FROM elicitations e
    WHERE e.id IN (SELECT elicitation_id FROM elicitation_approver_roles
        WHERE role IN (SELECT value FROM json_each(@roles)) AND from_time <= @now)
      AND e.status = 'PENDING' AND e.expires_at > @now AND e.owner_id <> @ownerId
      AND (@threadId IS NULL OR e.thread_id = @threadId) AND (@agentId IS NULL OR e.agent_id = @agentId)
      AND NOT EXISTS (SELECT 1 FROM elicitation_answers mine WHERE mine.elicitation_id = e.id
        AND mine.approver_id = @ownerId AND (mine.action <> 'ACCEPT' OR mine.arguments IS (
          SELECT latest.arguments FROM elicitation_answers latest WHERE latest.elicitation_id = e.id
            AND latest.action = 'ACCEPT' ORDER BY latest.position DESC LIMIT 1)))`;
  const toAnswerPage = raw(`SELECT e.* ${toAnswer} AND e.seq > @after ORDER BY e.seq LIMIT @limit`);
  const toAnswerCount = raw(`SELECT count(*) AS count ${toAnswer}`);
  const withRoles = <P extends { roles: readonly string[] }>(params: P) => ({
    ...params,
    roles: JSON.stringify(params.roles),
  });

  // A viewer's pending requests: INDEXED BY, because without statistics SQLite prefers elicitations_status_expiry
  // (status = ? AND expires_at > ?) and then reads every unexpired PENDING row of every user to count one user's.
  // The owner's index reads only the viewer's own rows, in seq order.
  const pending = `FROM elicitations INDEXED BY elicitations_owner_status_seq
    WHERE owner_id = @ownerId AND status = 'PENDING' AND expires_at > @now
      AND (@threadId IS NULL OR thread_id = @threadId) AND (@agentId IS NULL OR agent_id = @agentId)`;

  // The audit list: its statements per filter shape (statuses, by thread, by agent), prepared on its first use,
  // which keeps each one's query plan; at most (2^5 + 1) × 2 × 2 shapes, each read either way.
  const audits = new Map<string, { page: Entry; pageNewest: Entry; count: Entry }>();
  const audit = (params: Parameters<Catalogue['auditCount']>[0]) => {
    const key = `${params.statuses?.join(',') ?? '*'}|${params.threadId !== null}|${params.agentId !== null}`;
    let found = audits.get(key);
    if (!found) {
      const where = [
        'owner_id = @ownerId',
        ...(params.statuses ? [auditStatusCondition(params.statuses)] : []),
        ...(params.threadId !== null ? ['thread_id = @threadId'] : []),
        ...(params.agentId !== null ? ['agent_id = @agentId'] : []),
      ].join(' AND ');
      found = {
        page: prepared(`SELECT * FROM elicitations WHERE ${where} AND seq > @after ORDER BY seq LIMIT @limit`),
        pageNewest: prepared(
          `SELECT * FROM elicitations WHERE ${where} AND seq < @after ORDER BY seq DESC LIMIT @limit`,
        ),
        count: prepared(`SELECT count(*) AS count FROM elicitations WHERE ${where}`),
      };
      audits.set(key, found);
    }
    return found;
  };

  const overrideUpserts = new Map<string, Entry>();

  return {
    agent: prepared(`${AGENT} WHERE id = @id`),
    agents: prepared(`${AGENT} ORDER BY id`),
    upsertAgent: prepared(UPSERT_AGENT),
    deleteOverrides: prepared('DELETE FROM agent_tool_overrides WHERE agent_id = @agentId'),
    insertOverrides: ({ agentId, overrides }) => {
      for (const o of overrides) {
        insertOverride.run({
          agentId,
          toolId: o.toolId,
          mode: o.mode,
          rules: o.rules === null ? null : JSON.stringify(o.rules),
          allowEdit: o.allowEdit === null ? null : Number(o.allowEdit),
        });
      }
      return overrides.length;
    },
    updateAgentGating:
      prepared(`UPDATE agents SET require_tool_confirmation = coalesce(@requireToolConfirmation, require_tool_confirmation),
        pause_ttl_seconds = coalesce(@pauseTtlSeconds, pause_ttl_seconds), allow_edit = coalesce(@allowEdit, allow_edit),
        gating_set_by_api = 1, updated_at = @now
      WHERE id = @id`),
    upsertOverride: (params) => {
      const key = params.columns.join(',');
      let upsert = overrideUpserts.get(key);
      if (!upsert) {
        const set = params.columns.map((column) => (column === 'allowEdit' ? 'allow_edit' : column));
        upsert = prepared(`INSERT INTO agent_tool_overrides (agent_id, tool_id, mode, rules, allow_edit)
          VALUES (@agentId, @toolId, coalesce(@mode, 'BY_ANNOTATION'), @rules, @allowEdit)
          ON CONFLICT (agent_id, tool_id) DO UPDATE SET ${set.map((c) => `${c} = excluded.${c}`).join(', ')}`);
        overrideUpserts.set(key, upsert);
      }
      return upsert(params);
    },

    // Reads for a viewer: the owner is part of the lookup, so another user's id and an unknown one take the same
    // path (no row) and cannot be told apart by the answer or its timing.
    ownedThread: prepared('SELECT * FROM threads WHERE id = @id AND owner_id = @ownerId'),
    threadPage: prepared(`SELECT * FROM threads WHERE owner_id = @ownerId
      AND (@agentId IS NULL OR agent_id = @agentId) AND seq > @after ORDER BY seq LIMIT @limit`),
    threadPageNewest: prepared(`SELECT * FROM threads WHERE owner_id = @ownerId
      AND (@agentId IS NULL OR agent_id = @agentId) AND seq < @after ORDER BY seq DESC LIMIT @limit`),
    ownedTurn: prepared('SELECT * FROM turns WHERE id = @id AND owner_id = @ownerId'),
    turn: prepared('SELECT * FROM turns WHERE id = @id'),
    threadTurns: prepared('SELECT * FROM turns WHERE thread_id = @threadId ORDER BY created_at, rowid'),
    threadMessages: prepared('SELECT * FROM messages WHERE thread_id = @threadId ORDER BY seq'),
    turnMessages: prepared('SELECT * FROM messages WHERE turn_id = @turnId ORDER BY seq'),
    ownedElicitation: prepared('SELECT * FROM elicitations WHERE id = @id AND owner_id = @ownerId'),
    elicitation: prepared('SELECT * FROM elicitations WHERE id = @id'),
    turnElicitations: prepared('SELECT * FROM elicitations WHERE turn_id = @turnId ORDER BY seq'),
    turnsByIds: byIds(`SELECT * FROM turns WHERE id IN ${IDS}`),
    threadsByIds: byIds(`SELECT * FROM threads WHERE id IN ${IDS}`),
    turnsOfThreads: byIds(`SELECT * FROM turns WHERE thread_id IN ${IDS} ORDER BY created_at, rowid`),
    messagesOfTurns: byIds(`SELECT * FROM messages WHERE turn_id IN ${IDS} ORDER BY seq`),
    messagesOfThreads: byIds(`SELECT * FROM messages WHERE thread_id IN ${IDS} ORDER BY seq`),
    elicitationsOfTurns: byIds(`SELECT * FROM elicitations WHERE turn_id IN ${IDS} ORDER BY seq`),
    pendingPage: prepared(`SELECT * ${pending} AND seq > @after ORDER BY seq LIMIT @limit`),
    pendingCount: prepared(`SELECT count(*) AS count ${pending}`),
    toAnswerPage: (params) => toAnswerPage.all(withRoles(params)) as never,
    toAnswerCount: (params) => toAnswerCount.all(withRoles(params)) as never,
    auditPage: (params) => audit(params).page(params),
    auditPageNewest: (params) => audit(params).pageNewest(params),
    auditCount: (params) => audit(params).count(params),
    // Everyone's, for the metrics gauge: elicitations_status_expiry answers it from the index alone.
    allPendingCount: prepared(
      "SELECT count(*) AS count FROM elicitations WHERE status = 'PENDING' AND expires_at > @now",
    ),

    claimIdempotencyKey:
      prepared(`INSERT INTO idempotency_keys (owner_id, key, fingerprint, turn_id, thread_id, created_at)
      VALUES (@ownerId, @key, @fingerprint, @turnId, @threadId, @now) ON CONFLICT DO NOTHING`),
    idempotencyKey: prepared(
      'SELECT fingerprint, turn_id, thread_id FROM idempotency_keys WHERE owner_id = @ownerId AND key = @key',
    ),
    lockOwnedThread: prepared('SELECT * FROM threads WHERE id = @id AND owner_id = @ownerId'),
    lockActiveTurn: prepared(
      "SELECT * FROM turns WHERE thread_id = @threadId AND status IN ('RUNNING', 'PAUSED') LIMIT 1",
    ),
    insertTurn: (params) => {
      if (params.newThread) insertThread.run(params);
      insertTurn.run(params);
      return insertMessage.run({
        id: params.messageId,
        threadId: params.threadId,
        turnId: params.id,
        role: 'USER',
        text: params.text,
        toolCalls: null,
        toolCallId: null,
        now: params.now,
      }).changes;
    },
    insertMessage: (params) => insertMessage.run(params).changes,

    touchTurn: prepared(touchTurnCounting('@id')),
    appendMessage: (params) => {
      const held = appendTouch.all(params) as { thread_id: string }[];
      if (held.length) insertMessage.run({ ...params, threadId: held[0]!.thread_id });
      return held;
    },
    appendToolMessages: (params) => {
      const held = touchTurn.all(params) as { thread_id: string }[];
      if (held.length) insertToolMessages(params.turnId, held[0]!.thread_id, params.drafts, params.now);
      return held;
    },
    startTool: (params) => {
      if (startTool.run(params).changes === 1) return STARTED;
      // Nothing inserted: started before, or the lease is gone (then nothing may be written at all).
      return leaseLost(params) ? NONE : NOT_STARTED;
    },
    toolStartedBefore: prepared('SELECT 1 FROM tool_executions WHERE turn_id = @turnId AND tool_call_id = @toolCallId'),
    finishTool: (params) => {
      if (finishTool.run(params).changes === 0 && leaseLost(params)) return NONE;
      insertToolMessageOfTurn.run(params);
      return HELD;
    },
    pauseTurn: (params) => {
      const rows = pauseTurn.all(params) as { thread_id: string; agent_id: string; owner_id: string }[];
      const turn = rows[0];
      if (!turn) return NONE;
      insertAnswer(params, turn.thread_id);
      for (const draft of params.drafts) {
        insertElicitation.run({
          id: draft.id,
          turnId: params.id,
          threadId: turn.thread_id,
          agentId: turn.agent_id,
          ownerId: turn.owner_id,
          toolCallId: draft.toolCallId,
          request: JSON.stringify(draft.request),
          toolCall: JSON.stringify(draft.toolCall),
          now: params.now,
          expiresAt: params.expiresAt,
          approval: draft.approval ? JSON.stringify(draft.approval) : null,
          escalationDueAt: draft.approval?.escalation?.at ?? null,
        });
        // Offered by role to its approvers, for their list of requests to answer.
        if (draft.approval) {
          for (const { role, from } of approverRoles(draft.approval, params.now))
            insertApproverRole.run({ elicitationId: draft.id, role, from });
        }
      }
      return rows as never;
    },
    finishTurn: (params) => {
      const rows = finishTurn.all(params) as { thread_id: string }[];
      if (rows[0]) insertAnswer(params, rows[0].thread_id);
      return rows as never;
    },

    // One writer at a time: the turn cannot change under the answer, so nothing is locked (and no row read).
    lockTurnOfElicitation: () => NONE,
    elicitationsWithSibling: prepared(`SELECT * FROM elicitations
      WHERE turn_id = (SELECT turn_id FROM elicitations WHERE id = @id AND owner_id = @ownerId) ORDER BY seq`),
    lockTurnOfElicitationForApprover: () => NONE,
    elicitationsWithSiblingForApprover: prepared(`SELECT * FROM elicitations
      WHERE turn_id = (SELECT turn_id FROM elicitations WHERE id = @id) ORDER BY seq`),
    elicitationAnswers: prepared('SELECT * FROM elicitation_answers WHERE elicitation_id = @id ORDER BY position'),
    answersOfElicitations: byIds(
      `SELECT * FROM elicitation_answers WHERE elicitation_id IN ${IDS} ORDER BY elicitation_id, position`,
    ),
    deleteApproverRoles: byIdsRun('DELETE FROM elicitation_approver_roles WHERE elicitation_id IN ' + IDS),
    upsertElicitationAnswer: prepared(`INSERT INTO elicitation_answers (elicitation_id, approver_id, position, action,
        content, arguments, remember, created_at, approver_identity)
      VALUES (@elicitationId, @approverId, @position, @action, @content, @arguments, @remember, @now, @identity)
      ON CONFLICT (elicitation_id, approver_id) DO UPDATE SET position = excluded.position, action = excluded.action,
        content = excluded.content, arguments = excluded.arguments, remember = excluded.remember,
        created_at = excluded.created_at, approver_identity = excluded.approver_identity`),
    answer: prepared(`UPDATE elicitations SET status = @status, response_action = @action, response_content = @content,
        response_arguments = @arguments, response_remember = @remember, resolved_by = @by, resolved_at = @now,
        resolved_by_identity = @byIdentity, withdrawn = @withdrawn
      WHERE id = @id AND status = 'PENDING' RETURNING *`),
    resumeTurn: prepared(`UPDATE turns SET status = 'RUNNING', text = NULL, expires_at = NULL, updated_at = @now,
        lease_owner = @leaseOwner, lease_expires_at = @leaseUntil
      WHERE id = @id AND status = 'PAUSED' RETURNING *`),
    lockDueTurns: prepared("SELECT * FROM turns WHERE status = 'PAUSED' AND expires_at <= @now LIMIT @limit"),
    // The partial index holds only the waiting requests with an escalation still to make.
    escalateDue: prepared(`UPDATE elicitations SET escalated_at = @now WHERE seq IN (
        SELECT seq FROM elicitations INDEXED BY elicitations_escalation_due
        WHERE status = 'PENDING' AND escalated_at IS NULL AND escalation_due_at <= @now AND expires_at > @now
        ORDER BY escalation_due_at LIMIT @limit)
      AND status = 'PENDING' AND escalated_at IS NULL RETURNING *`),
    closeElicitations: ({ ids, status, now }) =>
      closeElicitations.run({ ids: JSON.stringify(ids), status, now }).changes,
    insertToolMessages: ({ threadId, turnId, drafts, now }) => {
      insertToolMessages(turnId, threadId, drafts, now);
      return drafts.length;
    },
    closeTurn: prepared(
      'UPDATE turns SET status = @status, text = NULL, step = NULL, updated_at = @now WHERE id = @id RETURNING *',
    ),

    // The sweeper's and recovery's reads: they run every few seconds on every server, whatever the load.
    runningTurns: prepared("SELECT * FROM turns WHERE status = 'RUNNING'"),
    runningLeases: prepared("SELECT id, lease_owner, lease_expires_at, recoveries FROM turns WHERE status = 'RUNNING'"),
    toolResult: prepared('SELECT result FROM tool_executions WHERE turn_id = @turnId AND tool_call_id = @toolCallId'),
    unfinishedToolCalls: prepared(
      'SELECT tool_call_id FROM tool_executions WHERE turn_id = @turnId AND finished_at IS NULL',
    ),
    claimTurn: prepared(`UPDATE turns SET lease_owner = @owner, lease_expires_at = @until, recoveries = recoveries + 1,
        updated_at = @now
      WHERE id = @id AND status = 'RUNNING' AND lease_owner IS @expected RETURNING *`),
    renewLeases: prepared(
      "UPDATE turns SET lease_expires_at = @until WHERE lease_owner = @owner AND status = 'RUNNING'",
    ),
    leaseOwner: prepared("SELECT lease_owner FROM turns WHERE id = @id AND status = 'RUNNING'"),

    deleteDeliveredWebhooks: prepared(`DELETE FROM webhook_deliveries WHERE seq IN (
      SELECT seq FROM webhook_deliveries WHERE status = 'DELIVERED' AND finished_at < @before LIMIT @limit)`),
    deleteLapsedGrants: prepared(`DELETE FROM approval_grants WHERE seq IN (
      SELECT seq FROM approval_grants WHERE coalesce(revoked_at, expires_at) < @before LIMIT @limit)`),
    deleteExpiredElicitations: (params) => {
      const batch = expiredBatch.all(params) as { seq: number; id: string }[];
      if (batch.length === 0) return 0;
      const ids = JSON.stringify(batch.map((row) => row.id));
      deleteAnswersOf.run({ ids });
      deleteRolesOf.run({ ids });
      return deleteElicitationsBySeq.run({ seqs: JSON.stringify(batch.map((row) => row.seq)) }).changes;
    },
    deleteIdempotencyKeys: prepared(`DELETE FROM idempotency_keys WHERE rowid IN (
      SELECT rowid FROM idempotency_keys WHERE created_at < @before LIMIT @limit)`),

    lockGrant: prepared('SELECT * FROM approval_grants WHERE id = @id'),
    lockGrantForRevoke: ownedGrant,
    ownedGrant,
    // Asked for every gated call that would ask: the owner's unrevoked grants of the tool (approval_grants_lookup).
    grantCandidates: prepared(`SELECT * FROM approval_grants WHERE owner_id = @ownerId AND agent_id = @agentId
      AND tool_id = @toolId AND revoked_at IS NULL ORDER BY seq`),
    grantPage: prepared(`SELECT * FROM approval_grants WHERE owner_id = @ownerId AND seq > @after
        AND (@agentId IS NULL OR agent_id = @agentId) AND (@threadId IS NULL OR thread_id = @threadId)
        AND (NOT @activeOnly OR (revoked_at IS NULL AND expires_at > @now))
      ORDER BY seq LIMIT @limit`),
    insertGrant:
      prepared(`INSERT INTO approval_grants (id, owner_id, agent_id, scope, thread_id, tool_id, definition_hash,
        elicitation_id, created_at, expires_at, revoked_at, approvers)
      VALUES (@id, @ownerId, @agentId, @scope, @threadId, @toolId, @definitionHash, @elicitationId, @createdAt,
        @expiresAt, @revokedAt, @approvers)`),
    lastGrantUse: prepared('SELECT max(started_at) AS started_at FROM tool_executions WHERE grant_id = @id'),
    revokeGrant: prepared('UPDATE approval_grants SET revoked_at = @revokedAt WHERE id = @id'),
    markCallerWaiting: prepared(`UPDATE elicitations SET caller_waiting_until = @until
      WHERE turn_id = @turnId AND owner_id = @ownerId AND status = 'PENDING'`),
    grantUses: byIds(`SELECT grant_id, turn_id, tool_call_id, started_at FROM tool_executions
      WHERE grant_id IN ${IDS} ORDER BY started_at`),

    lockDecisionChain: () => NONE,
    decisionChainHead: prepared('SELECT seq, hash FROM decision_records ORDER BY seq DESC LIMIT 1'),
    insertDecisionRecord: prepared(`INSERT INTO decision_records (seq, hash, kind, turn_id, tool_call_id, at, record)
      VALUES (@seq, @hash, @kind, @turnId, @toolCallId, @at, @record)`),
    decisionRecords: prepared(`SELECT record FROM decision_records
      WHERE (@from IS NULL OR at >= @from) AND (@to IS NULL OR at <= @to) ORDER BY seq`),

    decisionsOfCall: prepared(
      'SELECT record FROM decision_records WHERE turn_id = @turnId AND tool_call_id = @toolCallId ORDER BY seq',
    ),
    acceptedDecisionsOfTurns: byIds(
      `SELECT record FROM decision_records WHERE turn_id IN ${IDS} AND kind = 'ACCEPTED' ORDER BY seq`,
    ),
    decisionsOfTurns: byIds(`SELECT record FROM decision_records WHERE turn_id IN ${IDS} ORDER BY seq`),
    insertReceiptKey: prepared(`INSERT INTO receipt_keys (id, private_key, created_at) VALUES (@id, @privateKey, @now)
      ON CONFLICT (id) DO NOTHING`),
    receiptKey: prepared('SELECT private_key FROM receipt_keys WHERE id = @id'),

    upsertPasskeyChallenge: prepared(`INSERT INTO passkey_challenges (user_id, challenge, rp_id, expires_at)
      VALUES (@userId, @challenge, @rpId, @expiresAt)
      ON CONFLICT (user_id) DO UPDATE SET challenge = excluded.challenge, rp_id = excluded.rp_id,
        expires_at = excluded.expires_at`),
    takePasskeyChallenge: prepared('DELETE FROM passkey_challenges WHERE user_id = @userId RETURNING *'),
    insertPasskey: prepared(`INSERT INTO passkeys (credential_id, user_id, public_key, algorithm, rp_id, counter,
        transports, created_at) VALUES (@credentialId, @userId, @publicKey, @algorithm, @rpId, @counter, @transports, @now)
      ON CONFLICT (credential_id) DO NOTHING`),
    userPasskeys: prepared('SELECT * FROM passkeys WHERE user_id = @userId ORDER BY created_at, credential_id'),
    passkey: prepared('SELECT * FROM passkeys WHERE credential_id = @credentialId'),
    advancePasskeyCounter: prepared(`UPDATE passkeys SET counter = @counter, last_used_at = @now
      WHERE credential_id = @credentialId AND (counter < @counter OR (counter = 0 AND @counter = 0))`),

    insertWebhookDeliveries: ({ deliveries, now }) => {
      for (const d of deliveries) {
        insertDelivery.run({
          id: d.id,
          endpoint: d.endpoint,
          eventType: d.eventType,
          payload: JSON.stringify(d.payload),
          now,
        });
      }
      if (deliveries.length) outboxWritten();
      return deliveries.length;
    },
    // One writer at a time: the UPDATE's own read is the lock (webhook_deliveries_due finds the due rows).
    claimWebhookDeliveries: (params) =>
      claimDeliveries.all({ ...params, endpoints: JSON.stringify(params.endpoints) }) as never,
    // A retry or a release keeps the row PENDING with its next time; delivered and failed end it. Only the holder.
    recordWebhookAttempt: prepared(`UPDATE webhook_deliveries SET status = @status, attempts = attempts + @counted,
        next_attempt_at = coalesce(@nextAttemptAt, next_attempt_at),
        last_error = CASE WHEN @counted = 1 THEN @lastError ELSE last_error END,
        last_status_code = CASE WHEN @counted = 1 THEN @lastStatusCode ELSE last_status_code END,
        finished_at = @finishedAt, locked_by = NULL, locked_until = NULL
      WHERE id = @id AND locked_by = @owner AND status = 'PENDING'`),
    webhookDeliveryPage: prepared(`SELECT * FROM webhook_deliveries WHERE (@status IS NULL OR status = @status)
      AND seq > @after ORDER BY seq LIMIT @limit`),
    webhookDeliveryCount: prepared(
      'SELECT count(*) AS count FROM webhook_deliveries WHERE (@status IS NULL OR status = @status)',
    ),
  };
}
