// The embedded store: drizzle on better-sqlite3. Transactions are synchronous (better-sqlite3), so every
// state change below runs start to end without yielding, in a transaction shared with the writes of concurrent
// requests (write-batch.ts); statements are prepared once (the audit list's once per filter shape), except those of
// agent config and admin changes, which run rarely.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  and,
  asc,
  desc,
  eq,
  getTableColumns,
  getTableName,
  gt,
  inArray,
  isNull,
  lt,
  lte,
  or,
  sql,
  type Table,
} from 'drizzle-orm';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type {
  Agent,
  ApprovalGrantRecord,
  ArgumentRule,
  ChatMessage,
  CloseReason,
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
import { argumentRulesFromRows, overrideChanges, overrideRows } from '../../domain/agent-overrides.js';
import { decideAnswer, resumesTurn } from '../../domain/answer-rules.js';
import { storedConditionsFor } from '../../domain/expiry.js';
import { grantStateAt, revokedAtFor } from '../../domain/grants.js';
import { answerFromColumns, grantIdFromColumn, recordedAnswer } from '../../domain/stored-answer.js';
import { newId } from '../../domain/ids.js';
import { buildPage, decodeCursor, seqBound, totalCount } from '../../domain/pagination.js';
import { loadPendingStep } from '../../domain/pending-step.js';
import { startTurnFingerprint, type StoredIdempotencyKey } from '../../domain/idempotency.js';
import {
  GrantLapsedError,
  LeaseLostError,
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
import { WalSync, type SyncFile } from './wal-sync.js';
import { WriteBatcher } from './write-batch.js';

const { agents, agentToolOverrides, threads, turns, messages, elicitations, toolExecutions, approvalGrants } = schema;
const MIGRATIONS = migrationsFolder('sqlite');
const p = sql.placeholder;

export interface DatabaseOptions {
  /** A file path or ':memory:'. */
  path: string;
}

export interface SqliteStoreOptions {
  /**
   * FULL (default): what a request is told succeeded survives power loss: flush() fsyncs the WAL (shared by
   * concurrent requests, off the event loop). NORMAL: flush() does not; commits survive process crashes only.
   * Either way a tool's start record is on disk before the tool runs. See docs/durability.md.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How a file is flushed to disk (tests: to hold an fsync back); default fdatasync. */
  syncFile?: SyncFile;
  /** The webhook endpoints whose events the changes write to the outbox; none: nothing is written or read for them. */
  webhooks?: WebhookOutbox;
}

type Db = BetterSQLite3Database<typeof schema>;
type TurnRow = typeof turns.$inferSelect;
type MessageRow = typeof messages.$inferSelect;
type ElicitationRow = typeof elicitations.$inferSelect;
type ThreadRow = typeof threads.$inferSelect;
type GrantRow = typeof approvalGrants.$inferSelect;

export function openDatabase(options: DatabaseOptions): Database.Database {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const sqlite = new Database(options.path);
  // Durability settings and their trade-offs: docs/durability.md. Commits are not fsynced one by one: the store
  // syncs the WAL where it matters (WalSync), once for many commits.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // Another process (a second server, a backup) may hold the write lock for a moment: wait, do not fail.
  sqlite.pragma('busy_timeout = 5000');
  // Fold the WAL into the database file every ~1000 pages (SQLite's default, stated so it is a decision) and
  // shrink the WAL file back to 64 MiB after a checkpoint that a long reader had let it grow past.
  sqlite.pragma('wal_autocheckpoint = 1000');
  sqlite.pragma('journal_size_limit = 67108864');
  sqlite.pragma('foreign_keys = ON');
  // The savepoint journal of a write batch (each write's savepoint keeps the pages it changes) in memory: left to
  // the default it spills past 64 KiB into a temp file, which a batch of a dozen writes does, and then every page
  // a write touches costs two more system calls (and each batch creates and deletes a file in /var/tmp): 20 of a
  // round trip's 43 pwrite calls (strace, bench:anatomy's load). Nothing in it outlives the transaction.
  sqlite.pragma('temp_store = MEMORY');
  return sqlite;
}

export class SqliteStore implements Store {
  readonly db: Db;
  readonly #q;
  readonly #auditStatements = new Map<string, AuditQueries>();
  readonly #wal: WalSync;
  readonly #writes: WriteBatcher;
  /** FULL: flush() makes acknowledged writes durable; NORMAL: only the tool-start journal is synced. */
  readonly #syncAcknowledged: boolean;
  /** When the newest migration of this build was created (drizzle's `folderMillis`): ping() compares the database's. */
  readonly #newestMigration: number;
  /** Null without subscribed endpoints: the changes then write no outbox rows and run no statement for them. */
  readonly #webhooks: WebhookOutbox | null;
  readonly #hooks;
  /** Set when a write wrote outbox rows; the next commit tells the deliverer. */
  #webhooksWritten = false;

  constructor(
    readonly sqlite: Database.Database,
    options: SqliteStoreOptions = {},
  ) {
    this.db = drizzle(sqlite, { schema });
    migrate(this.db, { migrationsFolder: MIGRATIONS });
    this.#newestMigration = Math.max(
      0,
      ...readMigrationFiles({ migrationsFolder: MIGRATIONS }).map((m) => m.folderMillis),
    );
    this.#q = prepareQueries(this.db, sqlite);
    this.#hooks = prepareWebhookQueries(sqlite);
    this.#webhooks = options.webhooks?.subscriptions.length ? options.webhooks : null;
    this.#wal = new WalSync(sqlite.memory ? null : `${sqlite.name}-wal`, options.syncFile);
    this.#writes = new WriteBatcher(sqlite, () => {
      this.#wal.committed();
      if (this.#webhooksWritten) this.#announceWebhooks();
    });
    this.#syncAcknowledged = (options.synchronous ?? 'FULL') === 'FULL';
  }

  /** Every state change goes through here: one atomic transaction, committed together with concurrent ones. */
  #write<T>(work: () => T): Promise<T> {
    return this.#writes.run(work);
  }

  /**
   * The first statement of a loop write: bumps the turn's `updated_at` (and `iterations`, when given) only while
   * `leaseOwner` holds its lease, and returns its thread; else LeaseLostError, and the transaction writes nothing.
   */
  #touchTurn(turnId: string, leaseOwner: string | undefined, now: string, iterations?: number): string {
    const row = this.#q.touchTurn.get({
      id: turnId,
      now,
      iterations: iterations ?? null,
      owner: leaseOwner ?? null,
    }) as { threadId: string } | undefined;
    if (!row) throw loopWriteRefused(turnId, leaseOwner);
    return row.threadId;
  }

  /** With `leaseOwner`: LeaseLostError unless it holds the turn's lease. */
  #checkLease(turnId: string, leaseOwner: string | undefined): void {
    if (leaseOwner !== undefined && !this.#holdsLease(turnId, leaseOwner)) throw new LeaseLostError(turnId);
  }

  /**
   * A write transaction of a neighbour in the same file (the demo tool source's entities), committed in the same group
   * commit as the store's own writes. `work` is synchronous; the promise resolves once it is committed.
   */
  transaction<T>(work: () => T): Promise<T> {
    return this.#write(work);
  }

  /** Commits, the writes they held, and WAL fsyncs since the store opened: how much group commit shares. */
  get writeStats(): { commits: number; writes: number; fsyncs: number } {
    return { commits: this.#writes.commits, writes: this.#writes.writes, fsyncs: this.#wal.fsyncs };
  }

  async flush(options?: { soon?: boolean }): Promise<void> {
    if (this.#syncAcknowledged) await (options?.soon ? this.#wal.syncSoon() : this.#wal.sync());
  }

  // ---- agents -------------------------------------------------------------------------------------------

  async syncAgent(agent: Agent, now: string): Promise<Agent> {
    await this.#write(() => {
      const existing = this.db.select().from(agents).where(eq(agents.id, agent.id)).get();
      const definition = {
        name: agent.name,
        description: agent.description,
        modelId: agent.modelId,
        systemPrompt: agent.systemPrompt,
        toolIds: agent.toolIds,
        maxIterations: agent.maxIterations,
        updatedAt: now,
      };
      const gating = {
        requireToolConfirmation: agent.requireToolConfirmation,
        pauseTtlSeconds: agent.pauseTtlSeconds,
        allowEdit: agent.allowEdit,
      };
      if (!existing) {
        this.db
          .insert(agents)
          .values({ id: agent.id, ...definition, ...gating, createdAt: now })
          .run();
      } else {
        this.db
          .update(agents)
          .set(existing.gatingSetByApi ? definition : { ...definition, ...gating })
          .where(eq(agents.id, agent.id))
          .run();
        if (existing.gatingSetByApi) return;
        this.db.delete(agentToolOverrides).where(eq(agentToolOverrides.agentId, agent.id)).run();
      }
      for (const override of overrideRows(agent)) {
        this.db
          .insert(agentToolOverrides)
          .values({ agentId: agent.id, ...override })
          .run();
      }
    });
    return (await this.getAgent(agent.id))!;
  }

  async getAgent(id: string): Promise<Agent | null> {
    return this.#readAgent(id);
  }

  #readAgent(id: string): Agent | null {
    // One statement for the agent and its overrides: every turn reads its agent.
    const row = this.#q.agentWithOverrides.get({ id }) as (Record<string, unknown> & { overrides: string }) | undefined;
    if (!row) return null;
    const overrides = JSON.parse(row.overrides) as [
      toolId: string,
      mode: ToolConfirmationMode,
      rules: ArgumentRule[] | null,
      allowEdit: 0 | 1 | null,
    ][];
    return agentFromRow(
      agentColumns.fromRaw(row),
      overrides.map(([toolId, mode, rules, allowEdit]) => ({
        toolId,
        mode,
        rules,
        allowEdit: allowEdit === null ? null : allowEdit === 1,
      })),
    );
  }

  async listAgents(): Promise<Agent[]> {
    return this.db
      .select()
      .from(agents)
      .orderBy(asc(agents.id))
      .all()
      .map((row) => agentFromRow(row, this.#q.overrides.all({ agentId: row.id })));
  }

  async updateAgentGating(id: string, patch: AgentGatingPatch, now: string): Promise<Agent | null> {
    const found = await this.#write(() => {
      const existing = this.db.select({ id: agents.id }).from(agents).where(eq(agents.id, id)).get();
      if (!existing) return false;
      this.db
        .update(agents)
        .set({
          ...(patch.requireToolConfirmation !== undefined && {
            requireToolConfirmation: patch.requireToolConfirmation,
          }),
          ...(patch.pauseTtlSeconds !== undefined && { pauseTtlSeconds: patch.pauseTtlSeconds }),
          ...(patch.allowEdit !== undefined && { allowEdit: patch.allowEdit }),
          gatingSetByApi: true,
          updatedAt: now,
        })
        .where(eq(agents.id, id))
        .run();
      // Each tool's row gets what the patch names; a new row takes the defaults for the rest.
      for (const change of overrideChanges(patch)) {
        this.db
          .insert(agentToolOverrides)
          .values({
            agentId: id,
            toolId: change.toolId,
            mode: 'BY_ANNOTATION',
            rules: null,
            allowEdit: null,
            ...change.set,
          })
          .onConflictDoUpdate({ target: [agentToolOverrides.agentId, agentToolOverrides.toolId], set: change.set })
          .run();
      }
      return true;
    });
    return found ? this.getAgent(id) : null;
  }

  // ---- reads ---------------------------------------------------------------------------------------------

  async getThread(id: string, ownerId: string): Promise<ThreadRecord | null> {
    const row = this.#q.ownedThread.get({ id, ownerId });
    return row ? threadRecord(row) : null;
  }

  async listThreads(
    ownerId: string,
    agentId: string | null,
    first: number,
    after: string | null,
    newestFirst = false,
  ): Promise<Page<ThreadRecord>> {
    const bound = seqBound(decodeCursor(after), newestFirst);
    const page = newestFirst ? this.#q.threadPageNewest : this.#q.threadPage;
    const rows = page.all({ ownerId, agentId, after: bound, limit: first + 1 });
    return buildPage(rows, first, threadRecord);
  }

  async getTurn(id: string, ownerId: string): Promise<TurnRecord | null> {
    const row = this.#q.ownedTurn.get({ id, ownerId });
    return row ? turnRecord(row) : null;
  }

  async loadTurn(id: string): Promise<TurnRecord | null> {
    const row = this.#q.turn.get({ id });
    return row ? turnRecord(row) : null;
  }

  async listTurns(threadId: string): Promise<TurnRecord[]> {
    return this.#q.threadTurns.all({ threadId }).map(turnRecord);
  }

  async listThreadMessages(threadId: string): Promise<MessageRecord[]> {
    return this.#q.threadMessages.all({ threadId }).map(messageRecord);
  }

  async listTurnMessages(turnId: string): Promise<MessageRecord[]> {
    return this.#q.turnMessages.all({ turnId }).map(messageRecord);
  }

  async getElicitation(id: string, ownerId: string): Promise<ElicitationRecord | null> {
    const row = this.#q.ownedElicitation.get({ id, ownerId });
    return row ? elicitationRecord(row) : null;
  }

  async listTurnElicitations(turnId: string): Promise<ElicitationRecord[]> {
    return this.#q.turnElicitations.all({ turnId }).map(elicitationRecord);
  }

  async loadTurns(ids: readonly string[]): Promise<TurnRecord[]> {
    return this.#q.turnsByIds.all({ ids: JSON.stringify(ids) }).map(turnRecord);
  }

  async loadThreads(ids: readonly string[]): Promise<ThreadRecord[]> {
    return this.#q.threadsByIds.all({ ids: JSON.stringify(ids) }).map(threadRecord);
  }

  async listMessagesOfTurns(turnIds: readonly string[]): Promise<MessageRecord[]> {
    return this.#q.messagesOfTurns.all({ ids: JSON.stringify(turnIds) }).map(messageRecord);
  }

  async listMessagesOfThreads(threadIds: readonly string[]): Promise<MessageRecord[]> {
    return this.#q.messagesOfThreads.all({ ids: JSON.stringify(threadIds) }).map(messageRecord);
  }

  async listTurnsOfThreads(threadIds: readonly string[]): Promise<TurnRecord[]> {
    return this.#q.turnsOfThreads.all({ ids: JSON.stringify(threadIds) }).map(turnRecord);
  }

  async listElicitationsOfTurns(turnIds: readonly string[]): Promise<ElicitationRecord[]> {
    return this.#q.elicitationsOfTurns.all({ ids: JSON.stringify(turnIds) }).map(elicitationRecord);
  }

  async listPendingElicitations(
    ownerId: string,
    filter: { threadId?: string | null; agentId?: string | null },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }> {
    // The polling hot path: prepared, and pinned to the owner's index (see pendingPage in prepareQueries).
    const params = { ownerId, now, threadId: filter.threadId ?? null, agentId: filter.agentId ?? null };
    const afterSeq = decodeCursor(after);
    const rows = this.#q.pendingPage
      .all({ ...params, after: afterSeq, limit: first + 1 })
      .map((row) => elicitationColumns.fromRaw(row));
    const count = totalCount(
      afterSeq,
      rows.length,
      first,
      () => (this.#q.pendingCount.get(params) as { count: number }).count,
    );
    return { ...buildPage(rows, first, elicitationRecord), totalCount: count };
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
    const queries = this.#auditQueries(filter.statuses ?? null, filter.threadId != null, filter.agentId != null);
    const params = { ownerId, now, threadId: filter.threadId ?? null, agentId: filter.agentId ?? null };
    const page = newestFirst ? queries.pageNewest : queries.page;
    const rows = page.all({ ...params, after: seqBound(afterSeq, newestFirst), limit: first + 1 });
    const count = totalCount(afterSeq, rows.length, first, () => queries.count.get(params)!.count);
    return { ...buildPage(rows, first, elicitationRecord), totalCount: count };
  }

  /** The audit list's statements for one filter shape, prepared on its first use (see prepareAuditQueries). */
  #auditQueries(statuses: ElicitationStatus[] | null, byThread: boolean, byAgent: boolean): AuditQueries {
    const shape = statuses && [...new Set(statuses)].sort();
    const key = `${shape?.join(',') ?? '*'}|${byThread}|${byAgent}`;
    let queries = this.#auditStatements.get(key);
    if (!queries) this.#auditStatements.set(key, (queries = prepareAuditQueries(this.db, shape, byThread, byAgent)));
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
    const started = this.#write((): StartTurnResult => {
      const { now } = input;
      // The key first: a request sent again finds its turn whatever became of the thread since.
      if (input.idempotencyKey !== undefined) {
        const prior = this.#claimIdempotencyKey({ ...input, idempotencyKey: input.idempotencyKey });
        if (prior) return prior;
      }
      // The agent as committed now: the turn runs with it (a gating change committed before this applies).
      const agent = this.#readAgent(input.agentId);
      if (!agent) throw new StartRefused('AGENT_NOT_FOUND');
      let thread: ThreadRecord;
      let superseded: TurnRecord | null = null;
      const found =
        input.threadId !== null ? this.#q.ownedThread.get({ id: input.threadId, ownerId: input.ownerId }) : undefined;
      const where = decideThread(input, found ? threadRecord(found) : null);
      if (where.kind === 'refuse') throw new StartRefused(where.code);
      if (where.kind === 'existing') {
        thread = where.thread;
        const active = this.#q.activeTurn.get({ threadId: thread.id });
        const decision = decideActiveTurn(active ?? null, now);
        if (decision.kind === 'refuse') throw new StartRefused(decision.code);
        if (decision.kind === 'supersede') {
          superseded = this.#closePausedTurn(turnRecord(active!), decision.reason, closeStep, now);
        }
      } else {
        this.#q.insertThread.run({ id: input.newThreadId, agentId: input.agentId, ownerId: input.ownerId, now });
        thread = { id: input.newThreadId, agentId: input.agentId, ownerId: input.ownerId, createdAt: now };
      }
      this.#q.insertTurn.run({
        id: input.turnId,
        threadId: thread.id,
        agentId: input.agentId,
        ownerId: input.ownerId,
        now,
        leaseOwner: input.lease?.owner ?? null,
        leaseUntil: input.lease?.until ?? null,
      });
      const message = this.#appendMessage(
        input.turnId,
        thread.id,
        { role: 'USER', text: input.message, toolCalls: [], toolCallId: null },
        now,
      );
      // What the row now holds, without reading it back.
      const turn: TurnRecord = {
        id: input.turnId,
        threadId: thread.id,
        agentId: input.agentId,
        ownerId: input.ownerId,
        status: 'RUNNING',
        text: null,
        error: null,
        iterations: 0,
        step: null,
        createdAt: now,
        updatedAt: now,
        expiresAt: null,
      };
      return { ok: true, thread, turn, superseded, agent, message };
    });
    // A refusal rolled its transaction back: a key it claimed is not kept.
    return started.catch(refusalOf);
  }

  /**
   * Claims the owner's idempotency key for this request's turn (INSERT … ON CONFLICT DO NOTHING); null once claimed.
   * Claimed before: the result that request gets again (its turn as it is now), or IDEMPOTENCY_KEY_REUSED.
   */
  #claimIdempotencyKey(input: {
    idempotencyKey: string;
    ownerId: string;
    agentId: string;
    threadId: string | null;
    message: string;
    turnId: string;
    newThreadId: string;
    now: string;
  }): StartTurnResult | null {
    const fingerprint = startTurnFingerprint(input);
    const key = { ownerId: input.ownerId, key: input.idempotencyKey };
    const claimed = this.#q.claimIdempotencyKey.run({
      ...key,
      fingerprint,
      turnId: input.turnId,
      threadId: input.threadId ?? input.newThreadId,
      now: input.now,
    }).changes;
    if (claimed) return null;
    const prior = this.#q.idempotencyKey.get(key) as StoredIdempotencyKey;
    if (prior.fingerprint !== fingerprint) return { ok: false, code: 'IDEMPOTENCY_KEY_REUSED' };
    const turn = this.#q.turn.get({ id: prior.turnId })!;
    const thread = this.#q.thread.get({ id: prior.threadId })!;
    return { ok: true, replayed: true, thread: threadRecord(thread), turn: turnRecord(turn) };
  }

  // The loop's writes below take the lease check into their first statement (an UPDATE … WHERE lease_owner = … whose
  // row count, or RETURNING row, says whether it held), so that a step of the loop costs as few statements as it
  // writes. Without `leaseOwner` (tests, admin paths) the same statements run unconditioned.

  async appendAssistantMessage(
    turnId: string,
    message: ChatMessage,
    now: string,
    iterations?: number,
    leaseOwner?: string,
  ): Promise<MessageRecord> {
    return this.#write(() => {
      const threadId = this.#touchTurn(turnId, leaseOwner, now, iterations);
      return this.#appendMessage(turnId, threadId, message, now);
    });
  }

  async appendToolMessages(
    turnId: string,
    drafts: ToolMessageDraft[],
    now: string,
    leaseOwner?: string,
  ): Promise<void> {
    if (drafts.length === 0) return;
    await this.#write(() => {
      const threadId = this.#touchTurn(turnId, leaseOwner, now);
      for (const draft of drafts) this.#appendToolMessage(turnId, threadId, draft, now);
    });
  }

  async markToolStarted(
    turnId: string,
    toolCallId: string,
    now: string,
    leaseOwner?: string,
    grantId?: string,
  ): Promise<boolean> {
    const started = await this.#write(() => {
      // A call started before (a crash mid-run) reports so below, whatever became of its grant since; only a new
      // start needs the grant to hold.
      if (grantId !== undefined && !this.#q.toolStartedBefore.get({ turnId, toolCallId })) {
        // One writer at a time: a revoke commits wholly before or wholly after this check and the start.
        const grant = this.#q.grant.get({ id: grantId });
        if (!grant || grantStateAt(grant, now) !== 'ACTIVE') throw new GrantLapsedError(grantId);
      }
      const params = { turnId, toolCallId, now, owner: leaseOwner ?? null, grantId: grantId ?? null };
      if (this.#q.startTool.run(params).changes === 1) return true;
      // Nothing inserted: started before, or the lease is gone (then nothing may be written at all).
      this.#checkLease(turnId, leaseOwner);
      return false;
    });
    // The started row must be on disk before the tool's effect happens, whatever `synchronous` says; the same
    // fsync makes every earlier commit durable too (the answer that allowed the call).
    await this.#wal.sync();
    return started;
  }

  async finishTool(turnId: string, draft: ToolMessageDraft, now: string, leaseOwner?: string): Promise<void> {
    await this.#write(() => {
      const finished = this.#q.finishTool.run({ turnId, toolCallId: draft.toolCallId, now, owner: leaseOwner ?? null });
      if (finished.changes === 0) this.#checkLease(turnId, leaseOwner);
      this.#q.insertToolMessageOfTurn.run({
        id: newId('msg'),
        turnId,
        text: draft.text,
        toolCallId: draft.toolCallId,
        now,
      });
    });
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
    return this.#write(() => {
      const row = this.#q.pauseTurn.get({
        id: turnId,
        step: JSON.stringify(step),
        text,
        expiresAt,
        iterations: answer?.iterations ?? null,
        now,
        owner: leaseOwner ?? null,
      }) as Record<string, unknown> | undefined;
      if (!row) throw loopWriteRefused(turnId, leaseOwner);
      const turn = turnRecord(turnColumns.fromRaw(row));
      if (answer) this.#appendMessage(turnId, turn.threadId, answer.message, now);
      for (const draft of drafts) {
        this.#q.insertElicitation.run({
          id: draft.id,
          turnId,
          threadId: turn.threadId,
          agentId: turn.agentId,
          ownerId: turn.ownerId,
          toolCallId: draft.toolCallId,
          request: JSON.stringify(draft.request),
          toolCall: JSON.stringify(draft.toolCall),
          now,
          expiresAt,
        });
      }
      const created = pausedElicitations(turn, drafts, now, expiresAt);
      if (this.#webhooks) this.#writeWebhookEvents(elicitationsRequested(created, now), now);
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
    return this.#write(() => {
      const row = this.#q.finishTurn.get({
        id: turnId,
        status,
        text: fields.text ?? null,
        error: fields.error ?? null,
        iterations: fields.answer?.iterations ?? null,
        now,
        owner: leaseOwner ?? null,
      }) as Record<string, unknown> | undefined;
      if (!row) throw loopWriteRefused(turnId, leaseOwner);
      const turn = turnRecord(turnColumns.fromRaw(row));
      if (fields.answer) this.#appendMessage(turnId, turn.threadId, fields.answer.message, now);
      if (this.#webhooks) this.#writeWebhookEvents(turnEnded(turn, now), now);
      return turn;
    });
  }

  async setIterations(turnId: string, iterations: number, now: string, leaseOwner?: string): Promise<void> {
    await this.#write(() => {
      this.#touchTurn(turnId, leaseOwner, now, iterations);
    });
  }

  async resolveElicitation(input: AnswerInput, closeStep: CloseStep): Promise<ResolveResult> {
    return this.#write((): ResolveResult => {
      const { now, answer } = input;
      // Every elicitation of the answered one's turn (owner-scoped): the answered one, and whether others still wait.
      const ofTurn = this.#q.elicitationsWithSibling
        .all({ id: input.elicitationId, ownerId: input.ownerId })
        .map(elicitationRecord);
      const found = ofTurn.find((e) => e.id === input.elicitationId) ?? null;
      const decision = decideAnswer(found, answer, now);
      if (decision.kind === 'not_found' || !found) return { kind: 'not_found' };
      // The turn as it is now, read only where the answer needs it (the usual last answer gets it from the claim).
      const turnNow = () => turnRecord(this.#q.turn.get({ id: found.turnId })!);
      const current = () => ({
        elicitation: elicitationRecord(this.#q.elicitation.get({ id: found.id })!),
        turn: turnNow(),
      });
      switch (decision.kind) {
        case 'duplicate':
        case 'already_resolved':
          return { kind: decision.kind, elicitation: found, turn: turnNow() };
        case 'expired':
          if (decision.expireTurn) this.#closePausedTurn(turnNow(), 'expired', closeStep, now);
          return { kind: 'expired', ...current(), changed: decision.expireTurn };
      }
      // An ACCEPT that asks to remember records its grant in the same transaction as the answer.
      const { columns, grant } = recordedAnswer(found, answer, input.grantId, now);
      if (grant) this.db.insert(approvalGrants).values(grant).run();
      const asText = (value: unknown) => (value === null ? null : JSON.stringify(value));
      const answered = this.#q.answer.get({
        id: found.id,
        status: decision.status,
        action: answer.action,
        content: asText(columns.content),
        arguments: asText(columns.arguments),
        remember: asText(columns.remember),
        by: input.ownerId,
        now,
      }) as Record<string, unknown>;
      const elicitation = elicitationRecord(elicitationColumns.fromRaw(answered));
      if (this.#webhooks) this.#writeWebhookEvents(elicitationsClosed([elicitation], 'ANSWERED', now), now);
      if (decision.then === 'cancel_turn') {
        this.#closePausedTurn(turnNow(), 'cancelled', closeStep, now);
        return { kind: 'cancelled', ...current() };
      }
      const elicitations = ofTurn.map((e) => (e.id === elicitation.id ? elicitation : e));
      if (!resumesTurn(elicitations.some((e) => e.status === 'PENDING'))) {
        return { kind: 'recorded', elicitation, turn: turnNow() };
      }
      // The claim: only one caller can move the turn from PAUSED to RUNNING.
      const resumed = this.#q.resumeTurn.get({
        id: found.turnId,
        now,
        leaseOwner: input.lease?.owner ?? null,
        leaseUntil: input.lease?.until ?? null,
      }) as Record<string, unknown> | undefined;
      if (!resumed) return { kind: 'recorded', elicitation, turn: turnNow() };
      return { kind: 'resume', elicitation, turn: turnRecord(turnColumns.fromRaw(resumed)), elicitations };
    });
  }

  async expireDueTurns(now: string, limit: number, closeStep: CloseStep): Promise<TurnRecord[]> {
    return this.#write(() => {
      const due = this.#q.dueTurns.all({ now, limit });
      return due.map((row) => this.#closePausedTurn(turnRecord(row), 'expired', closeStep, now));
    });
  }

  async listRunningTurns(): Promise<TurnRecord[]> {
    return this.#q.runningTurns.all().map(turnRecord);
  }

  async listUnfinishedToolCalls(turnId: string): Promise<string[]> {
    return this.#q.unfinishedToolCalls.all({ turnId }).map((r) => r.id);
  }

  async listRunningLeases(): Promise<RunningTurnLease[]> {
    return this.#q.runningLeases.all();
  }

  async claimTurn(
    turnId: string,
    expectedOwner: string | null,
    lease: TurnLease,
    now: string,
  ): Promise<{ turn: TurnRecord; recoveries: number } | null> {
    return this.#write(() => {
      const claimed =
        this.#q.claimTurn.run({ id: turnId, expected: expectedOwner, owner: lease.owner, until: lease.until, now })
          .changes === 1;
      if (!claimed) return null;
      const row = this.#q.turn.get({ id: turnId })!;
      return { turn: turnRecord(row), recoveries: row.recoveries };
    });
  }

  async renewLeases(owner: string, until: string, now: string): Promise<number> {
    return this.#write(() => this.#q.renewLeases.run({ owner, until, now }).changes);
  }

  async holdsLease(turnId: string, owner: string): Promise<boolean> {
    return this.#holdsLease(turnId, owner);
  }

  #holdsLease(turnId: string, owner: string): boolean {
    return (this.#q.leaseOwner.get({ id: turnId }) as { owner: string | null } | undefined)?.owner === owner;
  }

  async deleteDeliveredWebhooks(before: string, limit: number): Promise<number> {
    return this.#write(() => this.#q.deleteDeliveredWebhooks.run({ before, limit }).changes);
  }

  async deleteLapsedGrants(before: string, limit: number): Promise<number> {
    return this.#write(() => this.#q.deleteLapsedGrants.run({ before, limit }).changes);
  }

  async deleteExpiredElicitations(before: string, limit: number): Promise<number> {
    return this.#write(() => this.#q.deleteExpiredElicitations.run({ before, limit }).changes);
  }

  async deleteIdempotencyKeys(before: string, limit: number): Promise<number> {
    return this.#write(() => this.#q.deleteIdempotencyKeys.run({ before, limit }).changes);
  }

  async countPendingElicitations(now: string): Promise<number> {
    return (this.#q.allPendingCount.get({ now }) as { count: number }).count;
  }

  // ---- remembered approvals ---------------------------------------------------------------------------------

  async listGrantCandidates(ownerId: string, agentId: string, toolId: string): Promise<ApprovalGrantRecord[]> {
    return this.#q.grantCandidates.all({ ownerId, agentId, toolId }).map(grantRecord);
  }

  async getApprovalGrant(id: string, ownerId: string): Promise<ApprovalGrantRecord | null> {
    const row = this.#q.grant.get({ id });
    return row && row.ownerId === ownerId ? grantRecord(row) : null;
  }

  async listApprovalGrants(
    ownerId: string,
    filter: { agentId?: string | null; threadId?: string | null; activeOnly: boolean },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ApprovalGrantRecord>> {
    const rows = this.db
      .select()
      .from(approvalGrants)
      .where(
        and(
          eq(approvalGrants.ownerId, ownerId),
          gt(approvalGrants.seq, decodeCursor(after)),
          filter.agentId != null ? eq(approvalGrants.agentId, filter.agentId) : undefined,
          filter.threadId != null ? eq(approvalGrants.threadId, filter.threadId) : undefined,
          // ACTIVE as grantStateAt reads it: not revoked, not yet expired.
          filter.activeOnly ? and(isNull(approvalGrants.revokedAt), gt(approvalGrants.expiresAt, now)) : undefined,
        ),
      )
      .orderBy(asc(approvalGrants.seq))
      .limit(first + 1)
      .all();
    return buildPage(rows, first, grantRecord);
  }

  async revokeApprovalGrant(id: string, ownerId: string, now: string): Promise<ApprovalGrantRecord | null> {
    return this.#write(() => {
      const grant = this.#q.grant.get({ id });
      if (!grant || grant.ownerId !== ownerId) return null;
      const [lastUse] = this.db
        .select({ startedAt: sql<string | null>`max(${toolExecutions.startedAt})` })
        .from(toolExecutions)
        .where(eq(toolExecutions.grantId, id))
        .all();
      const revokedAt = revokedAtFor(grant, lastUse?.startedAt ?? null, now);
      this.db.update(approvalGrants).set({ revokedAt }).where(eq(approvalGrants.id, id)).run();
      return grantRecord({ ...grant, revokedAt });
    });
  }

  async listGrantUses(grantIds: readonly string[]): Promise<GrantUseRecord[]> {
    if (grantIds.length === 0) return [];
    return this.db
      .select({
        grantId: sql<string>`${toolExecutions.grantId}`,
        turnId: toolExecutions.turnId,
        toolCallId: toolExecutions.toolCallId,
        startedAt: toolExecutions.startedAt,
      })
      .from(toolExecutions)
      .where(inArray(toolExecutions.grantId, [...grantIds]))
      .orderBy(asc(toolExecutions.startedAt))
      .all();
  }

  async ping(): Promise<string | null> {
    // One read that needs the file: drizzle's migration journal. A newer build may have migrated further; fine.
    const { applied } = this.#q.newestMigration.get() as { applied: number | null };
    return (applied ?? 0) >= this.#newestMigration ? null : 'migrations not applied';
  }

  async close(): Promise<void> {
    this.#writes.flush();
    void this.#wal.close();
    // A clean stop folds the WAL into the database file, so the .db file alone is a complete copy.
    try {
      this.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      /* another process reads: it checkpoints later */
    }
    this.sqlite.close();
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
    const rows = await this.#write(() =>
      this.#hooks.claim.all({ owner, endpoints: JSON.stringify(endpoints), now, until, limit }),
    );
    return (rows as WebhookRow[]).map(webhookDeliveryRecord).sort((a, b) => a.seq - b.seq);
  }

  async recordWebhookAttempt(id: string, owner: string, outcome: WebhookAttemptOutcome, now: string): Promise<boolean> {
    return this.#write(() => this.#hooks.record.run({ id, owner, ...attemptChanges(outcome, now) }).changes === 1);
  }

  async listWebhookDeliveries(
    filter: { status?: WebhookDeliveryStatus | null },
    first: number,
    after: string | null,
  ): Promise<Page<WebhookDeliveryRecord> & { totalCount: number }> {
    const afterSeq = decodeCursor(after);
    const status = filter.status ?? null;
    const rows = (this.#hooks.page.all({ status, after: afterSeq, limit: first + 1 }) as WebhookRow[]).map(
      webhookDeliveryRecord,
    );
    const count = totalCount(
      afterSeq,
      rows.length,
      first,
      () => (this.#hooks.count.get({ status }) as { count: number }).count,
    );
    return { ...buildPage(rows, first, ({ seq: _seq, ...record }) => record), totalCount: count };
  }

  // ---- helpers (inside a transaction) ------------------------------------------------------------------------

  /** PAUSED turn to CANCELLED or EXPIRED, as closePausedTurn (src/domain/turn-rules.ts) decides. */
  #closePausedTurn(turn: TurnRecord, reason: CloseReason, closeStep: CloseStep, now: string): TurnRecord {
    const elicitationRows = this.#q.turnElicitations.all({ turnId: turn.id }).map(elicitationRecord);
    const closing = closePausedTurn(turn, elicitationRows, reason, closeStep);
    for (const id of closing.closeElicitations) this.#q.closeElicitation.run({ id, status: closing.status, now });
    if (this.#webhooks) this.#writeWebhookEvents(elicitationsClosedBy(elicitationRows, closing, reason, now), now);
    for (const draft of closing.toolMessages) this.#appendToolMessage(turn.id, turn.threadId, draft, now);
    return turnRecord(turnColumns.fromRaw(this.#q.closeTurn.get({ id: turn.id, status: closing.status, now })));
  }

  /** The outbox rows of a change's events, for the subscribed endpoints (inside the change's transaction). */
  #writeWebhookEvents(events: WebhookEvent[], now: string): void {
    const rows = outboxRows(events, this.#webhooks!.subscriptions, now);
    for (const row of rows) {
      this.#hooks.insert.run({
        id: row.id,
        endpoint: row.endpoint,
        eventType: row.eventType,
        payload: JSON.stringify(row.payload),
        now,
      });
    }
    if (rows.length) this.#webhooksWritten = true;
  }

  /** After the commit (the deliverer's claim, a write of its own, goes into the next batch). */
  #announceWebhooks(): void {
    this.#webhooksWritten = false;
    this.#webhooks!.written();
  }

  /** A call's one TOOL message; a second one for the same call (two processes racing on a turn) is dropped. */
  #appendToolMessage(turnId: string, threadId: string, draft: ToolMessageDraft, now: string): void {
    this.#q.insertToolMessage.run({
      id: newId('msg'),
      threadId,
      turnId,
      text: draft.text,
      toolCallId: draft.toolCallId,
      now,
    });
  }

  #appendMessage(turnId: string, threadId: string, message: ChatMessage, now: string): MessageRecord {
    const id = newId('msg');
    this.#q.insertMessage.run({
      id,
      threadId,
      turnId,
      role: message.role,
      text: message.text,
      toolCalls: message.toolCalls.length ? JSON.stringify(message.toolCalls) : null,
      toolCallId: message.toolCallId,
      now,
    });
    return { ...message, id, threadId, turnId, createdAt: now };
  }
}

/**
 * The audit list's page and count for one filter shape: which statuses (deduplicated, sorted), whether by thread,
 * whether by agent. One statement pair per shape keeps each one's query plan; there are at most (2^5 + 1) × 2 × 2 shapes
 * (the status filter is a list of the five enum values, or absent).
 */
function prepareAuditQueries(db: Db, statuses: ElicitationStatus[] | null, byThread: boolean, byAgent: boolean) {
  // As read now (storedConditionsFor, src/domain/expiry.ts): a PENDING row past its expiry is EXPIRED, whether or
  // not the sweeper got there yet.
  const asRead = (status: ElicitationStatus) =>
    or(
      ...storedConditionsFor(status).map(({ status, pastExpiry }) =>
        and(
          eq(elicitations.status, status),
          pastExpiry === undefined
            ? undefined
            : pastExpiry
              ? lte(elicitations.expiresAt, p('now'))
              : gt(elicitations.expiresAt, p('now')),
        ),
      ),
    );
  const where = and(
    eq(elicitations.ownerId, p('ownerId')),
    statuses ? or(...statuses.map(asRead), sql`0`) : undefined,
    byThread ? eq(elicitations.threadId, p('threadId')) : undefined,
    byAgent ? eq(elicitations.agentId, p('agentId')) : undefined,
  );
  return {
    page: db
      .select()
      .from(elicitations)
      .where(and(where, gt(elicitations.seq, p('after'))))
      .orderBy(asc(elicitations.seq))
      .limit(p('limit'))
      .prepare(),
    // Newest first: `after` is the seq the page reads back from.
    pageNewest: db
      .select()
      .from(elicitations)
      .where(and(where, lt(elicitations.seq, p('after'))))
      .orderBy(desc(elicitations.seq))
      .limit(p('limit'))
      .prepare(),
    count: db
      .select({ count: sql<number>`count(*)` })
      .from(elicitations)
      .where(where)
      .prepare(),
  };
}
type AuditQueries = ReturnType<typeof prepareAuditQueries>;

/** The `ids` parameter, a JSON array bound as one string, as a set for `inArray` (the API's batched reads). */
const idsParam = sql`(SELECT value FROM json_each(${p('ids')}))`;

/** Statements of the hot paths, prepared once. JSON columns are bound as strings the columns already hold. */
function prepareQueries(db: Db, sqlite: Database.Database) {
  const raw = (statement: string) => sqlite.prepare(statement);
  // A viewer's pending requests: INDEXED BY, because without statistics SQLite prefers elicitations_status_expiry
  // (status = ? AND expires_at > ?) and then reads every unexpired PENDING row of every user to count one user's
  // (200,000 rows at a million: ~100 ms). The owner's index reads only the viewer's own rows, in seq order.
  // What is pending is PENDING as read at @now: storedConditionsFor('PENDING') (src/domain/expiry.ts).
  const pending = `FROM elicitations INDEXED BY elicitations_owner_status_seq
    WHERE owner_id = @ownerId AND status = 'PENDING' AND expires_at > @now
      AND (@threadId IS NULL OR thread_id = @threadId) AND (@agentId IS NULL OR agent_id = @agentId)`;
  return {
    pendingPage: raw(`SELECT ${elicitationColumns.select} ${pending} AND seq > @after ORDER BY seq LIMIT @limit`),
    pendingCount: raw(`SELECT count(*) AS count ${pending}`),
    // Everyone's, for the metrics gauge: elicitations_status_expiry answers it from the index alone.
    allPendingCount: raw("SELECT count(*) AS count FROM elicitations WHERE status = 'PENDING' AND expires_at > @now"),
    newestMigration: raw('SELECT max(created_at) AS applied FROM __drizzle_migrations'),
    agentWithOverrides: raw(`SELECT ${agentColumns.select},
      (SELECT json_group_array(json_array(tool_id, mode, json(rules), allow_edit)) FROM agent_tool_overrides
        WHERE agent_id = agents.id) AS overrides
      FROM agents WHERE id = @id`),
    overrides: db
      .select()
      .from(agentToolOverrides)
      .where(eq(agentToolOverrides.agentId, p('agentId')))
      .prepare(),
    thread: db
      .select()
      .from(threads)
      .where(eq(threads.id, p('id')))
      .prepare(),
    turn: db
      .select()
      .from(turns)
      .where(eq(turns.id, p('id')))
      .prepare(),
    // The API's batched reads (loaders): the ids come as one JSON array.
    turnsByIds: db.select().from(turns).where(inArray(turns.id, idsParam)).prepare(),
    threadsByIds: db.select().from(threads).where(inArray(threads.id, idsParam)).prepare(),
    turnsOfThreads: db
      .select()
      .from(turns)
      .where(inArray(turns.threadId, idsParam))
      .orderBy(asc(turns.createdAt), asc(sql`rowid`))
      .prepare(),
    messagesOfTurns: db
      .select()
      .from(messages)
      .where(inArray(messages.turnId, idsParam))
      .orderBy(asc(messages.seq))
      .prepare(),
    messagesOfThreads: db
      .select()
      .from(messages)
      .where(inArray(messages.threadId, idsParam))
      .orderBy(asc(messages.seq))
      .prepare(),
    elicitationsOfTurns: db
      .select()
      .from(elicitations)
      .where(inArray(elicitations.turnId, idsParam))
      .orderBy(asc(elicitations.seq))
      .prepare(),
    threadTurns: db
      .select()
      .from(turns)
      .where(eq(turns.threadId, p('threadId')))
      .orderBy(asc(turns.createdAt), asc(sql`rowid`))
      .prepare(),
    activeTurn: db
      .select()
      .from(turns)
      .where(and(eq(turns.threadId, p('threadId')), inArray(turns.status, ['RUNNING', 'PAUSED'])))
      .limit(1)
      .prepare(),
    threadMessages: db
      .select()
      .from(messages)
      .where(eq(messages.threadId, p('threadId')))
      .orderBy(asc(messages.seq))
      .prepare(),
    turnMessages: db
      .select()
      .from(messages)
      .where(eq(messages.turnId, p('turnId')))
      .orderBy(asc(messages.seq))
      .prepare(),
    elicitation: db
      .select()
      .from(elicitations)
      .where(eq(elicitations.id, p('id')))
      .prepare(),
    // Reads for a viewer: the owner is part of the lookup, so another user's id and an unknown one take the
    // same path (no row) and cannot be told apart by the answer or its timing.
    ownedThread: db
      .select()
      .from(threads)
      .where(and(eq(threads.id, p('id')), eq(threads.ownerId, p('ownerId'))))
      .prepare(),
    ownedTurn: db
      .select()
      .from(turns)
      .where(and(eq(turns.id, p('id')), eq(turns.ownerId, p('ownerId'))))
      .prepare(),
    ownedElicitation: db
      .select()
      .from(elicitations)
      .where(and(eq(elicitations.id, p('id')), eq(elicitations.ownerId, p('ownerId'))))
      .prepare(),
    turnElicitations: db
      .select()
      .from(elicitations)
      .where(eq(elicitations.turnId, p('turnId')))
      .orderBy(asc(elicitations.seq))
      .prepare(),
    pendingOfTurn: db
      .select({ id: elicitations.id })
      .from(elicitations)
      .where(and(eq(elicitations.turnId, p('turnId')), eq(elicitations.status, 'PENDING')))
      .limit(1)
      .prepare(),
    // A viewer's threads, in creation order (threads_owner_seq), of one agent or all.
    threadPage: db
      .select()
      .from(threads)
      .where(
        and(
          eq(threads.ownerId, p('ownerId')),
          sql`(${p('agentId')} IS NULL OR ${threads.agentId} = ${p('agentId')})`,
          gt(threads.seq, p('after')),
        ),
      )
      .orderBy(asc(threads.seq))
      .limit(p('limit'))
      .prepare(),
    threadPageNewest: db
      .select()
      .from(threads)
      .where(
        and(
          eq(threads.ownerId, p('ownerId')),
          sql`(${p('agentId')} IS NULL OR ${threads.agentId} = ${p('agentId')})`,
          lt(threads.seq, p('after')),
        ),
      )
      .orderBy(desc(threads.seq))
      .limit(p('limit'))
      .prepare(),
    // The sweeper's and recovery's reads: they run every few seconds on every server, whatever the load.
    // dueTurns: PAUSED turns that read EXPIRED at @now (turnStatusAt, src/domain/expiry.ts).
    dueTurns: db
      .select()
      .from(turns)
      .where(and(eq(turns.status, 'PAUSED'), lte(turns.expiresAt, p('now'))))
      .limit(p('limit'))
      .prepare(),
    runningTurns: db.select().from(turns).where(eq(turns.status, 'RUNNING')).prepare(),
    runningLeases: db
      .select({
        turnId: turns.id,
        owner: turns.leaseOwner,
        expiresAt: turns.leaseExpiresAt,
        recoveries: turns.recoveries,
      })
      .from(turns)
      .where(eq(turns.status, 'RUNNING'))
      .prepare(),
    unfinishedToolCalls: db
      .select({ id: toolExecutions.toolCallId })
      .from(toolExecutions)
      .where(and(eq(toolExecutions.turnId, p('turnId')), isNull(toolExecutions.finishedAt)))
      .prepare(),
    // Prepared once: a statement prepared per call costs CPU (an INSERT with its indexes compiles to a long program)
    // and native memory that V8 does not see, so RSS grew with every turn until a GC (and malloc kept it after).
    insertThread: raw(
      'INSERT INTO threads (id, agent_id, owner_id, created_at) VALUES (@id, @agentId, @ownerId, @now)',
    ),
    // The loop's writes: with @owner, only while that process holds the lease (RETURNING nothing otherwise).
    finishTurn: raw(`UPDATE turns SET status = @status, text = @text, error = @error, step = NULL, expires_at = NULL,
      iterations = coalesce(@iterations, iterations), updated_at = @now
      WHERE id = @id AND (@owner IS NULL OR (status = 'RUNNING' AND lease_owner = @owner)) RETURNING ${turnColumns.select}`),
    touchTurn: raw(`UPDATE turns SET iterations = coalesce(@iterations, iterations), updated_at = @now
      WHERE id = @id AND (@owner IS NULL OR (status = 'RUNNING' AND lease_owner = @owner)) RETURNING thread_id AS threadId`),
    insertTurn:
      raw(`INSERT INTO turns (id, thread_id, agent_id, owner_id, status, iterations, created_at, updated_at, lease_owner, lease_expires_at)
      VALUES (@id, @threadId, @agentId, @ownerId, 'RUNNING', 0, @now, @now, @leaseOwner, @leaseUntil)`),
    insertMessage: raw(`INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
      VALUES (@id, @threadId, @turnId, @role, @text, @toolCalls, @toolCallId, @now)`),
    insertElicitation:
      raw(`INSERT INTO elicitations (id, turn_id, thread_id, agent_id, owner_id, tool_call_id, status, request, tool_call, created_at, expires_at)
      VALUES (@id, @turnId, @threadId, @agentId, @ownerId, @toolCallId, 'PENDING', @request, @toolCall, @now, @expiresAt)`),
    pauseTurn:
      raw(`UPDATE turns SET status = 'PAUSED', step = @step, text = @text, expires_at = @expiresAt, updated_at = @now,
      iterations = coalesce(@iterations, iterations) WHERE id = @id AND (@owner IS NULL OR (status = 'RUNNING' AND lease_owner = @owner)) RETURNING ${turnColumns.select}`),
    resumeTurn: raw(`UPDATE turns SET status = 'RUNNING', text = NULL, expires_at = NULL, updated_at = @now,
      lease_owner = @leaseOwner, lease_expires_at = @leaseUntil WHERE id = @id AND status = 'PAUSED'
      RETURNING ${turnColumns.select}`),
    insertToolMessage:
      raw(`INSERT OR IGNORE INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
      VALUES (@id, @threadId, @turnId, 'TOOL', @text, NULL, @toolCallId, @now)`),
    claimTurn:
      raw(`UPDATE turns SET lease_owner = @owner, lease_expires_at = @until, recoveries = recoveries + 1, updated_at = @now
      WHERE id = @id AND status = 'RUNNING' AND lease_owner IS @expected`),
    renewLeases: raw(`UPDATE turns SET lease_expires_at = @until WHERE lease_owner = @owner AND status = 'RUNNING'`),
    leaseOwner: raw("SELECT lease_owner AS owner FROM turns WHERE id = @id AND status = 'RUNNING'"),
    deleteDeliveredWebhooks: raw(`DELETE FROM webhook_deliveries WHERE seq IN (
      SELECT seq FROM webhook_deliveries WHERE status = 'DELIVERED' AND finished_at < @before LIMIT @limit)`),
    deleteLapsedGrants: raw(`DELETE FROM approval_grants WHERE seq IN (
      SELECT seq FROM approval_grants WHERE coalesce(revoked_at, expires_at) < @before LIMIT @limit)`),
    deleteExpiredElicitations: raw(`DELETE FROM elicitations WHERE seq IN (
      SELECT seq FROM elicitations WHERE status = 'EXPIRED' AND expires_at < @before LIMIT @limit)`),
    deleteIdempotencyKeys: raw(`DELETE FROM idempotency_keys WHERE rowid IN (
      SELECT rowid FROM idempotency_keys WHERE created_at < @before LIMIT @limit)`),
    claimIdempotencyKey: raw(`INSERT INTO idempotency_keys (owner_id, key, fingerprint, turn_id, thread_id, created_at)
      VALUES (@ownerId, @key, @fingerprint, @turnId, @threadId, @now) ON CONFLICT DO NOTHING`),
    idempotencyKey: raw(`SELECT fingerprint, turn_id AS turnId, thread_id AS threadId FROM idempotency_keys
      WHERE owner_id = @ownerId AND key = @key`),
    closeElicitation: raw(
      `UPDATE elicitations SET status = @status, resolved_at = @now WHERE id = @id AND status = 'PENDING'`,
    ),
    closeTurn: raw(
      `UPDATE turns SET status = @status, step = NULL, updated_at = @now WHERE id = @id RETURNING ${turnColumns.select}`,
    ),
    setIterations: raw('UPDATE turns SET iterations = @iterations, updated_at = @now WHERE id = @id'),
    answer: raw(`UPDATE elicitations SET status = @status, response_action = @action, response_content = @content,
      response_arguments = @arguments, response_remember = @remember, resolved_by = @by, resolved_at = @now
      WHERE id = @id AND status = 'PENDING' RETURNING ${elicitationColumns.select}`),
    grant: db
      .select()
      .from(approvalGrants)
      .where(eq(approvalGrants.id, p('id')))
      .prepare(),
    // Asked for every gated call that would ask: the owner's unrevoked grants of the tool (approval_grants_lookup).
    grantCandidates: db
      .select()
      .from(approvalGrants)
      .where(
        and(
          eq(approvalGrants.ownerId, p('ownerId')),
          eq(approvalGrants.agentId, p('agentId')),
          eq(approvalGrants.toolId, p('toolId')),
          isNull(approvalGrants.revokedAt),
        ),
      )
      .orderBy(asc(approvalGrants.seq))
      .prepare(),
    // The elicitations of the turn of one of them (owner-scoped), oldest first: what an answer decides on.
    elicitationsWithSibling: db
      .select()
      .from(elicitations)
      .where(
        eq(
          elicitations.turnId,
          sql`(SELECT turn_id FROM elicitations WHERE id = ${p('id')} AND owner_id = ${p('ownerId')})`,
        ),
      )
      .orderBy(asc(elicitations.seq))
      .prepare(),
    toolStartedBefore: raw('SELECT 1 FROM tool_executions WHERE turn_id = @turnId AND tool_call_id = @toolCallId'),
    startTool: raw(`INSERT OR IGNORE INTO tool_executions (turn_id, tool_call_id, started_at, grant_id)
      SELECT @turnId, @toolCallId, @now, @grantId WHERE @owner IS NULL
        OR EXISTS (SELECT 1 FROM turns WHERE id = @turnId AND status = 'RUNNING' AND lease_owner = @owner)`),
    finishTool:
      raw(`UPDATE tool_executions SET finished_at = @now WHERE turn_id = @turnId AND tool_call_id = @toolCallId
      AND (@owner IS NULL OR EXISTS (SELECT 1 FROM turns WHERE id = @turnId AND status = 'RUNNING' AND lease_owner = @owner))`),
    insertToolMessageOfTurn:
      raw(`INSERT OR IGNORE INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
      SELECT @id, thread_id, @turnId, 'TOOL', @text, NULL, @toolCallId, @now FROM turns WHERE id = @turnId`),
  };
}

function agentFromRow(
  row: typeof agents.$inferSelect,
  overrides: { toolId: string; mode: string; rules: unknown[] | null; allowEdit: boolean | null }[],
): Agent {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    modelId: row.modelId,
    systemPrompt: row.systemPrompt,
    toolIds: row.toolIds,
    requireToolConfirmation: row.requireToolConfirmation,
    toolConfirmation: Object.fromEntries(overrides.map((o) => [o.toolId, o.mode as ToolConfirmationMode])),
    pauseTtlSeconds: row.pauseTtlSeconds,
    maxIterations: row.maxIterations,
    ...argumentRulesFromRows(row.allowEdit, overrides),
  };
}

function threadRecord(row: ThreadRow): ThreadRecord {
  return { id: row.id, agentId: row.agentId, ownerId: row.ownerId, createdAt: row.createdAt };
}

function turnRecord(row: TurnRow): TurnRecord {
  return {
    id: row.id,
    threadId: row.threadId,
    agentId: row.agentId,
    ownerId: row.ownerId,
    status: row.status,
    text: row.text,
    error: row.error,
    iterations: row.iterations,
    // Validated, and upgraded if an earlier release wrote it: a malformed step fails naming the turn.
    step: row.step === null ? null : loadPendingStep(row.step, row.id),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    expiresAt: row.expiresAt,
  };
}

function messageRecord(row: MessageRow): MessageRecord {
  return {
    id: row.id,
    threadId: row.threadId,
    turnId: row.turnId,
    role: row.role,
    text: row.text,
    toolCalls: (row.toolCalls as MessageRecord['toolCalls'] | null) ?? [],
    toolCallId: row.toolCallId,
    createdAt: row.createdAt,
  };
}

/**
 * A table's columns for raw statements: `select` lists every column under its drizzle key (qualified by the table),
 * `fromRaw` maps a raw row's values as drizzle does (JSON, booleans).
 */
function rawColumns<T extends Table>(table: T) {
  const columns = Object.entries(getTableColumns(table));
  const name = getTableName(table);
  return {
    select: columns.map(([key, column]) => `"${name}"."${column.name}" AS "${key}"`).join(', '),
    fromRaw(raw: unknown): T['$inferSelect'] {
      const row = raw as Record<string, unknown>;
      for (const [key, column] of columns) if (row[key] !== null) row[key] = column.mapFromDriverValue(row[key]);
      return row as T['$inferSelect'];
    },
  };
}

const elicitationColumns = rawColumns(elicitations);
const agentColumns = rawColumns(agents);
const turnColumns = rawColumns(turns);

function elicitationRecord(row: ElicitationRow): ElicitationRecord {
  return {
    id: row.id,
    turnId: row.turnId,
    threadId: row.threadId,
    agentId: row.agentId,
    ownerId: row.ownerId,
    toolCallId: row.toolCallId,
    status: row.status,
    request: row.request as ElicitationRecord['request'],
    toolCall: row.toolCall as ElicitationRecord['toolCall'],
    response: row.responseAction
      ? answerFromColumns(row.responseAction, {
          content: row.responseContent,
          arguments: row.responseArguments,
          remember: row.responseRemember,
        })
      : null,
    grantId: grantIdFromColumn(row.responseRemember),
    resolvedBy: row.resolvedBy,
    resolvedAt: row.resolvedAt,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  };
}

function grantRecord(row: GrantRow): ApprovalGrantRecord {
  const { seq: _seq, ...grant } = row;
  return grant;
}
// ---- webhooks (docs/webhooks.md) -----------------------------------------------------------------------------

const WEBHOOK_COLUMNS = `seq, id, endpoint, event_type AS eventType, payload, status, attempts,
  next_attempt_at AS nextAttemptAt, locked_by AS lockedBy, locked_until AS lockedUntil, last_error AS lastError,
  last_status_code AS lastStatusCode, created_at AS createdAt, finished_at AS finishedAt`;

type WebhookRow = Omit<WebhookDeliveryRecord, 'payload'> & { seq: number; payload: string };

function webhookDeliveryRecord(row: WebhookRow): WebhookDeliveryRecord & { seq: number } {
  return { ...row, payload: JSON.parse(row.payload) as WebhookDeliveryRecord['payload'] };
}

/** The outbox's statements. Nothing here runs on a change's path unless an endpoint subscribes to its events. */
function prepareWebhookQueries(sqlite: Database.Database) {
  return {
    insert: sqlite.prepare(`INSERT INTO webhook_deliveries (id, endpoint, event_type, payload, status, attempts,
      next_attempt_at, created_at) VALUES (@id, @endpoint, @eventType, @payload, 'PENDING', 0, @now, @now)`),
    // One writer at a time: the UPDATE's own read is the lock (webhook_deliveries_due finds the due rows).
    claim: sqlite.prepare(`UPDATE webhook_deliveries SET locked_by = @owner, locked_until = @until WHERE seq IN (
        SELECT seq FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= @now
          AND (locked_until IS NULL OR locked_until <= @now) AND endpoint IN (SELECT value FROM json_each(@endpoints))
        ORDER BY seq LIMIT @limit)
      RETURNING ${WEBHOOK_COLUMNS}`),
    // A retry or a release keeps the row PENDING with its next time; delivered and failed end it. Only the holder.
    record: sqlite.prepare(`UPDATE webhook_deliveries SET status = @status, attempts = attempts + @counted,
        next_attempt_at = coalesce(@nextAttemptAt, next_attempt_at),
        last_error = CASE WHEN @counted = 1 THEN @lastError ELSE last_error END,
        last_status_code = CASE WHEN @counted = 1 THEN @lastStatusCode ELSE last_status_code END, finished_at = @finishedAt,
        locked_by = NULL, locked_until = NULL
      WHERE id = @id AND locked_by = @owner AND status = 'PENDING'`),
    page: sqlite.prepare(`SELECT ${WEBHOOK_COLUMNS} FROM webhook_deliveries
      WHERE (@status IS NULL OR status = @status) AND seq > @after ORDER BY seq LIMIT @limit`),
    count: sqlite.prepare(
      'SELECT count(*) AS count FROM webhook_deliveries WHERE (@status IS NULL OR status = @status)',
    ),
  };
}
