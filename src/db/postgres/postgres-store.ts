// The PostgreSQL store: several toolgate instances share one database. SQLite let one writer in at a time; here
// correctness comes from the database itself: every transaction that changes a turn locks its row first (so two
// answers, an answer and the sweeper, or a write and a lease takeover happen one after the other), one active turn
// per thread is a partial unique index, the sweeper and recovery skip rows another instance holds (SKIP LOCKED), and
// lease checks are part of the UPDATE that takes the row. The rules themselves are the domain's (src/domain/).
// Statements are named (pg prepares each once per connection); drizzle holds the schema and the migrations.
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import pg from 'pg';
import { decideAnswer, resumesTurn } from '../../domain/answer-rules.js';
import { storedConditionsFor } from '../../domain/expiry.js';
import { grantStateAt, revokedAtFor } from '../../domain/grants.js';
import { answerFromColumns, grantIdFromColumn, recordedAnswer } from '../../domain/stored-answer.js';
import { argumentRulesFromRows, overrideChanges, overrideRows } from '../../domain/agent-overrides.js';
import { newId } from '../../domain/ids.js';
import { buildPage, decodeCursor, pageHoldsAll, seqBound } from '../../domain/pagination.js';
import { loadPendingStep } from '../../domain/pending-step.js';
import { toStorableJson, toStorableText } from '../../domain/text.js';
import type {
  Agent,
  ApprovalGrantRecord,
  ArgumentRule,
  ChatMessage,
  CloseReason,
  ElicitationAnswer,
  ElicitationDraft,
  ElicitationRecord,
  ElicitationStatus,
  GrantUseRecord,
  MessageRecord,
  Page,
  PendingStep,
  ThreadRecord,
  ToolConfirmationMode,
  ToolMessageDraft,
  TurnRecord,
} from '../../domain/records.js';
import { startTurnFingerprint } from '../../domain/idempotency.js';
import {
  GrantLapsedError,
  loopWriteRefused,
  refusalOf,
  StartRefused,
  type AgentGatingPatch,
  type AnswerInput,
  type ResolveResult,
  type RunningTurnLease,
  type StartTurnResult,
  type StepAnswer,
  type Store,
  type TurnLease,
} from '../../domain/store.js';
import {
  closePausedTurn,
  decideActiveTurn,
  decideThread,
  pausedElicitations,
  type CloseStep,
} from '../../domain/turn-rules.js';
import {
  attemptChanges,
  elicitationsClosed,
  elicitationsClosedBy,
  elicitationsRequested,
  outboxRows,
  turnEnded,
  type WebhookAttemptOutcome,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
  type WebhookEvent,
  type WebhookOutbox,
} from '../../domain/webhook-events.js';
import { migrationsFolder } from '../migrations-folder.js';
import * as schema from './schema.js';

const MIGRATIONS = migrationsFolder('postgres');

type Client = pg.PoolClient | pg.Pool;
type Row = Record<string, unknown>;

/** A named statement: prepared by PostgreSQL once per connection, then only executed. */
interface Statement {
  name: string;
  text: string;
}
const statement = (name: string, text: string): Statement => ({ name, text });

export interface PostgresStoreOptions {
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** The webhook endpoints whose events the changes write to the outbox; none: nothing is written or read for them. */
  webhooks?: WebhookOutbox;
}

/** SQLSTATEs after which a transaction is tried again from the start: nothing of it was committed. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

export class PostgresStore implements Store {
  readonly pool: pg.Pool;
  readonly db: NodePgDatabase<typeof schema>;
  readonly #newestMigration: number;
  readonly #auditStatements = new Map<string, { page: Statement; pageNewest: Statement; count: Statement }>();
  /** Null without subscribed endpoints: the changes then write no outbox rows and run no statement for them. */
  readonly #webhooks: WebhookOutbox | null;
  /** Connections whose open transaction wrote outbox rows: its COMMIT tells the deliverer. */
  readonly #wroteWebhooks = new WeakSet<pg.PoolClient>();

  private constructor(pool: pg.Pool, webhooks?: WebhookOutbox) {
    this.pool = pool;
    this.#webhooks = webhooks?.subscriptions.length ? webhooks : null;
    this.db = drizzle(pool, { schema });
    this.#newestMigration = Math.max(
      0,
      ...readMigrationFiles({ migrationsFolder: MIGRATIONS }).map((m) => m.folderMillis),
    );
  }

  /**
   * Connects, applies the migrations this build has (one instance at a time: drizzle's migrator runs in a
   * transaction under an advisory lock taken here) and returns the store. Rejects when the database cannot be reached.
   */
  static async open(connectionString: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({
      ...withDurableCommits(connectionString),
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
    });
    // A connection dropped while idle (a database restart) is an event on the pool, not a crash: the next query
    // opens a new one.
    pool.on('error', () => {});
    const store = new PostgresStore(pool, options.webhooks);
    try {
      const client = await pool.connect();
      try {
        // Several instances starting at once: one migrates, the others wait and then find nothing to do.
        await client.query('SELECT pg_advisory_lock(hashtext($1))', ['toolgate:migrate']);
        await migrate(drizzle(client, { schema }), { migrationsFolder: MIGRATIONS });
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['toolgate:migrate']).catch(() => {});
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return store;
  }

  /**
   * The database's clock minus this host's, in ms (half a round trip of error): every instance reads lease and
   * expiry times on one clock, the database's, rather than on hosts' clocks that may disagree.
   */
  async clockOffsetMs(): Promise<number> {
    // A connection first: time spent waiting for one is not part of the round trip being timed.
    const client = await this.pool.connect();
    try {
      const before = Date.now();
      const { rows } = await run(client, Q.now, []);
      const after = Date.now();
      return (rows[0]!.now as Date).getTime() - (before + after) / 2;
    } finally {
      client.release();
    }
  }

  /**
   * One transaction on one connection: BEGIN, the work, COMMIT. A serialization failure or deadlock rolls back and
   * runs the work again from the start (nothing of the failed attempt was committed).
   */
  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        if (this.#wroteWebhooks.delete(client)) this.#webhooks!.written();
        return result;
      } catch (error) {
        this.#wroteWebhooks.delete(client);
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(error))) continue;
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  async flush(): Promise<void> {
    // A COMMIT returns once PostgreSQL has it durable (synchronous_commit = on, checked by ping()).
  }

  // ---- agents -------------------------------------------------------------------------------------------

  async syncAgent(agent: Agent, now: string): Promise<Agent> {
    await this.#transaction(async (client) => {
      const definition = [
        agent.id,
        agent.name,
        agent.description,
        agent.modelId,
        agent.systemPrompt,
        json(agent.toolIds),
        agent.maxIterations,
        now,
      ];
      // Instances starting at once each sync the config: the row lock makes them one after the other.
      const { rows } = await client.query<{ gating_set_by_api: boolean }>(
        `INSERT INTO agents (id, name, description, model_id, system_prompt, tool_ids, max_iterations, updated_at,
           created_at, require_tool_confirmation, pause_ttl_seconds, allow_edit)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11)
         ON CONFLICT (id) DO UPDATE SET name = $2, description = $3, model_id = $4, system_prompt = $5,
           tool_ids = $6, max_iterations = $7, updated_at = $8,
           require_tool_confirmation = CASE WHEN agents.gating_set_by_api THEN agents.require_tool_confirmation ELSE $9 END,
           pause_ttl_seconds = CASE WHEN agents.gating_set_by_api THEN agents.pause_ttl_seconds ELSE $10 END,
           allow_edit = CASE WHEN agents.gating_set_by_api THEN agents.allow_edit ELSE $11 END
         RETURNING gating_set_by_api`,
        [...definition, agent.requireToolConfirmation, agent.pauseTtlSeconds, agent.allowEdit],
      );
      if (rows[0]!.gating_set_by_api) return;
      await client.query('DELETE FROM agent_tool_overrides WHERE agent_id = $1', [agent.id]);
      const overrides = overrideRows(agent);
      if (overrides.length) {
        // Rules travel as JSON text (NULL for none) in a text[]: jsonb[] would need each element quoted as an array literal.
        await client.query(
          `INSERT INTO agent_tool_overrides (agent_id, tool_id, mode, rules, allow_edit)
           SELECT $1, tool_id, mode, rules::jsonb, allow_edit
           FROM unnest($2::text[], $3::text[], $4::text[], $5::boolean[]) AS o(tool_id, mode, rules, allow_edit)`,
          [
            agent.id,
            overrides.map((o) => o.toolId),
            overrides.map((o) => o.mode),
            overrides.map((o) => (o.rules === null ? null : json(o.rules))),
            overrides.map((o) => o.allowEdit),
          ],
        );
      }
    });
    return (await this.getAgent(agent.id))!;
  }

  async getAgent(id: string): Promise<Agent | null> {
    const { rows } = await run(this.pool, Q.agent, [id]);
    return rows[0] ? agentRecord(rows[0]) : null;
  }

  async listAgents(): Promise<Agent[]> {
    const { rows } = await run(this.pool, Q.agents, []);
    return rows.map(agentRecord);
  }

  async updateAgentGating(id: string, patch: AgentGatingPatch, now: string): Promise<Agent | null> {
    const found = await this.#transaction(async (client) => {
      const { rowCount } = await client.query(
        `UPDATE agents SET require_tool_confirmation = COALESCE($2, require_tool_confirmation),
           pause_ttl_seconds = COALESCE($3, pause_ttl_seconds), allow_edit = COALESCE($5, allow_edit),
           gating_set_by_api = true, updated_at = $4
         WHERE id = $1`,
        [id, patch.requireToolConfirmation ?? null, patch.pauseTtlSeconds ?? null, now, patch.allowEdit ?? null],
      );
      if (rowCount !== 1) return false;
      // One statement per tool named (an admin's change, rare): each sets only what the patch names for it.
      for (const { toolId, set } of overrideChanges(patch)) {
        const columns = Object.keys(set).map((key) => OVERRIDE_COLUMNS[key as keyof typeof set]);
        await client.query(
          `INSERT INTO agent_tool_overrides (agent_id, tool_id, mode, rules, allow_edit)
           VALUES ($1, $2, COALESCE($3, 'BY_ANNOTATION'), $4::jsonb, $5)
           ON CONFLICT (agent_id, tool_id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`,
          [id, toolId, set.mode ?? null, set.rules ? json(set.rules) : null, set.allowEdit ?? null],
        );
      }
      return true;
    });
    return found ? this.getAgent(id) : null;
  }

  // ---- reads ---------------------------------------------------------------------------------------------

  async getThread(id: string, ownerId: string): Promise<ThreadRecord | null> {
    const { rows } = await run(this.pool, Q.ownedThread, [id, ownerId]);
    return rows[0] ? threadRecord(rows[0]) : null;
  }

  async listThreads(
    ownerId: string,
    agentId: string | null,
    first: number,
    after: string | null,
    newestFirst = false,
  ): Promise<Page<ThreadRecord>> {
    const bound = seqBound(decodeCursor(after), newestFirst);
    const page = newestFirst ? Q.threadPageNewest : Q.threadPage;
    const { rows } = await run(this.pool, page, [ownerId, agentId, bound, first + 1]);
    return buildPage(rows.map(withSeq), first, threadRecord);
  }

  async getTurn(id: string, ownerId: string): Promise<TurnRecord | null> {
    const { rows } = await run(this.pool, Q.ownedTurn, [id, ownerId]);
    return rows[0] ? turnRecord(rows[0]) : null;
  }

  async loadTurn(id: string): Promise<TurnRecord | null> {
    const { rows } = await run(this.pool, Q.turn, [id]);
    return rows[0] ? turnRecord(rows[0]) : null;
  }

  async listTurns(threadId: string): Promise<TurnRecord[]> {
    return (await run(this.pool, Q.threadTurns, [threadId])).rows.map(turnRecord);
  }

  async listThreadMessages(threadId: string): Promise<MessageRecord[]> {
    return (await run(this.pool, Q.threadMessages, [threadId])).rows.map(messageRecord);
  }

  async listTurnMessages(turnId: string): Promise<MessageRecord[]> {
    return (await run(this.pool, Q.turnMessages, [turnId])).rows.map(messageRecord);
  }

  async getElicitation(id: string, ownerId: string): Promise<ElicitationRecord | null> {
    const { rows } = await run(this.pool, Q.ownedElicitation, [id, ownerId]);
    return rows[0] ? elicitationRecord(rows[0]) : null;
  }

  async listTurnElicitations(turnId: string): Promise<ElicitationRecord[]> {
    return (await run(this.pool, Q.turnElicitations, [turnId])).rows.map(elicitationRecord);
  }

  async loadTurns(ids: readonly string[]): Promise<TurnRecord[]> {
    return (await run(this.pool, Q.turnsByIds, [ids])).rows.map(turnRecord);
  }

  async loadThreads(ids: readonly string[]): Promise<ThreadRecord[]> {
    return (await run(this.pool, Q.threadsByIds, [ids])).rows.map(threadRecord);
  }

  async listMessagesOfTurns(turnIds: readonly string[]): Promise<MessageRecord[]> {
    return (await run(this.pool, Q.messagesOfTurns, [turnIds])).rows.map(messageRecord);
  }

  async listMessagesOfThreads(threadIds: readonly string[]): Promise<MessageRecord[]> {
    return (await run(this.pool, Q.messagesOfThreads, [threadIds])).rows.map(messageRecord);
  }

  async listTurnsOfThreads(threadIds: readonly string[]): Promise<TurnRecord[]> {
    return (await run(this.pool, Q.turnsOfThreads, [threadIds])).rows.map(turnRecord);
  }

  async listElicitationsOfTurns(turnIds: readonly string[]): Promise<ElicitationRecord[]> {
    return (await run(this.pool, Q.elicitationsOfTurns, [turnIds])).rows.map(elicitationRecord);
  }

  async listPendingElicitations(
    ownerId: string,
    filter: { threadId?: string | null; agentId?: string | null },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }> {
    const params = [ownerId, now, filter.threadId ?? null, filter.agentId ?? null];
    const afterSeq = decodeCursor(after);
    const { rows } = await run(this.pool, Q.pendingPage, [...params, afterSeq, first + 1]);
    const count = pageHoldsAll(afterSeq, rows.length, first)
      ? rows.length
      : Number((await run(this.pool, Q.pendingCount, params)).rows[0]!.count);
    return { ...buildPage(rows.map(withSeq), first, elicitationRecord), totalCount: count };
  }

  async listElicitations(
    ownerId: string,
    filter: { threadId?: string | null; agentId?: string | null; statuses?: ElicitationStatus[] | null },
    now: string,
    first: number,
    after: string | null,
    newestFirst = false,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }> {
    const afterSeq = decodeCursor(after);
    const queries = this.#auditQueries(filter.statuses ?? null);
    const params = [ownerId, now, filter.threadId ?? null, filter.agentId ?? null];
    const page = newestFirst ? queries.pageNewest : queries.page;
    const { rows } = await run(this.pool, page, [...params, seqBound(afterSeq, newestFirst), first + 1]);
    const count = pageHoldsAll(afterSeq, rows.length, first)
      ? rows.length
      : Number((await run(this.pool, queries.count, params)).rows[0]!.count);
    return { ...buildPage(rows.map(withSeq), first, elicitationRecord), totalCount: count };
  }

  /** The audit list's statements for one status filter (deduplicated, sorted), named and built on first use. */
  #auditQueries(statuses: ElicitationStatus[] | null): { page: Statement; pageNewest: Statement; count: Statement } {
    const shape = statuses && [...new Set(statuses)].sort();
    const key = shape?.join('_') ?? 'all';
    let queries = this.#auditStatements.get(key);
    if (!queries) {
      // As read now (storedConditionsFor, src/domain/expiry.ts): a PENDING row past its expiry is EXPIRED.
      const asRead = (status: ElicitationStatus) =>
        storedConditionsFor(status)
          .map(
            ({ status, pastExpiry }) =>
              `(status = '${status}'${pastExpiry === undefined ? '' : pastExpiry ? ' AND expires_at <= $2' : ' AND expires_at > $2'})`,
          )
          .join(' OR ');
      const where = `owner_id = $1 AND ($3::text IS NULL OR thread_id = $3) AND ($4::text IS NULL OR agent_id = $4)
        AND ($2::timestamptz IS NOT NULL)${shape ? ` AND (${shape.map(asRead).join(' OR ') || 'false'})` : ''}`;
      queries = {
        page: statement(
          `audit_page_${key}`,
          `SELECT * FROM elicitations WHERE ${where} AND seq > $5 ORDER BY seq LIMIT $6`,
        ),
        // Newest first: $5 is the seq the page reads back from.
        pageNewest: statement(
          `audit_page_newest_${key}`,
          `SELECT * FROM elicitations WHERE ${where} AND seq < $5 ORDER BY seq DESC LIMIT $6`,
        ),
        count: statement(`audit_count_${key}`, `SELECT count(*) AS count FROM elicitations WHERE ${where}`),
      };
      this.#auditStatements.set(key, queries);
    }
    return queries;
  }

  // ---- the loop's atomic steps -----------------------------------------------------------------------------

  async startTurn(
    input: {
      turnId: string;
      newThreadId: string;
      threadId: string | null;
      agentId: string;
      ownerId: string;
      message: string;
      now: string;
      lease?: TurnLease;
      idempotencyKey?: string;
    },
    closeStep: CloseStep,
  ): Promise<StartTurnResult> {
    try {
      return await this.#transaction(async (client): Promise<StartTurnResult> => {
        const { now } = input;
        // The key first, before any other lock: a second start with the key waits here until the first commits (or
        // rolls back), then finds its turn; taken later, it would find the thread busy with that very turn.
        if (input.idempotencyKey !== undefined) {
          const prior = await this.#claimIdempotencyKey(client, { ...input, idempotencyKey: input.idempotencyKey });
          if (prior) return prior;
        }
        // The agent as committed now: the turn runs with it (a gating change committed before this applies).
        const agentRow = (await run(client, Q.agent, [input.agentId])).rows[0];
        if (!agentRow) throw new StartRefused('AGENT_NOT_FOUND');
        let thread: ThreadRecord;
        let superseded: TurnRecord | null = null;
        // The thread's row lock: two turns started on one thread at once go one after the other, and the second
        // sees the first's turn as active.
        const found =
          input.threadId !== null
            ? (await run(client, Q.lockOwnedThread, [input.threadId, input.ownerId])).rows[0]
            : undefined;
        const where = decideThread(input, found ? threadRecord(found) : null);
        if (where.kind === 'refuse') throw new StartRefused(where.code);
        if (where.kind === 'existing') {
          thread = where.thread;
          const active = (await run(client, Q.lockActiveTurn, [thread.id])).rows[0];
          const decision = decideActiveTurn(active ? turnRecord(active) : null, now);
          if (decision.kind === 'refuse') throw new StartRefused(decision.code);
          if (decision.kind === 'supersede') {
            superseded = await this.#closePausedTurn(client, turnRecord(active!), decision.reason, closeStep, now);
          }
        } else {
          await run(client, Q.insertThread, [input.newThreadId, input.agentId, input.ownerId, now]);
          thread = { id: input.newThreadId, agentId: input.agentId, ownerId: input.ownerId, createdAt: now };
        }
        const turn = (
          await run(client, Q.insertTurn, [
            input.turnId,
            thread.id,
            input.agentId,
            input.ownerId,
            now,
            input.lease?.owner ?? null,
            input.lease?.until ?? null,
          ])
        ).rows[0]!;
        const message = await this.#appendMessage(
          client,
          input.turnId,
          thread.id,
          { role: 'USER', text: input.message, toolCalls: [], toolCallId: null },
          now,
        );
        return { ok: true, thread, turn: turnRecord(turn), superseded, agent: agentRecord(agentRow), message };
      });
    } catch (error) {
      // The partial unique index: another instance started a turn on this thread in between.
      if (sqlState(error) === '23505' && constraint(error) === 'turns_one_active_per_thread') {
        return { ok: false, code: 'THREAD_BUSY' };
      }
      // A refusal rolled its transaction back: a key it claimed is not kept.
      return refusalOf(error);
    }
  }

  /**
   * Claims the owner's idempotency key for this request's turn; null once claimed. The primary key makes a claim by a
   * transaction still open wait for its end. Claimed before: the result that request gets again (its turn as it is
   * now: READ COMMITTED, each statement sees what committed before it), or IDEMPOTENCY_KEY_REUSED.
   */
  async #claimIdempotencyKey(
    client: pg.PoolClient,
    input: {
      idempotencyKey: string;
      ownerId: string;
      agentId: string;
      threadId: string | null;
      message: string;
      turnId: string;
      newThreadId: string;
      now: string;
    },
  ): Promise<StartTurnResult | null> {
    const fingerprint = startTurnFingerprint(input);
    const key = [input.ownerId, input.idempotencyKey];
    const { rowCount } = await run(client, Q.claimIdempotencyKey, [
      ...key,
      fingerprint,
      input.turnId,
      input.threadId ?? input.newThreadId,
      input.now,
    ]);
    if (rowCount) return null;
    const prior = (await run(client, Q.idempotencyKey, key)).rows[0]!;
    if (prior.fingerprint !== fingerprint) return { ok: false, code: 'IDEMPOTENCY_KEY_REUSED' };
    const turn = (await run(client, Q.turn, [prior.turn_id])).rows[0]!;
    const thread = (await run(client, Q.ownedThread, [prior.thread_id, input.ownerId])).rows[0]!;
    return { ok: true, replayed: true, thread: threadRecord(thread), turn: turnRecord(turn) };
  }

  // The loop's writes: each is ONE statement (data-modifying CTEs), atomic without BEGIN/COMMIT, so a step of the loop
  // costs one round trip. Each first locks the turn's row only while `leaseOwner` holds the lease (the lease check is
  // in the WHERE of that first part; no row: LeaseLostError, nothing written), so a takeover (claimTurn) waits for it
  // and no write lands after another process took the turn. Without `leaseOwner` the same statements run unconditioned.

  async appendAssistantMessage(
    turnId: string,
    message: ChatMessage,
    now: string,
    iterations?: number,
    leaseOwner?: string,
  ): Promise<MessageRecord> {
    const id = newId('msg');
    const { rows } = await run(this.pool, Q.appendAssistant, [
      turnId,
      leaseOwner ?? null,
      iterations ?? null,
      now,
      id,
      message.role,
      message.text,
      message.toolCalls.length ? json(message.toolCalls) : null,
      message.toolCallId,
    ]);
    if (!rows[0]) throw loopWriteRefused(turnId, leaseOwner);
    return { ...message, id, threadId: String(rows[0].thread_id), turnId, createdAt: now };
  }

  async appendToolMessages(
    turnId: string,
    drafts: ToolMessageDraft[],
    now: string,
    leaseOwner?: string,
  ): Promise<void> {
    if (drafts.length === 0) return;
    const { rows } = await run(this.pool, Q.appendToolMessages, [
      turnId,
      leaseOwner ?? null,
      now,
      drafts.map(() => newId('msg')),
      drafts.map((d) => d.text),
      drafts.map((d) => d.toolCallId),
    ]);
    if (!rows[0]) throw loopWriteRefused(turnId, leaseOwner);
  }

  async markToolStarted(
    turnId: string,
    toolCallId: string,
    now: string,
    leaseOwner?: string,
    grantId?: string,
  ): Promise<boolean> {
    // Durable when it returns: every connection runs with synchronous_commit = on (PostgresStore.open).
    const start = async (client: Client) => {
      const { rows } = await run(client, Q.startTool, [turnId, leaseOwner ?? null, toolCallId, now, grantId ?? null]);
      if (!rows[0]) throw loopWriteRefused(turnId, leaseOwner);
      return Number(rows[0].started) === 1;
    };
    if (grantId === undefined) return start(this.pool);
    return this.#transaction(async (client) => {
      // FOR SHARE: a revoke (an UPDATE of the row) waits for this start to commit, or this waits for the revoke and
      // then reads it revoked. Either way the call starts only under a grant that held when it started.
      const row = (await run(client, Q.lockGrant, [grantId])).rows[0];
      // A call started before (a crash mid-run) reports so, whatever became of its grant since; only a new start
      // needs the grant to hold.
      const startedBefore = (await run(client, Q.toolStartedBefore, [turnId, toolCallId])).rows.length > 0;
      if (!startedBefore && (!row || grantStateAt(grantRecord(row), now) !== 'ACTIVE')) {
        throw new GrantLapsedError(grantId);
      }
      return start(client);
    });
  }

  async finishTool(turnId: string, draft: ToolMessageDraft, now: string, leaseOwner?: string): Promise<void> {
    const { rows } = await run(this.pool, Q.finishTool, [
      turnId,
      leaseOwner ?? null,
      draft.toolCallId,
      now,
      newId('msg'),
      draft.text,
    ]);
    if (!rows[0]) throw loopWriteRefused(turnId, leaseOwner);
  }

  async pauseTurn(
    turnId: string,
    step: PendingStep,
    drafts: ElicitationDraft[],
    text: string,
    expiresAt: string,
    now: string,
    leaseOwner?: string,
    answer?: StepAnswer,
  ): Promise<{ turn: TurnRecord; elicitations: ElicitationRecord[] }> {
    // With webhooks the statement and the outbox rows commit together in a transaction; without, one statement.
    return this.#withWebhookEvents(async (client) => {
      const { rows } = await run(client, Q.pauseTurn, [
        turnId,
        leaseOwner ?? null,
        json(step),
        text,
        expiresAt,
        now,
        drafts.map((d) => d.id),
        drafts.map((d) => d.toolCallId),
        drafts.map((d) => json(d.request)),
        drafts.map((d) => json(d.toolCall)),
        answer?.iterations ?? null,
        ...answerMessageParams(answer),
      ]);
      if (!rows[0]) throw loopWriteRefused(turnId, leaseOwner);
      const turn = turnRecord(rows[0]);
      // As stored: json() made them storable.
      const stored = drafts.map((d) => ({
        ...d,
        request: toStorableJson(d.request),
        toolCall: toStorableJson(d.toolCall),
      }));
      const created = pausedElicitations(turn, stored, now, expiresAt);
      if (this.#webhooks) await this.#writeWebhookEvents(client, elicitationsRequested(created, now), now);
      return { turn, elicitations: created };
    });
  }

  async finishTurn(
    turnId: string,
    status: 'COMPLETED' | 'FAILED' | 'CANCELLED',
    fields: { text?: string | null; error?: string | null; answer?: StepAnswer },
    now: string,
    leaseOwner?: string,
  ): Promise<TurnRecord> {
    const answer = fields.answer;
    return this.#withWebhookEvents(async (client) => {
      const { rows } = await run(client, Q.finishTurn, [
        turnId,
        leaseOwner ?? null,
        status,
        fields.text ?? null,
        fields.error ?? null,
        now,
        answer?.iterations ?? null,
        ...answerMessageParams(answer),
      ]);
      if (!rows[0]) throw loopWriteRefused(turnId, leaseOwner);
      const turn = turnRecord(rows[0]);
      if (this.#webhooks) await this.#writeWebhookEvents(client, turnEnded(turn, now), now);
      return turn;
    });
  }

  async setIterations(turnId: string, iterations: number, now: string, leaseOwner?: string): Promise<void> {
    const { rows } = await run(this.pool, Q.touchTurn, [turnId, leaseOwner ?? null, iterations, now]);
    if (!rows[0]) throw loopWriteRefused(turnId, leaseOwner);
  }

  async resolveElicitation(input: AnswerInput, closeStep: CloseStep): Promise<ResolveResult> {
    return this.#transaction(async (client): Promise<ResolveResult> => {
      const { now, answer } = input;
      // Lock the turn first, then read its requests: answers to one turn (from any instance), the sweeper and a new
      // message on its thread all wait for each other here, and each sees what the one before it committed.
      const turnRow = (await run(client, Q.lockTurnOfElicitation, [input.elicitationId, input.ownerId])).rows[0];
      const ofTurn = turnRow ? (await run(client, Q.turnElicitations, [turnRow.id])).rows.map(elicitationRecord) : [];
      const found = ofTurn.find((e) => e.id === input.elicitationId && e.ownerId === input.ownerId) ?? null;
      const decision = decideAnswer(found, answer, now);
      if (decision.kind === 'not_found' || !found || !turnRow) return { kind: 'not_found' };
      const turn = turnRecord(turnRow);
      const current = async () => ({
        elicitation: elicitationRecord((await run(client, Q.elicitation, [found.id])).rows[0]!),
        turn: turnRecord((await run(client, Q.turn, [turn.id])).rows[0]!),
      });
      switch (decision.kind) {
        case 'duplicate':
        case 'already_resolved':
          return { kind: decision.kind, elicitation: found, turn };
        case 'expired':
          if (decision.expireTurn) await this.#closePausedTurn(client, turn, 'expired', closeStep, now);
          return { kind: 'expired', ...(await current()), changed: decision.expireTurn };
      }
      // An ACCEPT that asks to remember records its grant in the same transaction as the answer.
      const { columns, grant } = recordedAnswer(found, answer, input.grantId, now);
      if (grant) await run(client, Q.insertGrant, grantValues(grant));
      const answered = (
        await run(client, Q.answer, [
          found.id,
          decision.status,
          answer.action,
          jsonOrNull(columns.content),
          input.ownerId,
          now,
          jsonOrNull(columns.arguments),
          jsonOrNull(columns.remember),
        ])
      ).rows[0]!;
      const elicitation = elicitationRecord(answered);
      if (this.#webhooks)
        await this.#writeWebhookEvents(client, elicitationsClosed([elicitation], 'ANSWERED', now), now);
      if (decision.then === 'cancel_turn') {
        await this.#closePausedTurn(client, turn, 'cancelled', closeStep, now);
        return { kind: 'cancelled', ...(await current()) };
      }
      const elicitations = ofTurn.map((e) => (e.id === elicitation.id ? elicitation : e));
      if (!resumesTurn(elicitations.some((e) => e.status === 'PENDING'))) {
        return { kind: 'recorded', elicitation, turn };
      }
      // The claim: only one caller moves the turn from PAUSED to RUNNING (the row is locked; the WHERE re-checks).
      const resumed = (
        await run(client, Q.resumeTurn, [turn.id, now, input.lease?.owner ?? null, input.lease?.until ?? null])
      ).rows[0];
      if (!resumed) return { kind: 'recorded', elicitation, turn };
      return { kind: 'resume', elicitation, turn: turnRecord(resumed), elicitations };
    });
  }

  async expireDueTurns(now: string, limit: number, closeStep: CloseStep): Promise<TurnRecord[]> {
    return this.#transaction(async (client) => {
      // SKIP LOCKED: a turn another instance is expiring, or that an answer holds, is left to them.
      const due = (await run(client, Q.lockDueTurns, [now, limit])).rows;
      const expired: TurnRecord[] = [];
      for (const row of due)
        expired.push(await this.#closePausedTurn(client, turnRecord(row), 'expired', closeStep, now));
      return expired;
    });
  }

  async listRunningTurns(): Promise<TurnRecord[]> {
    return (await run(this.pool, Q.runningTurns, [])).rows.map(turnRecord);
  }

  async listUnfinishedToolCalls(turnId: string): Promise<string[]> {
    return (await run(this.pool, Q.unfinishedToolCalls, [turnId])).rows.map((r) => String(r.tool_call_id));
  }

  async listRunningLeases(): Promise<RunningTurnLease[]> {
    return (await run(this.pool, Q.runningLeases, [])).rows.map((r) => ({
      turnId: String(r.id),
      owner: (r.lease_owner as string | null) ?? null,
      expiresAt: iso(r.lease_expires_at),
      recoveries: Number(r.recoveries),
    }));
  }

  async claimTurn(
    turnId: string,
    expectedOwner: string | null,
    lease: TurnLease,
    now: string,
  ): Promise<{ turn: TurnRecord; recoveries: number } | null> {
    // Compare-and-swap in one UPDATE: of several instances, the first to lock the row wins; the others re-check
    // the WHERE against its new owner and change nothing.
    const { rows } = await run(this.pool, Q.claimTurn, [turnId, expectedOwner, lease.owner, lease.until, now]);
    return rows[0] ? { turn: turnRecord(rows[0]), recoveries: Number(rows[0].recoveries) } : null;
  }

  async renewLeases(owner: string, until: string, now: string): Promise<number> {
    void now;
    return (await run(this.pool, Q.renewLeases, [owner, until])).rowCount ?? 0;
  }

  async holdsLease(turnId: string, owner: string): Promise<boolean> {
    return (await run(this.pool, Q.leaseOwner, [turnId])).rows[0]?.lease_owner === owner;
  }

  async deleteDeliveredWebhooks(before: string, limit: number): Promise<number> {
    return (await run(this.pool, Q.deleteDeliveredWebhooks, [before, limit])).rowCount ?? 0;
  }

  async deleteLapsedGrants(before: string, limit: number): Promise<number> {
    return (await run(this.pool, Q.deleteLapsedGrants, [before, limit])).rowCount ?? 0;
  }

  async deleteExpiredElicitations(before: string, limit: number): Promise<number> {
    return (await run(this.pool, Q.deleteExpiredElicitations, [before, limit])).rowCount ?? 0;
  }

  async deleteIdempotencyKeys(before: string, limit: number): Promise<number> {
    return (await run(this.pool, Q.deleteIdempotencyKeys, [before, limit])).rowCount ?? 0;
  }

  async countPendingElicitations(now: string): Promise<number> {
    return Number((await run(this.pool, Q.allPendingCount, [now])).rows[0]!.count);
  }

  // ---- remembered approvals ---------------------------------------------------------------------------------

  async listGrantCandidates(ownerId: string, agentId: string, toolId: string): Promise<ApprovalGrantRecord[]> {
    return (await run(this.pool, Q.grantCandidates, [ownerId, agentId, toolId])).rows.map(grantRecord);
  }

  async getApprovalGrant(id: string, ownerId: string): Promise<ApprovalGrantRecord | null> {
    const row = (await run(this.pool, Q.grant, [id, ownerId])).rows[0];
    return row ? grantRecord(row) : null;
  }

  async listApprovalGrants(
    ownerId: string,
    filter: { agentId?: string | null; threadId?: string | null; activeOnly: boolean },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ApprovalGrantRecord>> {
    const { rows } = await run(this.pool, Q.grantPage, [
      ownerId,
      decodeCursor(after),
      filter.agentId ?? null,
      filter.threadId ?? null,
      filter.activeOnly,
      now,
      first + 1,
    ]);
    return buildPage(rows.map(withSeq), first, grantRecord);
  }

  async revokeApprovalGrant(id: string, ownerId: string, now: string): Promise<ApprovalGrantRecord | null> {
    return this.#transaction(async (client) => {
      // The row lock first: a start under this grant holds it FOR SHARE until it commits, so the uses read next
      // include every start that committed before this revoke.
      const row = (await run(client, Q.lockGrantForRevoke, [id, ownerId])).rows[0];
      if (!row) return null;
      const grant = grantRecord(row);
      const lastUse = (await run(client, Q.lastGrantUse, [id])).rows[0]?.started_at;
      const revokedAt = revokedAtFor(grant, iso(lastUse), now);
      if (grant.revokedAt === null) await run(client, Q.revokeGrant, [id, revokedAt]);
      return { ...grant, revokedAt };
    });
  }

  async listGrantUses(grantIds: readonly string[]): Promise<GrantUseRecord[]> {
    if (grantIds.length === 0) return [];
    return (await run(this.pool, Q.grantUses, [grantIds])).rows.map((row) => ({
      grantId: String(row.grant_id),
      turnId: String(row.turn_id),
      toolCallId: String(row.tool_call_id),
      startedAt: iso(row.started_at)!,
    }));
  }

  async ping(): Promise<string | null> {
    const { rows } = await run(this.pool, Q.newestMigration, []);
    const applied = rows[0]?.applied === null || rows[0]?.applied === undefined ? 0 : Number(rows[0].applied);
    if (applied < this.#newestMigration) return 'migrations not applied';
    return rows[0]!.synchronous_commit === 'off' ? 'synchronous_commit is off' : null;
  }

  #closing: Promise<void> | null = null;

  /** Ends the pool once; later calls wait for the same end. */
  close(): Promise<void> {
    return (this.#closing ??= this.pool.end());
  }

  // ---- webhooks (docs/webhooks.md) ---------------------------------------------------------------------------

  async claimWebhookDeliveries(
    owner: string,
    endpoints: readonly string[],
    now: string,
    until: string,
    limit: number,
  ): Promise<WebhookDeliveryRecord[]> {
    if (endpoints.length === 0) return [];
    const { rows } = await run(this.pool, Q.claimWebhookDeliveries, [owner, endpoints, now, until, limit]);
    return rows
      .map(withSeq)
      .sort((a, b) => a.seq - b.seq)
      .map(webhookDeliveryRecord);
  }

  async recordWebhookAttempt(id: string, owner: string, outcome: WebhookAttemptOutcome, now: string): Promise<boolean> {
    const changes = attemptChanges(outcome, now);
    const { rowCount } = await run(this.pool, Q.recordWebhookAttempt, [
      id,
      owner,
      changes.status,
      changes.counted,
      changes.nextAttemptAt,
      changes.lastError,
      changes.lastStatusCode,
      changes.finishedAt,
    ]);
    return rowCount === 1;
  }

  async listWebhookDeliveries(
    filter: { status?: WebhookDeliveryStatus | null },
    first: number,
    after: string | null,
  ): Promise<Page<WebhookDeliveryRecord> & { totalCount: number }> {
    const afterSeq = decodeCursor(after);
    const status = filter.status ?? null;
    const { rows } = await run(this.pool, Q.webhookDeliveryPage, [status, afterSeq, first + 1]);
    const count = pageHoldsAll(afterSeq, rows.length, first)
      ? rows.length
      : Number((await run(this.pool, Q.webhookDeliveryCount, [status])).rows[0]!.count);
    return { ...buildPage(rows.map(withSeq), first, webhookDeliveryRecord), totalCount: count };
  }

  // ---- helpers (inside a transaction) ------------------------------------------------------------------------

  /** PAUSED turn (its row locked) to CANCELLED or EXPIRED, as closePausedTurn (src/domain/turn-rules.ts) decides. */
  async #closePausedTurn(
    client: pg.PoolClient,
    turn: TurnRecord,
    reason: CloseReason,
    closeStep: CloseStep,
    now: string,
  ): Promise<TurnRecord> {
    const stored = (await run(client, Q.turnElicitations, [turn.id])).rows.map(elicitationRecord);
    const closing = closePausedTurn(turn, stored, reason, closeStep);
    if (closing.closeElicitations.length) {
      await run(client, Q.closeElicitations, [closing.closeElicitations, closing.status, now]);
    }
    if (this.#webhooks) await this.#writeWebhookEvents(client, elicitationsClosedBy(stored, closing, reason, now), now);
    await this.#appendToolMessages(client, turn.id, turn.threadId, closing.toolMessages, now);
    return turnRecord((await run(client, Q.closeTurn, [turn.id, closing.status, now])).rows[0]!);
  }

  /**
   * A loop write that is one statement without webhooks (`work` runs on the pool: one round trip) and a transaction
   * with them, so that its outbox rows commit with it.
   */
  #withWebhookEvents<T>(work: (client: Client) => Promise<T>): Promise<T> {
    return this.#webhooks ? this.#transaction(work) : work(this.pool);
  }

  /** The outbox rows of a change's events, for the subscribed endpoints, in the change's transaction. */
  async #writeWebhookEvents(client: Client, events: WebhookEvent[], now: string): Promise<void> {
    const rows = outboxRows(events, this.#webhooks!.subscriptions, now);
    if (rows.length === 0) return;
    await run(client, Q.insertWebhookDeliveries, [
      rows.map((r) => r.id),
      rows.map((r) => r.endpoint),
      rows.map((r) => r.eventType),
      rows.map((r) => json(r.payload)),
      now,
    ]);
    this.#wroteWebhooks.add(client as pg.PoolClient);
  }

  /** Each call's one TOOL message; a second one for the same call (two instances racing on a turn) is dropped. */
  async #appendToolMessages(
    client: pg.PoolClient,
    turnId: string,
    threadId: string,
    drafts: ToolMessageDraft[],
    now: string,
  ): Promise<void> {
    if (drafts.length === 0) return;
    await run(client, Q.insertToolMessages, [
      drafts.map(() => newId('msg')),
      threadId,
      turnId,
      drafts.map((d) => d.text),
      drafts.map((d) => d.toolCallId),
      now,
    ]);
  }

  async #appendMessage(
    client: pg.PoolClient,
    turnId: string,
    threadId: string,
    message: ChatMessage,
    now: string,
  ): Promise<MessageRecord> {
    const id = newId('msg');
    await run(client, Q.insertMessage, [
      id,
      threadId,
      turnId,
      message.role,
      message.text,
      message.toolCalls.length ? json(message.toolCalls) : null,
      message.toolCallId,
      now,
    ]);
    return { ...message, id, threadId, turnId, createdAt: now };
  }
}

/**
 * Runs a named statement. Strings are bound storable (src/domain/text.ts): PostgreSQL refuses NUL characters and unpaired
 * surrogates, which the API refuses from users but a model or tool may still produce, and an id a client made up may
 * hold (a lookup of it then finds nothing, as on SQLite).
 */
function run(client: Client, query: Statement, values: unknown[]): Promise<pg.QueryResult<Row>> {
  return client.query<Row>({ name: query.name, text: query.text, values: values.map(storableParameter) });
}

function storableParameter(value: unknown): unknown {
  if (typeof value === 'string') return toStorableText(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? toStorableText(item) : item));
  return value;
}

/** agent_tool_overrides columns by ToolOverrideRow key, for the updates that set only some of them. */
const OVERRIDE_COLUMNS = { mode: 'mode', rules: 'rules', allowEdit: 'allow_edit' } as const;

/** JSON for a jsonb parameter: JSON.stringify writes NUL and unpaired surrogates as \u escapes, which jsonb refuses. */
function json(value: unknown): string {
  return JSON.stringify(toStorableJson(value));
}

function jsonOrNull(value: unknown): string | null {
  return value === null ? null : json(value);
}

function sqlState(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function constraint(error: unknown): string | undefined {
  return (error as { constraint?: string }).constraint;
}

/** The statements of every path, named: pg prepares each once per pooled connection. */
const Q = {
  now: statement('now', 'SELECT now() AS now'),
  newestMigration: statement(
    'newest_migration',
    `SELECT (SELECT max(created_at) FROM drizzle.__drizzle_migrations) AS applied,
       current_setting('synchronous_commit') AS synchronous_commit`,
  ),
  agent: statement(
    'agent',
    `SELECT a.*, COALESCE((SELECT json_agg(json_build_array(o.tool_id, o.mode, o.rules, o.allow_edit))
       FROM agent_tool_overrides o WHERE o.agent_id = a.id), '[]') AS overrides FROM agents a WHERE a.id = $1`,
  ),
  agents: statement(
    'agents',
    `SELECT a.*, COALESCE((SELECT json_agg(json_build_array(o.tool_id, o.mode, o.rules, o.allow_edit))
       FROM agent_tool_overrides o WHERE o.agent_id = a.id), '[]') AS overrides FROM agents a ORDER BY a.id`,
  ),
  ownedThread: statement('owned_thread', 'SELECT * FROM threads WHERE id = $1 AND owner_id = $2'),
  lockOwnedThread: statement('lock_owned_thread', 'SELECT * FROM threads WHERE id = $1 AND owner_id = $2 FOR UPDATE'),
  threadPage: statement(
    'thread_page',
    `SELECT * FROM threads WHERE owner_id = $1 AND ($2::text IS NULL OR agent_id = $2) AND seq > $3
     ORDER BY seq LIMIT $4`,
  ),
  threadPageNewest: statement(
    'thread_page_newest',
    `SELECT * FROM threads WHERE owner_id = $1 AND ($2::text IS NULL OR agent_id = $2) AND seq < $3
     ORDER BY seq DESC LIMIT $4`,
  ),
  insertThread: statement(
    'insert_thread',
    'INSERT INTO threads (id, agent_id, owner_id, created_at) VALUES ($1, $2, $3, $4)',
  ),
  turn: statement('turn', 'SELECT * FROM turns WHERE id = $1'),
  // The API's batched reads (loaders).
  turnsByIds: statement('turns_by_ids', 'SELECT * FROM turns WHERE id = ANY($1::text[])'),
  threadsByIds: statement('threads_by_ids', 'SELECT * FROM threads WHERE id = ANY($1::text[])'),
  turnsOfThreads: statement('turns_of_threads', 'SELECT * FROM turns WHERE thread_id = ANY($1::text[]) ORDER BY seq'),
  messagesOfTurns: statement(
    'messages_of_turns',
    'SELECT * FROM messages WHERE turn_id = ANY($1::text[]) ORDER BY seq',
  ),
  messagesOfThreads: statement(
    'messages_of_threads',
    'SELECT * FROM messages WHERE thread_id = ANY($1::text[]) ORDER BY seq',
  ),
  elicitationsOfTurns: statement(
    'elicitations_of_turns',
    'SELECT * FROM elicitations WHERE turn_id = ANY($1::text[]) ORDER BY seq',
  ),
  ownedTurn: statement('owned_turn', 'SELECT * FROM turns WHERE id = $1 AND owner_id = $2'),
  // The loop's writes, one statement each: `held` locks the turn's row only while $2 (the lease owner; null: anyone)
  // holds its lease; the other parts write only if it did, and no row comes back if it did not.
  touchTurn: statement(
    'touch_turn',
    `UPDATE turns SET iterations = coalesce($3, iterations), updated_at = $4
     WHERE id = $1 AND ($2::text IS NULL OR (status = 'RUNNING' AND lease_owner = $2)) RETURNING thread_id`,
  ),
  appendAssistant: statement(
    'append_assistant',
    `WITH held AS (
       UPDATE turns SET iterations = coalesce($3, iterations), updated_at = $4
       WHERE id = $1 AND ($2::text IS NULL OR (status = 'RUNNING' AND lease_owner = $2)) RETURNING thread_id
     ), inserted AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
       SELECT $5, thread_id, $1, $6, $7, $8, $9, $4 FROM held
     )
     SELECT thread_id FROM held`,
  ),
  appendToolMessages: statement(
    'append_tool_messages',
    `WITH held AS (
       UPDATE turns SET updated_at = $3
       WHERE id = $1 AND ($2::text IS NULL OR (status = 'RUNNING' AND lease_owner = $2)) RETURNING thread_id
     ), inserted AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_call_id, created_at)
       SELECT m.id, held.thread_id, $1, 'TOOL', m.text, m.tool_call_id, $3
         FROM held, unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS m(id, text, tool_call_id, n)
         ORDER BY m.n
       ON CONFLICT (turn_id, tool_call_id) WHERE role = 'TOOL' DO NOTHING
     )
     SELECT thread_id FROM held`,
  ),
  startTool: statement(
    'start_tool',
    `WITH held AS (
       SELECT id FROM turns WHERE id = $1 AND ($2::text IS NULL OR (status = 'RUNNING' AND lease_owner = $2)) FOR UPDATE
     ), started AS (
       INSERT INTO tool_executions (turn_id, tool_call_id, started_at, grant_id) SELECT $1, $3, $4, $5 FROM held
       ON CONFLICT DO NOTHING RETURNING 1
     )
     SELECT (SELECT count(*) FROM started) AS started FROM held`,
  ),
  finishTool: statement(
    'finish_tool',
    `WITH held AS (
       SELECT thread_id FROM turns WHERE id = $1 AND ($2::text IS NULL OR (status = 'RUNNING' AND lease_owner = $2))
       FOR UPDATE
     ), finished AS (
       UPDATE tool_executions SET finished_at = $4 WHERE turn_id = $1 AND tool_call_id = $3 AND EXISTS (SELECT 1 FROM held)
     ), inserted AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_call_id, created_at)
       SELECT $5, thread_id, $1, 'TOOL', $6, $3, $4 FROM held
       ON CONFLICT (turn_id, tool_call_id) WHERE role = 'TOOL' DO NOTHING
     )
     SELECT thread_id FROM held`,
  ),
  pauseTurn: statement(
    'pause_turn',
    `WITH held AS (
       UPDATE turns SET status = 'PAUSED', step = $3, text = $4, expires_at = $5, updated_at = $6,
         iterations = coalesce($11, iterations)
       WHERE id = $1 AND ($2::text IS NULL OR (status = 'RUNNING' AND lease_owner = $2)) RETURNING *
     ), answer AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, created_at)
       SELECT $12, thread_id, $1, 'ASSISTANT', $13, $14, $6 FROM held WHERE $12::text IS NOT NULL
     ), inserted AS (
       INSERT INTO elicitations (id, turn_id, thread_id, agent_id, owner_id, tool_call_id, status, request, tool_call,
         created_at, expires_at)
       SELECT e.id, held.id, held.thread_id, held.agent_id, held.owner_id, e.tool_call_id, 'PENDING', e.request::jsonb,
         e.tool_call::jsonb, $6, $5
       FROM held, unnest($7::text[], $8::text[], $9::text[], $10::text[]) WITH ORDINALITY
         AS e(id, tool_call_id, request, tool_call, n)
       ORDER BY e.n
     )
     SELECT * FROM held`,
  ),
  finishTurn: statement(
    'finish_turn',
    `WITH held AS (
       UPDATE turns SET status = $3, text = $4, error = $5, step = NULL, expires_at = NULL, updated_at = $6,
         iterations = coalesce($7, iterations)
       WHERE id = $1 AND ($2::text IS NULL OR (status = 'RUNNING' AND lease_owner = $2)) RETURNING *
     ), answer AS (
       INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, created_at)
       SELECT $8, thread_id, $1, 'ASSISTANT', $9, $10, $6 FROM held WHERE $8::text IS NOT NULL
     )
     SELECT * FROM held`,
  ),
  lockTurnOfElicitation: statement(
    'lock_turn_of_elicitation',
    `SELECT t.* FROM turns t JOIN elicitations e ON e.turn_id = t.id WHERE e.id = $1 AND e.owner_id = $2
     FOR UPDATE OF t`,
  ),
  lockActiveTurn: statement(
    'lock_active_turn',
    `SELECT * FROM turns WHERE thread_id = $1 AND status IN ('RUNNING', 'PAUSED') LIMIT 1 FOR UPDATE`,
  ),
  threadTurns: statement('thread_turns', 'SELECT * FROM turns WHERE thread_id = $1 ORDER BY seq'),
  insertTurn: statement(
    'insert_turn',
    `INSERT INTO turns (id, thread_id, agent_id, owner_id, status, iterations, created_at, updated_at, lease_owner,
       lease_expires_at) VALUES ($1, $2, $3, $4, 'RUNNING', 0, $5, $5, $6, $7) RETURNING *`,
  ),
  resumeTurn: statement(
    'resume_turn',
    `UPDATE turns SET status = 'RUNNING', text = NULL, expires_at = NULL, updated_at = $2, lease_owner = $3,
       lease_expires_at = $4 WHERE id = $1 AND status = 'PAUSED' RETURNING *`,
  ),
  closeTurn: statement(
    'close_turn',
    'UPDATE turns SET status = $2, step = NULL, updated_at = $3 WHERE id = $1 RETURNING *',
  ),
  lockDueTurns: statement(
    'lock_due_turns',
    `SELECT * FROM turns WHERE status = 'PAUSED' AND expires_at <= $1 ORDER BY expires_at LIMIT $2
     FOR UPDATE SKIP LOCKED`,
  ),
  runningTurns: statement('running_turns', `SELECT * FROM turns WHERE status = 'RUNNING' ORDER BY seq`),
  runningLeases: statement(
    'running_leases',
    `SELECT id, lease_owner, lease_expires_at, recoveries FROM turns WHERE status = 'RUNNING' ORDER BY seq`,
  ),
  claimTurn: statement(
    'claim_turn',
    `UPDATE turns SET lease_owner = $3, lease_expires_at = $4, recoveries = recoveries + 1, updated_at = $5
     WHERE id = $1 AND status = 'RUNNING' AND lease_owner IS NOT DISTINCT FROM $2 RETURNING *`,
  ),
  renewLeases: statement(
    'renew_leases',
    `UPDATE turns SET lease_expires_at = $2 WHERE lease_owner = $1 AND status = 'RUNNING'`,
  ),
  leaseOwner: statement('lease_owner', `SELECT lease_owner FROM turns WHERE id = $1 AND status = 'RUNNING'`),
  threadMessages: statement('thread_messages', 'SELECT * FROM messages WHERE thread_id = $1 ORDER BY seq'),
  turnMessages: statement('turn_messages', 'SELECT * FROM messages WHERE turn_id = $1 ORDER BY seq'),
  insertMessage: statement(
    'insert_message',
    `INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  ),
  insertToolMessages: statement(
    'insert_tool_messages',
    `INSERT INTO messages (id, thread_id, turn_id, role, text, tool_call_id, created_at)
     SELECT id, $2, $3, 'TOOL', text, tool_call_id, $6 FROM unnest($1::text[], $4::text[], $5::text[])
       WITH ORDINALITY AS m(id, text, tool_call_id, n) ORDER BY n
     ON CONFLICT (turn_id, tool_call_id) WHERE role = 'TOOL' DO NOTHING`,
  ),
  elicitation: statement('elicitation', 'SELECT * FROM elicitations WHERE id = $1'),
  ownedElicitation: statement('owned_elicitation', 'SELECT * FROM elicitations WHERE id = $1 AND owner_id = $2'),
  turnElicitations: statement('turn_elicitations', 'SELECT * FROM elicitations WHERE turn_id = $1 ORDER BY seq'),
  answer: statement(
    'answer',
    `UPDATE elicitations SET status = $2, response_action = $3, response_content = $4, resolved_by = $5,
       resolved_at = $6, response_arguments = $7, response_remember = $8 WHERE id = $1 AND status = 'PENDING'
     RETURNING *`,
  ),
  toolStartedBefore: statement(
    'tool_started_before',
    'SELECT 1 FROM tool_executions WHERE turn_id = $1 AND tool_call_id = $2',
  ),
  lockGrant: statement('lock_grant', 'SELECT * FROM approval_grants WHERE id = $1 FOR SHARE'),
  insertGrant: statement(
    'insert_grant',
    `INSERT INTO approval_grants (id, owner_id, agent_id, scope, thread_id, tool_id, definition_hash, elicitation_id,
       created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
  ),
  grant: statement('grant', 'SELECT * FROM approval_grants WHERE id = $1 AND owner_id = $2'),
  // Asked for every gated call that would ask: the owner's unrevoked grants of the tool (approval_grants_lookup).
  grantCandidates: statement(
    'grant_candidates',
    `SELECT * FROM approval_grants WHERE owner_id = $1 AND agent_id = $2 AND tool_id = $3 AND revoked_at IS NULL
     ORDER BY seq`,
  ),
  // $5: only ACTIVE ones, as grantStateAt reads them at $6 (not revoked, not yet expired).
  grantPage: statement(
    'grant_page',
    `SELECT * FROM approval_grants WHERE owner_id = $1 AND seq > $2 AND ($3::text IS NULL OR agent_id = $3)
       AND ($4::text IS NULL OR thread_id = $4) AND (NOT $5::boolean OR (revoked_at IS NULL AND expires_at > $6))
     ORDER BY seq LIMIT $7`,
  ),
  lockGrantForRevoke: statement(
    'lock_grant_for_revoke',
    'SELECT * FROM approval_grants WHERE id = $1 AND owner_id = $2 FOR UPDATE',
  ),
  lastGrantUse: statement(
    'last_grant_use',
    'SELECT max(started_at) AS started_at FROM tool_executions WHERE grant_id = $1',
  ),
  revokeGrant: statement('revoke_grant', 'UPDATE approval_grants SET revoked_at = $2 WHERE id = $1'),
  grantUses: statement(
    'grant_uses',
    `SELECT grant_id, turn_id, tool_call_id, started_at FROM tool_executions WHERE grant_id = ANY($1::text[])
     ORDER BY started_at`,
  ),
  closeElicitations: statement(
    'close_elicitations',
    `UPDATE elicitations SET status = $2, resolved_at = $3 WHERE id = ANY($1::text[]) AND status = 'PENDING'`,
  ),
  // What is pending is PENDING as read at $2: storedConditionsFor('PENDING') (src/domain/expiry.ts).
  pendingPage: statement(
    'pending_page',
    `SELECT * FROM elicitations WHERE owner_id = $1 AND status = 'PENDING' AND expires_at > $2
       AND ($3::text IS NULL OR thread_id = $3) AND ($4::text IS NULL OR agent_id = $4) AND seq > $5
     ORDER BY seq LIMIT $6`,
  ),
  pendingCount: statement(
    'pending_count',
    `SELECT count(*) AS count FROM elicitations WHERE owner_id = $1 AND status = 'PENDING' AND expires_at > $2
       AND ($3::text IS NULL OR thread_id = $3) AND ($4::text IS NULL OR agent_id = $4)`,
  ),
  allPendingCount: statement(
    'all_pending_count',
    `SELECT count(*) AS count FROM elicitations WHERE status = 'PENDING' AND expires_at > $1`,
  ),
  // SKIP LOCKED: a row another instance is deleting, or (a grant) a start holds FOR SHARE, is left for later.
  deleteDeliveredWebhooks: statement(
    'delete_delivered_webhooks',
    `DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE status = 'DELIVERED'
       AND finished_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  ),
  deleteLapsedGrants: statement(
    'delete_lapsed_grants',
    `DELETE FROM approval_grants WHERE seq IN (SELECT seq FROM approval_grants
       WHERE COALESCE(revoked_at, expires_at) < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  ),
  deleteIdempotencyKeys: statement(
    'delete_idempotency_keys',
    `DELETE FROM idempotency_keys WHERE (owner_id, key) IN (SELECT owner_id, key FROM idempotency_keys
       WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  ),
  claimIdempotencyKey: statement(
    'claim_idempotency_key',
    `INSERT INTO idempotency_keys (owner_id, key, fingerprint, turn_id, thread_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
  ),
  idempotencyKey: statement(
    'idempotency_key',
    'SELECT fingerprint, turn_id, thread_id FROM idempotency_keys WHERE owner_id = $1 AND key = $2',
  ),
  deleteExpiredElicitations: statement(
    'delete_expired_elicitations',
    `DELETE FROM elicitations WHERE seq IN (SELECT seq FROM elicitations WHERE status = 'EXPIRED' AND expires_at < $1
       LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  ),
  unfinishedToolCalls: statement(
    'unfinished_tool_calls',
    'SELECT tool_call_id FROM tool_executions WHERE turn_id = $1 AND finished_at IS NULL ORDER BY started_at',
  ),
  // Webhooks (docs/webhooks.md): nothing of these runs on a change's path unless an endpoint subscribes to its events.
  insertWebhookDeliveries: statement(
    'insert_webhook_deliveries',
    `INSERT INTO webhook_deliveries (id, endpoint, event_type, payload, status, attempts, next_attempt_at, created_at)
     SELECT d.id, d.endpoint, d.event_type, d.payload::jsonb, 'PENDING', 0, $5, $5
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS d(id, endpoint, event_type, payload, n)
     ORDER BY d.n`,
  ),
  // SKIP LOCKED: rows another instance is claiming right now are left to it; a claim that lapsed is taken over.
  claimWebhookDeliveries: statement(
    'claim_webhook_deliveries',
    `WITH due AS (
       SELECT seq FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= $3
         AND (locked_until IS NULL OR locked_until <= $3) AND endpoint = ANY($2::text[])
       ORDER BY seq LIMIT $5 FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries w SET locked_by = $1, locked_until = $4 FROM due WHERE w.seq = due.seq RETURNING w.*`,
  ),
  // A retry or a release keeps the row PENDING with its next time; delivered and failed end it. Only the holder.
  recordWebhookAttempt: statement(
    'record_webhook_attempt',
    `UPDATE webhook_deliveries SET status = $3, attempts = attempts + $4::int,
       next_attempt_at = coalesce($5::timestamptz, next_attempt_at),
       last_error = CASE WHEN $4::int = 1 THEN $6::text ELSE last_error END,
       last_status_code = CASE WHEN $4::int = 1 THEN $7::int ELSE last_status_code END,
       finished_at = $8::timestamptz, locked_by = NULL, locked_until = NULL
     WHERE id = $1 AND locked_by = $2 AND status = 'PENDING'`,
  ),
  webhookDeliveryPage: statement(
    'webhook_delivery_page',
    `SELECT * FROM webhook_deliveries WHERE ($1::text IS NULL OR status = $1) AND seq > $2 ORDER BY seq LIMIT $3`,
  ),
  webhookDeliveryCount: statement(
    'webhook_delivery_count',
    'SELECT count(*) AS count FROM webhook_deliveries WHERE ($1::text IS NULL OR status = $1)',
  ),
};

// ---- rows to records ---------------------------------------------------------------------------------------

function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/** Sequence numbers come back as strings (int8); pages need numbers. */
function withSeq(row: Row): Row & { seq: number } {
  return Object.assign(row, { seq: Number(row.seq) });
}

function agentRecord(row: Row): Agent {
  const overrides = row.overrides as [
    toolId: string,
    mode: ToolConfirmationMode,
    rules: ArgumentRule[] | null,
    allowEdit: boolean | null,
  ][];
  return {
    id: String(row.id),
    name: String(row.name),
    description: (row.description as string | null) ?? null,
    modelId: String(row.model_id),
    systemPrompt: String(row.system_prompt),
    toolIds: row.tool_ids as string[],
    requireToolConfirmation: Boolean(row.require_tool_confirmation),
    toolConfirmation: Object.fromEntries(overrides.map(([toolId, mode]) => [toolId, mode])),
    pauseTtlSeconds: Number(row.pause_ttl_seconds),
    maxIterations: Number(row.max_iterations),
    ...argumentRulesFromRows(
      Boolean(row.allow_edit),
      overrides.map(([toolId, , rules, allowEdit]) => ({ toolId, rules, allowEdit })),
    ),
  };
}

function threadRecord(row: Row): ThreadRecord {
  return {
    id: String(row.id),
    agentId: String(row.agent_id),
    ownerId: String(row.owner_id),
    createdAt: iso(row.created_at)!,
  };
}

function turnRecord(row: Row): TurnRecord {
  return {
    id: String(row.id),
    threadId: String(row.thread_id),
    agentId: String(row.agent_id),
    ownerId: String(row.owner_id),
    status: row.status as TurnRecord['status'],
    text: (row.text as string | null) ?? null,
    error: (row.error as string | null) ?? null,
    iterations: Number(row.iterations),
    // Validated, and upgraded if an earlier release wrote it: a malformed step fails naming the turn.
    step: row.step === null || row.step === undefined ? null : loadPendingStep(row.step, String(row.id)),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    expiresAt: iso(row.expires_at),
  };
}

function messageRecord(row: Row): MessageRecord {
  return {
    id: String(row.id),
    threadId: String(row.thread_id),
    turnId: String(row.turn_id),
    role: row.role as MessageRecord['role'],
    text: (row.text as string | null) ?? null,
    toolCalls: (row.tool_calls as MessageRecord['toolCalls'] | null) ?? [],
    toolCallId: (row.tool_call_id as string | null) ?? null,
    createdAt: iso(row.created_at)!,
  };
}

function elicitationRecord(row: Row): ElicitationRecord {
  return {
    id: String(row.id),
    turnId: String(row.turn_id),
    threadId: String(row.thread_id),
    agentId: String(row.agent_id),
    ownerId: String(row.owner_id),
    toolCallId: String(row.tool_call_id),
    status: row.status as ElicitationStatus,
    request: row.request as ElicitationRecord['request'],
    toolCall: row.tool_call as ElicitationRecord['toolCall'],
    response: row.response_action
      ? answerFromColumns(row.response_action as ElicitationAnswer['action'], {
          content: row.response_content,
          arguments: row.response_arguments,
          remember: row.response_remember,
        })
      : null,
    grantId: grantIdFromColumn(row.response_remember),
    resolvedBy: (row.resolved_by as string | null) ?? null,
    resolvedAt: iso(row.resolved_at),
    createdAt: iso(row.created_at)!,
    expiresAt: iso(row.expires_at)!,
  };
}

function grantRecord(row: Row): ApprovalGrantRecord {
  return {
    id: String(row.id),
    ownerId: String(row.owner_id),
    agentId: String(row.agent_id),
    scope: row.scope as ApprovalGrantRecord['scope'],
    threadId: (row.thread_id as string | null) ?? null,
    toolId: String(row.tool_id),
    definitionHash: String(row.definition_hash),
    elicitationId: String(row.elicitation_id),
    createdAt: iso(row.created_at)!,
    expiresAt: iso(row.expires_at)!,
    revokedAt: iso(row.revoked_at),
  };
}

function grantValues(grant: ApprovalGrantRecord): unknown[] {
  return [
    grant.id,
    grant.ownerId,
    grant.agentId,
    grant.scope,
    grant.threadId,
    grant.toolId,
    grant.definitionHash,
    grant.elicitationId,
    grant.createdAt,
    grant.expiresAt,
    grant.revokedAt,
  ];
}
// ---- webhooks (docs/webhooks.md) -----------------------------------------------------------------------------

function webhookDeliveryRecord(row: Row): WebhookDeliveryRecord {
  return {
    id: String(row.id),
    endpoint: String(row.endpoint),
    eventType: String(row.event_type),
    payload: row.payload as WebhookDeliveryRecord['payload'],
    status: row.status as WebhookDeliveryStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: iso(row.next_attempt_at)!,
    lockedBy: (row.locked_by as string | null) ?? null,
    lockedUntil: iso(row.locked_until),
    lastError: (row.last_error as string | null) ?? null,
    lastStatusCode:
      row.last_status_code === null || row.last_status_code === undefined ? null : Number(row.last_status_code),
    createdAt: iso(row.created_at)!,
    finishedAt: iso(row.finished_at),
  };
}

/** The ASSISTANT message a loop write appends with its answer (id, text, tool calls): all null without one. */
function answerMessageParams(answer: StepAnswer | undefined): [string | null, string | null, string | null] {
  if (!answer) return [null, null, null];
  const { text, toolCalls } = answer.message;
  return [newId('msg'), text, toolCalls.length ? json(toolCalls) : null];
}

/**
 * The pool's connection settings with `-c synchronous_commit=on` in the startup `options`: every commit is durable
 * when it returns (the tool-start journal above all), whatever the server's or the database's setting (one in the
 * startup packet overrides both), on every connection of the pool, before its first query and without a query of its
 * own. Options the URL already gives are kept, ours last so that they win. pg takes a URL's `options` over the
 * config's, so a URL gets it in its query; a connection string that is not a URL (a socket path) in the config.
 */
export function withDurableCommits(connectionString: string): { connectionString: string; options?: string } {
  const durable = '-c synchronous_commit=on';
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return { connectionString, options: durable };
  }
  const given = url.searchParams.get('options');
  url.searchParams.set('options', given ? `${given} ${durable}` : durable);
  return { connectionString: url.toString() };
}
