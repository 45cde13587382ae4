// The PostgreSQL catalogue (../catalogue.ts). Several instances write at once, so correctness comes from the
// database: a script locks the rows it decides on first (FOR UPDATE; FOR SHARE for a grant a start relies on), the
// sweeper and retention skip rows another instance holds (SKIP LOCKED), one active turn per thread is a partial unique
// index, and a loop write is one statement (data-modifying CTEs) whose first part takes the turn's row only while the
// lease holds. Statements are named: pg prepares each once per connection. A call returns the query; the driver
// (postgres-store.ts) sends it. Parameters are written @name and sent as $n.
import type pg from 'pg';
import { newId } from '../../domain/ids.js';
import { approverRoles } from '../../domain/approvers.js';
import type { ChatMessage, ElicitationDraft, ElicitationStatus } from '../../domain/records.js';
import { toStorableJson, toStorableText } from '../../domain/text.js';
import { auditStatusCondition, UPSERT_AGENT, type Catalogue, type Params } from '../catalogue.js';

/** A query as the driver sends it; `outbox`: it writes outbox rows (its commit tells the deliverer). */
export interface PgQuery extends pg.QueryConfig {
  outbox?: true;
}

export type PgCatalogue = { readonly [K in keyof Catalogue]: (...params: Params<K>) => PgQuery };

/**
 * JSON for a jsonb parameter: JSON.stringify writes NUL as \u0000 and an unpaired surrogate as \udXXX, which jsonb
 * refuses. Text without such an escape is storable as it is (most is: the loop made it so); with one (or a text's own
 * backslash before such letters), the value is made storable first.
 */
export function json(value: unknown): string {
  const text = JSON.stringify(value);
  return UNSTORABLE_ESCAPE.test(text) ? JSON.stringify(toStorableJson(value)) : text;
}
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/**
 * Strings are bound storable (src/domain/text.ts): PostgreSQL refuses NUL characters and unpaired surrogates, which
 * the API refuses from users but a model or tool may still produce, and an id a client made up may hold (a lookup of
 * it then finds nothing, as on SQLite).
 */
function storable(value: unknown): unknown {
  if (typeof value === 'string') return toStorableText(value);
  if (Array.isArray(value))
    return value.map((item: unknown) => (typeof item === 'string' ? toStorableText(item) : item));
  return value;
}

/**
 * A named statement written with @name parameters. `derive`: the parameters it binds besides those given (lists
 * unpacked into one array per column, for unnest).
 */
function statement<P extends object>(
  name: string,
  text: string,
  derive?: (params: P) => Record<string, unknown>,
): (params?: P) => PgQuery {
  const names: string[] = [];
  const sql = text.replace(/@(\w+)/g, (_, param: string) => {
    const index = names.indexOf(param);
    return `$${index === -1 ? names.push(param) : index + 1}`;
  });
  // A loop over the names rather than a merged copy of the parameters: this runs for every statement sent.
  return (params) => {
    const given = (params ?? {}) as Record<string, unknown>;
    const derived = derive ? derive(params!) : null;
    const values: unknown[] = new Array(names.length);
    for (let i = 0; i < names.length; i++) {
      const param = names[i]!;
      const value = derived && param in derived ? derived[param] : given[param];
      if (value === undefined) throw new Error(`statement ${name}: no parameter ${param}`);
      values[i] = storable(value);
    }
    return { name, text: sql, values };
  };
}

/**
 * The owner of a row looked up by id, as a filter and never as a search key: `IS TRUE` keeps it out of the index
 * conditions, so the lookup uses the id's unique index under every plan. pg prepares each statement once per
 * connection and PostgreSQL soon keeps a generic plan, often made while the tables were empty; then the owner's index
 * costs the same, was chosen, and read every row of that owner on each lookup.
 */
const owned = (column = 'owner_id') => `(${column} = @ownerId) IS TRUE`;
/** The lease condition of a loop write (see catalogue.ts). */
const HOLDS = "(@owner::text IS NULL OR (status = 'RUNNING' AND lease_owner = @owner))";
const AGENT = `SELECT a.*, COALESCE((SELECT json_agg(json_build_array(o.tool_id, o.mode, o.rules, o.allow_edit))
    FROM agent_tool_overrides o WHERE o.agent_id = a.id), '[]') AS overrides FROM agents a`;

/**
 * The requests a viewer may answer as an approver: offered to their roles by now, of other owners, without an answer
 * of theirs that still counts (an ACCEPT of arguments other than the latest ACCEPT's does not).
 */
const TO_ANSWER = `FROM elicitations e
  WHERE e.id IN (SELECT elicitation_id FROM elicitation_approver_roles
      WHERE role = ANY(@roles::text[]) AND from_time <= @now)
    AND e.status = 'PENDING' AND e.expires_at > @now AND e.owner_id <> @ownerId
    AND (@threadId::text IS NULL OR e.thread_id = @threadId) AND (@agentId::text IS NULL OR e.agent_id = @agentId)
    AND NOT EXISTS (SELECT 1 FROM elicitation_answers mine WHERE mine.elicitation_id = e.id
      AND mine.approver_id = @ownerId AND (mine.action <> 'ACCEPT' OR mine.arguments IS NOT DISTINCT FROM (
        SELECT latest.arguments FROM elicitation_answers latest WHERE latest.elicitation_id = e.id
          AND latest.action = 'ACCEPT' ORDER BY latest.position DESC LIMIT 1)))`;

/** The model's answer a loop write appends (an ASSISTANT message): its new id, text and tool calls; null without one. */
const answerColumns = (answer: ChatMessage | null) => ({
  answerId: answer ? newId('msg') : null,
  answerText: answer ? answer.text : null,
  answerToolCalls: answer?.toolCalls.length ? json(answer.toolCalls) : null,
});

/** The role rows of the requests under a policy (approverRoles), as one array per column. */
function approverRoleColumns(drafts: readonly ElicitationDraft[], now: string) {
  const rows = drafts.flatMap((d) =>
    d.approval ? approverRoles(d.approval, now).map((r) => ({ elicitationId: d.id, ...r })) : [],
  );
  return {
    roleElicitationIds: rows.map((r) => r.elicitationId),
    roleNames: rows.map((r) => r.role),
    roleFrom: rows.map((r) => r.from),
  };
}

/** Tool messages as one array per column, with their new ids. */
const toolMessageColumns = ({ drafts }: { drafts: readonly { text: string; toolCallId: string }[] }) => ({
  ids: drafts.map(() => newId('msg')),
  texts: drafts.map((d) => d.text),
  toolCallIds: drafts.map((d) => d.toolCallId),
});

/** The audit list's statements for one status filter, named and built on first use. */
type Named = (params?: object) => PgQuery;
const audits = new Map<string, { page: Named; pageNewest: Named; count: Named }>();
function audit(statuses: readonly ElicitationStatus[] | null) {
  const key = statuses?.join('_') ?? 'all';
  let found = audits.get(key);
  if (!found) {
    const where = `owner_id = @ownerId AND (@threadId::text IS NULL OR thread_id = @threadId)
      AND (@agentId::text IS NULL OR agent_id = @agentId) AND (@now::timestamptz IS NOT NULL)
      ${statuses ? `AND ${auditStatusCondition(statuses)}` : ''}`;
    found = {
      page: statement(
        `audit_page_${key}`,
        `SELECT * FROM elicitations WHERE ${where} AND seq > @after ORDER BY seq LIMIT @limit`,
      ),
      pageNewest: statement(
        `audit_page_newest_${key}`,
        `SELECT * FROM elicitations WHERE ${where} AND seq < @after ORDER BY seq DESC LIMIT @limit`,
      ),
      count: statement(`audit_count_${key}`, `SELECT count(*) AS count FROM elicitations WHERE ${where}`),
    };
    audits.set(key, found);
  }
  return found;
}

const OVERRIDE_COLUMNS = { mode: 'mode', rules: 'rules', allowEdit: 'allow_edit' } as const;
const overrideUpserts = new Map<string, (params?: object) => PgQuery>();

const insertDeliveries = statement(
  'insert_webhook_deliveries',
  `INSERT INTO webhook_deliveries (id, endpoint, event_type, payload, status, attempts, next_attempt_at, created_at)
   SELECT d.id, d.endpoint, d.event_type, d.payload::jsonb, 'PENDING', 0, @now, @now
   FROM unnest(@ids::text[], @endpoints::text[], @eventTypes::text[], @payloads::text[])
     WITH ORDINALITY AS d(id, endpoint, event_type, payload, n)
   ORDER BY d.n`,
  ({ deliveries }: Params<'insertWebhookDeliveries'>[0]) => ({
    ids: deliveries.map((d) => d.id),
    endpoints: deliveries.map((d) => d.endpoint),
    eventTypes: deliveries.map((d) => d.eventType),
    payloads: deliveries.map((d) => json(d.payload)),
  }),
);

export const postgresStatements: PgCatalogue = {
  agent: statement('agent', `${AGENT} WHERE a.id = @id`),
  agents: statement('agents', `${AGENT} ORDER BY a.id`),
  upsertAgent: statement('upsert_agent', UPSERT_AGENT),
  deleteOverrides: statement('delete_overrides', 'DELETE FROM agent_tool_overrides WHERE agent_id = @agentId'),
  // Rules travel as JSON text (NULL for none) in a text[]: jsonb[] would need each element quoted as an array literal.
  insertOverrides: statement(
    'insert_overrides',
    `INSERT INTO agent_tool_overrides (agent_id, tool_id, mode, rules, allow_edit)
     SELECT @agentId, tool_id, mode, rules::jsonb, allow_edit
     FROM unnest(@toolIds::text[], @modes::text[], @rules::text[], @allowEdits::boolean[]) AS o(tool_id, mode, rules, allow_edit)`,
    ({ overrides }: Params<'insertOverrides'>[0]) => ({
      toolIds: overrides.map((o) => o.toolId),
      modes: overrides.map((o) => o.mode),
      rules: overrides.map((o) => (o.rules === null ? null : json(o.rules))),
      allowEdits: overrides.map((o) => o.allowEdit),
    }),
  ),
  updateAgentGating: statement(
    'update_agent_gating',
    `UPDATE agents SET require_tool_confirmation = COALESCE(@requireToolConfirmation::boolean, require_tool_confirmation),
       pause_ttl_seconds = COALESCE(@pauseTtlSeconds, pause_ttl_seconds),
       allow_edit = COALESCE(@allowEdit::boolean, allow_edit), gating_set_by_api = true, updated_at = @now
     WHERE id = @id`,
  ),
  upsertOverride: (params) => {
    const key = params.columns.join('_');
    let upsert = overrideUpserts.get(key);
    if (!upsert) {
      const set = params.columns.map((key) => OVERRIDE_COLUMNS[key]);
      upsert = statement(
        `upsert_override_${key}`,
        `INSERT INTO agent_tool_overrides (agent_id, tool_id, mode, rules, allow_edit)
         VALUES (@agentId, @toolId, COALESCE(@mode, 'BY_ANNOTATION'), @rules::jsonb, @allowEdit::boolean)
         ON CONFLICT (agent_id, tool_id) DO UPDATE SET ${set.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      );
      overrideUpserts.set(key, upsert);
    }
    return upsert(params);
  },

  ownedThread: statement('owned_thread', `SELECT * FROM threads WHERE id = @id AND ${owned()}`),
  threadPage: statement(
    'thread_page',
    `SELECT * FROM threads WHERE owner_id = @ownerId AND (@agentId::text IS NULL OR agent_id = @agentId)
       AND seq > @after ORDER BY seq LIMIT @limit`,
  ),
  threadPageNewest: statement(
    'thread_page_newest',
    `SELECT * FROM threads WHERE owner_id = @ownerId AND (@agentId::text IS NULL OR agent_id = @agentId)
       AND seq < @after ORDER BY seq DESC LIMIT @limit`,
  ),
  ownedTurn: statement('owned_turn', `SELECT * FROM turns WHERE id = @id AND ${owned()}`),
  turn: statement('turn', 'SELECT * FROM turns WHERE id = @id'),
  threadTurns: statement('thread_turns', 'SELECT * FROM turns WHERE thread_id = @threadId ORDER BY seq'),
  threadMessages: statement('thread_messages', 'SELECT * FROM messages WHERE thread_id = @threadId ORDER BY seq'),
  turnMessages: statement('turn_messages', 'SELECT * FROM messages WHERE turn_id = @turnId ORDER BY seq'),
  ownedElicitation: statement('owned_elicitation', `SELECT * FROM elicitations WHERE id = @id AND ${owned()}`),
  elicitation: statement('elicitation', 'SELECT * FROM elicitations WHERE id = @id'),
  turnElicitations: statement('turn_elicitations', 'SELECT * FROM elicitations WHERE turn_id = @turnId ORDER BY seq'),
  turnsByIds: statement('turns_by_ids', 'SELECT * FROM turns WHERE id = ANY(@ids::text[])'),
  threadsByIds: statement('threads_by_ids', 'SELECT * FROM threads WHERE id = ANY(@ids::text[])'),
  turnsOfThreads: statement('turns_of_threads', 'SELECT * FROM turns WHERE thread_id = ANY(@ids::text[]) ORDER BY seq'),
  messagesOfTurns: statement(
    'messages_of_turns',
    'SELECT * FROM messages WHERE turn_id = ANY(@ids::text[]) ORDER BY seq',
  ),
  messagesOfThreads: statement(
    'messages_of_threads',
    'SELECT * FROM messages WHERE thread_id = ANY(@ids::text[]) ORDER BY seq',
  ),
  elicitationsOfTurns: statement(
    'elicitations_of_turns',
    'SELECT * FROM elicitations WHERE turn_id = ANY(@ids::text[]) ORDER BY seq',
  ),
  pendingPage: statement(
    'pending_page',
    `SELECT * FROM elicitations WHERE owner_id = @ownerId AND status = 'PENDING' AND expires_at > @now
       AND (@threadId::text IS NULL OR thread_id = @threadId) AND (@agentId::text IS NULL OR agent_id = @agentId)
       AND seq > @after ORDER BY seq LIMIT @limit`,
  ),
  pendingCount: statement(
    'pending_count',
    `SELECT count(*) AS count FROM elicitations WHERE owner_id = @ownerId AND status = 'PENDING' AND expires_at > @now
       AND (@threadId::text IS NULL OR thread_id = @threadId) AND (@agentId::text IS NULL OR agent_id = @agentId)`,
  ),
  // What a viewer may answer as an approver (see the SQLite catalogue): by role first, through its index.
  toAnswerPage: statement('to_answer_page', `SELECT e.* ${TO_ANSWER} AND e.seq > @after ORDER BY e.seq LIMIT @limit`),
  toAnswerCount: statement('to_answer_count', `SELECT count(*) AS count ${TO_ANSWER}`),
  auditPage: (params) => audit(params.statuses).page(params),
  auditPageNewest: (params) => audit(params.statuses).pageNewest(params),
  auditCount: (params) => audit(params.statuses).count(params),
  allPendingCount: statement(
    'all_pending_count',
    `SELECT count(*) AS count FROM elicitations WHERE status = 'PENDING' AND expires_at > @now`,
  ),

  // The primary key (owner_id, key): a claim another transaction made and has not committed makes this one wait for
  // its end, then insert (it rolled back) or do nothing (it committed; idempotencyKey then reads its row).
  claimIdempotencyKey: statement(
    'claim_idempotency_key',
    `INSERT INTO idempotency_keys (owner_id, key, fingerprint, turn_id, thread_id, created_at)
     VALUES (@ownerId, @key, @fingerprint, @turnId, @threadId, @now) ON CONFLICT DO NOTHING`,
  ),
  idempotencyKey: statement(
    'idempotency_key',
    'SELECT fingerprint, turn_id, thread_id FROM idempotency_keys WHERE owner_id = @ownerId AND key = @key',
  ),
  lockOwnedThread: statement('lock_owned_thread', `SELECT * FROM threads WHERE id = @id AND ${owned()} FOR UPDATE`),
  lockActiveTurn: statement(
    'lock_active_turn',
    `SELECT * FROM turns WHERE thread_id = @threadId AND status IN ('RUNNING', 'PAUSED') LIMIT 1 FOR UPDATE`,
  ),
  insertTurn: statement(
    'insert_turn',
    `WITH thread AS (
       INSERT INTO threads (id, agent_id, owner_id, created_at)
       SELECT @threadId, @agentId, @ownerId, @now WHERE @newThread::boolean
     ), turn AS (
       INSERT INTO turns (id, thread_id, agent_id, owner_id, status, iterations, created_at, updated_at, lease_owner,
         lease_expires_at) VALUES (@id, @threadId, @agentId, @ownerId, 'RUNNING', 0, @now, @now, @leaseOwner, @leaseUntil)
     )
     INSERT INTO messages (id, thread_id, turn_id, role, text, created_at)
     VALUES (@messageId, @threadId, @id, 'USER', @text, @now)`,
  ),
  insertMessage: statement(
    'insert_message',
    `INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
     VALUES (@id, @threadId, @turnId, @role, @text, @toolCalls, @toolCallId, @now)`,
  ),

  // The loop's writes, one statement each: `held` locks the turn's row only while @owner holds its lease; the other
  // parts write only if it did, and no row comes back if it did not.
  touchTurn: statement(
    'touch_turn',
    `UPDATE turns SET iterations = coalesce(@iterations, iterations), updated_at = @now
     WHERE id = @id AND ${HOLDS} RETURNING thread_id`,
  ),
  appendMessage: statement(
    'append_message',
    `WITH held AS (
       UPDATE turns SET iterations = coalesce(@iterations, iterations), updated_at = @now
       WHERE id = @turnId AND ${HOLDS} RETURNING thread_id
     ), inserted AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
       SELECT @id, thread_id, @turnId, @role, @text, @toolCalls, @toolCallId, @now FROM held
     )
     SELECT thread_id FROM held`,
  ),
  appendToolMessages: statement(
    'append_tool_messages',
    `WITH held AS (
       UPDATE turns SET updated_at = @now WHERE id = @turnId AND ${HOLDS} RETURNING thread_id
     ), inserted AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_call_id, created_at)
       SELECT m.id, held.thread_id, @turnId, 'TOOL', m.text, m.tool_call_id, @now
         FROM held, unnest(@ids::text[], @texts::text[], @toolCallIds::text[]) WITH ORDINALITY AS m(id, text, tool_call_id, n)
         ORDER BY m.n
       ON CONFLICT (turn_id, tool_call_id) WHERE role = 'TOOL' DO NOTHING
     )
     SELECT thread_id FROM held`,
    toolMessageColumns,
  ),
  startTool: statement(
    'start_tool',
    `WITH held AS (
       SELECT id FROM turns WHERE id = @turnId AND ${HOLDS} FOR UPDATE
     ), started AS (
       INSERT INTO tool_executions (turn_id, tool_call_id, started_at, grant_id) SELECT @turnId, @toolCallId, @now, @grantId FROM held
       ON CONFLICT DO NOTHING RETURNING 1
     )
     SELECT (SELECT count(*) FROM started) AS started FROM held`,
  ),
  toolStartedBefore: statement(
    'tool_started_before',
    'SELECT 1 FROM tool_executions WHERE turn_id = @turnId AND tool_call_id = @toolCallId',
  ),
  finishTool: statement(
    'finish_tool',
    `WITH held AS (
       SELECT thread_id FROM turns WHERE id = @turnId AND ${HOLDS} FOR UPDATE
     ), finished AS (
       UPDATE tool_executions SET finished_at = @now, result = @result::jsonb WHERE turn_id = @turnId
         AND tool_call_id = @toolCallId AND EXISTS (SELECT 1 FROM held)
     ), inserted AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_call_id, created_at)
       SELECT @id, thread_id, @turnId, 'TOOL', @text, @toolCallId, @now FROM held
       ON CONFLICT (turn_id, tool_call_id) WHERE role = 'TOOL' DO NOTHING
     )
     SELECT thread_id FROM held`,
  ),
  pauseTurn: statement(
    'pause_turn',
    `WITH held AS (
       UPDATE turns SET status = 'PAUSED', step = @step, text = @text, expires_at = @expiresAt, updated_at = @now,
         iterations = coalesce(@iterations, iterations)
       WHERE id = @id AND ${HOLDS} RETURNING *
     ), answer AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, created_at)
       SELECT @answerId, thread_id, @id, 'ASSISTANT', @answerText, @answerToolCalls, @now FROM held
       WHERE @answerId::text IS NOT NULL
     ), inserted AS (
       INSERT INTO elicitations (id, turn_id, thread_id, agent_id, owner_id, tool_call_id, status, request, tool_call,
         created_at, expires_at, approval, escalation_due_at)
       SELECT e.id, held.id, held.thread_id, held.agent_id, held.owner_id, e.tool_call_id, 'PENDING', e.request::jsonb,
         e.tool_call::jsonb, @now, @expiresAt, e.approval::jsonb, e.escalation_due_at
       FROM held, unnest(@elicitationIds::text[], @toolCallIds::text[], @requests::text[], @toolCalls::text[],
           @approvals::text[], @escalationDue::timestamptz[])
         WITH ORDINALITY AS e(id, tool_call_id, request, tool_call, approval, escalation_due_at, n)
       ORDER BY e.n
     ), offered AS (
       INSERT INTO elicitation_approver_roles (elicitation_id, role, from_time)
       SELECT r.elicitation_id, r.role, r.from_time
       FROM held, unnest(@roleElicitationIds::text[], @roleNames::text[], @roleFrom::timestamptz[])
         AS r(elicitation_id, role, from_time)
     )
     SELECT * FROM held`,
    ({ drafts, answer, now }: Params<'pauseTurn'>[0]) => ({
      // Offered by role to the approvers of the requests under a policy (none for most pauses).
      ...approverRoleColumns(drafts, now),
      ...answerColumns(answer),
      elicitationIds: drafts.map((d) => d.id),
      toolCallIds: drafts.map((d) => d.toolCallId),
      requests: drafts.map((d) => json(d.request)),
      toolCalls: drafts.map((d) => json(d.toolCall)),
      approvals: drafts.map((d) => (d.approval ? json(d.approval) : null)),
      escalationDue: drafts.map((d) => d.approval?.escalation?.at ?? null),
    }),
  ),
  finishTurn: statement(
    'finish_turn',
    `WITH held AS (
       UPDATE turns SET status = @status, text = @text, error = @error, step = NULL, expires_at = NULL,
         updated_at = @now, iterations = coalesce(@iterations, iterations)
       WHERE id = @id AND ${HOLDS} RETURNING *
     ), answer AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, created_at)
       SELECT @answerId, thread_id, @id, 'ASSISTANT', @answerText, @answerToolCalls, @now FROM held
       WHERE @answerId::text IS NOT NULL
     )
     SELECT * FROM held`,
    ({ answer }: Params<'finishTurn'>[0]) => answerColumns(answer),
  ),

  lockTurnOfElicitation: statement(
    'lock_turn_of_elicitation',
    `SELECT t.* FROM turns t JOIN elicitations e ON e.turn_id = t.id
     WHERE e.id = @id AND ${owned('e.owner_id')} FOR UPDATE OF t`,
  ),
  elicitationsWithSibling: statement(
    'elicitations_with_sibling',
    `SELECT * FROM elicitations
     WHERE turn_id = (SELECT turn_id FROM elicitations WHERE id = @id AND ${owned()}) ORDER BY seq`,
  ),
  // An approver's answer, authorized by the app: the turn's row locked as for the owner's.
  lockTurnOfElicitationForApprover: statement(
    'lock_turn_of_elicitation_for_approver',
    `SELECT t.* FROM turns t JOIN elicitations e ON e.turn_id = t.id WHERE e.id = @id FOR UPDATE OF t`,
  ),
  elicitationsWithSiblingForApprover: statement(
    'elicitations_with_sibling_for_approver',
    `SELECT * FROM elicitations WHERE turn_id = (SELECT turn_id FROM elicitations WHERE id = @id) ORDER BY seq`,
  ),
  elicitationAnswers: statement(
    'elicitation_answers',
    'SELECT * FROM elicitation_answers WHERE elicitation_id = @id ORDER BY position',
  ),
  answersOfElicitations: statement(
    'answers_of_elicitations',
    'SELECT * FROM elicitation_answers WHERE elicitation_id = ANY(@ids::text[]) ORDER BY elicitation_id, position',
  ),
  deleteApproverRoles: statement(
    'delete_approver_roles',
    'DELETE FROM elicitation_approver_roles WHERE elicitation_id = ANY(@ids::text[])',
  ),
  upsertElicitationAnswer: statement(
    'upsert_elicitation_answer',
    `INSERT INTO elicitation_answers (elicitation_id, approver_id, position, action, content, arguments, remember,
       created_at, approver_identity)
     VALUES (@elicitationId, @approverId, @position, @action, @content::jsonb, @arguments::jsonb, @remember::jsonb, @now,
       @identity::jsonb)
     ON CONFLICT (elicitation_id, approver_id) DO UPDATE SET position = excluded.position, action = excluded.action,
       content = excluded.content, arguments = excluded.arguments, remember = excluded.remember,
       created_at = excluded.created_at, approver_identity = excluded.approver_identity`,
  ),
  answer: statement(
    'answer',
    `UPDATE elicitations SET status = @status, response_action = @action, response_content = @content,
       response_arguments = @arguments, response_remember = @remember, resolved_by = @by, resolved_at = @now,
       resolved_by_identity = @byIdentity::jsonb, withdrawn = @withdrawn
     WHERE id = @id AND status = 'PENDING' RETURNING *`,
  ),
  resumeTurn: statement(
    'resume_turn',
    `UPDATE turns SET status = 'RUNNING', text = NULL, expires_at = NULL, updated_at = @now, lease_owner = @leaseOwner,
       lease_expires_at = @leaseUntil WHERE id = @id AND status = 'PAUSED' RETURNING *`,
  ),
  // SKIP LOCKED: a turn another instance is expiring, or that an answer holds, is left to them.
  lockDueTurns: statement(
    'lock_due_turns',
    `SELECT * FROM turns WHERE status = 'PAUSED' AND expires_at <= @now ORDER BY expires_at LIMIT @limit
     FOR UPDATE SKIP LOCKED`,
  ),
  // SKIP LOCKED: a request another instance is escalating, or an answer is deciding, is left to them; the outer WHERE
  // takes a request another instance escalated since this one's snapshot out again.
  escalateDue: statement(
    'escalate_due',
    `UPDATE elicitations SET escalated_at = @now WHERE seq IN (SELECT seq FROM elicitations
       WHERE status = 'PENDING' AND escalated_at IS NULL AND escalation_due_at <= @now AND expires_at > @now
       ORDER BY escalation_due_at LIMIT @limit FOR UPDATE SKIP LOCKED)
     AND status = 'PENDING' AND escalated_at IS NULL RETURNING *`,
  ),
  closeElicitations: statement(
    'close_elicitations',
    `UPDATE elicitations SET status = @status, resolved_at = @now WHERE id = ANY(@ids::text[]) AND status = 'PENDING'`,
  ),
  insertToolMessages: statement(
    'insert_tool_messages',
    `INSERT INTO messages (id, thread_id, turn_id, role, text, tool_call_id, created_at)
     SELECT id, @threadId, @turnId, 'TOOL', text, tool_call_id, @now
     FROM unnest(@ids::text[], @texts::text[], @toolCallIds::text[]) WITH ORDINALITY AS m(id, text, tool_call_id, n)
     ORDER BY n
     ON CONFLICT (turn_id, tool_call_id) WHERE role = 'TOOL' DO NOTHING`,
    toolMessageColumns,
  ),
  closeTurn: statement(
    'close_turn',
    'UPDATE turns SET status = @status, text = NULL, step = NULL, updated_at = @now WHERE id = @id RETURNING *',
  ),

  runningTurns: statement('running_turns', `SELECT * FROM turns WHERE status = 'RUNNING' ORDER BY seq`),
  runningLeases: statement(
    'running_leases',
    `SELECT id, lease_owner, lease_expires_at, recoveries FROM turns WHERE status = 'RUNNING' ORDER BY seq`,
  ),
  toolResult: statement(
    'tool_result',
    'SELECT result FROM tool_executions WHERE turn_id = @turnId AND tool_call_id = @toolCallId',
  ),
  unfinishedToolCalls: statement(
    'unfinished_tool_calls',
    'SELECT tool_call_id FROM tool_executions WHERE turn_id = @turnId AND finished_at IS NULL ORDER BY started_at',
  ),
  // Of several instances, the first to lock the row wins; the others re-check the WHERE against its new owner.
  claimTurn: statement(
    'claim_turn',
    `UPDATE turns SET lease_owner = @owner, lease_expires_at = @until, recoveries = recoveries + 1, updated_at = @now
     WHERE id = @id AND status = 'RUNNING' AND lease_owner IS NOT DISTINCT FROM @expected RETURNING *`,
  ),
  renewLeases: statement(
    'renew_leases',
    `UPDATE turns SET lease_expires_at = @until WHERE lease_owner = @owner AND status = 'RUNNING'`,
  ),
  leaseOwner: statement('lease_owner', `SELECT lease_owner FROM turns WHERE id = @id AND status = 'RUNNING'`),

  // SKIP LOCKED: a row another instance is deleting, or (a grant) a start holds FOR SHARE, is left for later.
  deleteDeliveredWebhooks: statement(
    'delete_delivered_webhooks',
    `DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE status = 'DELIVERED'
       AND finished_at < @before LIMIT @limit FOR UPDATE SKIP LOCKED)`,
  ),
  deleteLapsedGrants: statement(
    'delete_lapsed_grants',
    `DELETE FROM approval_grants WHERE seq IN (SELECT seq FROM approval_grants
       WHERE COALESCE(revoked_at, expires_at) < @before LIMIT @limit FOR UPDATE SKIP LOCKED)`,
  ),
  // One statement: the batch, its answers and role rows, and the requests go together.
  deleteExpiredElicitations: statement(
    'delete_expired_elicitations',
    `WITH batch AS (
       SELECT seq, id FROM elicitations WHERE status = 'EXPIRED' AND expires_at < @before LIMIT @limit
       FOR UPDATE SKIP LOCKED
     ), answers AS (
       DELETE FROM elicitation_answers WHERE elicitation_id IN (SELECT id FROM batch)
     ), roles AS (
       DELETE FROM elicitation_approver_roles WHERE elicitation_id IN (SELECT id FROM batch)
     )
     DELETE FROM elicitations WHERE seq IN (SELECT seq FROM batch)`,
  ),
  deleteIdempotencyKeys: statement(
    'delete_idempotency_keys',
    `DELETE FROM idempotency_keys WHERE (owner_id, key) IN (SELECT owner_id, key FROM idempotency_keys
       WHERE created_at < @before LIMIT @limit FOR UPDATE SKIP LOCKED)`,
  ),

  lockGrant: statement('lock_grant', 'SELECT * FROM approval_grants WHERE id = @id FOR SHARE'),
  lockGrantForRevoke: statement(
    'lock_grant_for_revoke',
    `SELECT * FROM approval_grants WHERE id = @id AND ${owned()} FOR UPDATE`,
  ),
  ownedGrant: statement('owned_grant', `SELECT * FROM approval_grants WHERE id = @id AND ${owned()}`),
  // Asked for every gated call that would ask: the owner's unrevoked grants of the tool (approval_grants_lookup).
  grantCandidates: statement(
    'grant_candidates',
    `SELECT * FROM approval_grants WHERE owner_id = @ownerId AND agent_id = @agentId AND tool_id = @toolId
       AND revoked_at IS NULL ORDER BY seq`,
  ),
  grantPage: statement(
    'grant_page',
    `SELECT * FROM approval_grants WHERE owner_id = @ownerId AND seq > @after
       AND (@agentId::text IS NULL OR agent_id = @agentId) AND (@threadId::text IS NULL OR thread_id = @threadId)
       AND (NOT @activeOnly::boolean OR (revoked_at IS NULL AND expires_at > @now))
     ORDER BY seq LIMIT @limit`,
  ),
  insertGrant: statement(
    'insert_grant',
    `INSERT INTO approval_grants (id, owner_id, agent_id, scope, thread_id, tool_id, definition_hash, elicitation_id,
       created_at, expires_at, revoked_at, approvers)
     VALUES (@id, @ownerId, @agentId, @scope, @threadId, @toolId, @definitionHash, @elicitationId, @createdAt,
       @expiresAt, @revokedAt, @approvers)`,
  ),
  lastGrantUse: statement(
    'last_grant_use',
    'SELECT max(started_at) AS started_at FROM tool_executions WHERE grant_id = @id',
  ),
  revokeGrant: statement('revoke_grant', 'UPDATE approval_grants SET revoked_at = @revokedAt WHERE id = @id'),
  markCallerWaiting: statement(
    'mark_caller_waiting',
    `UPDATE elicitations SET caller_waiting_until = @until
     WHERE turn_id = @turnId AND owner_id = @ownerId AND status = 'PENDING'`,
  ),
  grantUses: statement(
    'grant_uses',
    `SELECT grant_id, turn_id, tool_call_id, started_at FROM tool_executions WHERE grant_id = ANY(@ids::text[])
     ORDER BY started_at`,
  ),

  // One key for the deployment's chain: every append, from any instance, waits for the one before to commit.
  lockDecisionChain: statement(
    'lock_decision_chain',
    "SELECT pg_advisory_xact_lock(hashtext('toolgate.decision_records'))",
  ),
  decisionChainHead: statement(
    'decision_chain_head',
    // Ordered by the column, not by the cast the output names seq: the primary key's index, read backwards, finds the
    // head; ordering by the cast sorted the whole chain at every append.
    'SELECT seq::integer AS seq, hash FROM decision_records ORDER BY decision_records.seq DESC LIMIT 1',
  ),
  insertDecisionRecord: statement(
    'insert_decision_record',
    `INSERT INTO decision_records (seq, hash, kind, turn_id, tool_call_id, at, record)
     VALUES (@seq, @hash, @kind, @turnId, @toolCallId, @at, @record)`,
  ),
  decisionRecords: statement(
    'decision_records',
    `SELECT record FROM decision_records
     WHERE (@from::text IS NULL OR at >= @from) AND (@to::text IS NULL OR at <= @to) ORDER BY seq`,
  ),

  decisionsOfCall: statement(
    'decisions_of_call',
    'SELECT record FROM decision_records WHERE turn_id = @turnId AND tool_call_id = @toolCallId ORDER BY seq',
  ),
  acceptedDecisionsOfTurns: statement(
    'accepted_decisions_of_turns',
    "SELECT record FROM decision_records WHERE turn_id = ANY(@ids::text[]) AND kind = 'ACCEPTED' ORDER BY seq",
  ),
  decisionsOfTurns: statement(
    'decisions_of_turns',
    'SELECT record FROM decision_records WHERE turn_id = ANY(@ids::text[]) ORDER BY seq',
  ),
  insertReceiptKey: statement(
    'insert_receipt_key',
    `INSERT INTO receipt_keys (id, private_key, created_at) VALUES (@id, @privateKey, @now)
     ON CONFLICT (id) DO NOTHING`,
  ),
  receiptKey: statement('receipt_key', 'SELECT private_key FROM receipt_keys WHERE id = @id'),

  upsertPasskeyChallenge: statement(
    'upsert_passkey_challenge',
    `INSERT INTO passkey_challenges (user_id, challenge, rp_id, expires_at)
     VALUES (@userId, @challenge, @rpId, @expiresAt)
     ON CONFLICT (user_id) DO UPDATE SET challenge = excluded.challenge, rp_id = excluded.rp_id,
       expires_at = excluded.expires_at`,
  ),
  takePasskeyChallenge: statement(
    'take_passkey_challenge',
    'DELETE FROM passkey_challenges WHERE user_id = @userId RETURNING *',
  ),
  insertPasskey: statement(
    'insert_passkey',
    `INSERT INTO passkeys (credential_id, user_id, public_key, algorithm, rp_id, counter, transports, created_at)
     VALUES (@credentialId, @userId, @publicKey, @algorithm, @rpId, @counter, @transports::jsonb, @now)
     ON CONFLICT (credential_id) DO NOTHING`,
  ),
  userPasskeys: statement(
    'user_passkeys',
    'SELECT * FROM passkeys WHERE user_id = @userId ORDER BY created_at, credential_id',
  ),
  passkey: statement('passkey', 'SELECT * FROM passkeys WHERE credential_id = @credentialId'),
  advancePasskeyCounter: statement(
    'advance_passkey_counter',
    `UPDATE passkeys SET counter = @counter, last_used_at = @now
     WHERE credential_id = @credentialId AND (counter < @counter OR (counter = 0 AND @counter = 0))`,
  ),

  insertWebhookDeliveries: (params) => ({ ...insertDeliveries(params), outbox: true }),
  // SKIP LOCKED: rows another instance is claiming right now are left to it; a claim that lapsed is taken over.
  claimWebhookDeliveries: statement(
    'claim_webhook_deliveries',
    `WITH due AS (
       SELECT seq FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= @now
         AND (locked_until IS NULL OR locked_until <= @now) AND endpoint = ANY(@endpoints::text[])
       ORDER BY seq LIMIT @limit FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries w SET locked_by = @owner, locked_until = @until FROM due WHERE w.seq = due.seq
     RETURNING w.*`,
  ),
  // A retry or a release keeps the row PENDING with its next time; delivered and failed end it. Only the holder.
  recordWebhookAttempt: statement(
    'record_webhook_attempt',
    `UPDATE webhook_deliveries SET status = @status, attempts = attempts + @counted::int,
       next_attempt_at = coalesce(@nextAttemptAt::timestamptz, next_attempt_at),
       last_error = CASE WHEN @counted::int = 1 THEN @lastError::text ELSE last_error END,
       last_status_code = CASE WHEN @counted::int = 1 THEN @lastStatusCode::int ELSE last_status_code END,
       finished_at = @finishedAt::timestamptz, locked_by = NULL, locked_until = NULL
     WHERE id = @id AND locked_by = @owner AND status = 'PENDING'`,
  ),
  webhookDeliveryPage: statement(
    'webhook_delivery_page',
    `SELECT * FROM webhook_deliveries WHERE (@status::text IS NULL OR status = @status) AND seq > @after
     ORDER BY seq LIMIT @limit`,
  ),
  webhookDeliveryCount: statement(
    'webhook_delivery_count',
    'SELECT count(*) AS count FROM webhook_deliveries WHERE (@status::text IS NULL OR status = @status)',
  ),
};
