// The embedded store: drizzle on better-sqlite3. Transactions are synchronous (better-sqlite3), so every
// state change below runs start to end without yielding; hot paths use prepared statements.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { and, asc, eq, gt, inArray, isNull, lte, sql } from 'drizzle-orm';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { Agent, ChatMessage, ElicitationAnswer, PendingStep, ToolConfirmationMode } from '../agent/types.js';
import * as schema from './schema.js';
import type {
  AgentGatingPatch, CloseReason, CloseStep, ElicitationDraft, ElicitationRecord, MessageRecord, Page, ResolveResult,
  StartTurnResult, Store, ThreadRecord, ToolMessageDraft, TurnRecord,
} from './store.js';

const { agents, agentToolOverrides, threads, turns, messages, elicitations, toolExecutions } = schema;
const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'drizzle');
const p = sql.placeholder;

export interface SqliteStoreOptions {
  /** A file path or ':memory:'. */
  path: string;
  /**
   * SQLite `synchronous`: FULL (default) fsyncs the WAL on every commit, so a committed answer or
   * tool-start survives power loss; NORMAL survives process crashes only. See docs/durability.md.
   */
  synchronous?: 'FULL' | 'NORMAL';
}

type Db = BetterSQLite3Database<typeof schema>;
type TurnRow = typeof turns.$inferSelect;
type MessageRow = typeof messages.$inferSelect;
type ElicitationRow = typeof elicitations.$inferSelect;
type ThreadRow = typeof threads.$inferSelect;

export function openDatabase(options: SqliteStoreOptions): Database.Database {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const sqlite = new Database(options.path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  return sqlite;
}

export class SqliteStore implements Store {
  readonly db: Db;
  readonly #q;

  constructor(readonly sqlite: Database.Database) {
    this.db = drizzle(sqlite, { schema });
    migrate(this.db, { migrationsFolder: MIGRATIONS });
    this.#q = prepareQueries(this.db, sqlite);
  }

  // ---- agents -------------------------------------------------------------------------------------------

  async syncAgent(agent: Agent, now: string): Promise<Agent> {
    this.db.transaction((tx) => {
      const existing = tx.select().from(agents).where(eq(agents.id, agent.id)).get();
      const definition = {
        name: agent.name, description: agent.description, modelId: agent.modelId, systemPrompt: agent.systemPrompt,
        toolIds: agent.toolIds, maxIterations: agent.maxIterations, updatedAt: now,
      };
      const gating = { requireToolConfirmation: agent.requireToolConfirmation, pauseTtlSeconds: agent.pauseTtlSeconds };
      if (!existing) {
        tx.insert(agents).values({ id: agent.id, ...definition, ...gating, createdAt: now }).run();
      } else {
        tx.update(agents).set(existing.gatingSetByApi ? definition : { ...definition, ...gating }).where(eq(agents.id, agent.id)).run();
        if (existing.gatingSetByApi) return;
        tx.delete(agentToolOverrides).where(eq(agentToolOverrides.agentId, agent.id)).run();
      }
      for (const [toolId, mode] of Object.entries(agent.toolConfirmation)) {
        tx.insert(agentToolOverrides).values({ agentId: agent.id, toolId, mode }).run();
      }
    });
    return (await this.getAgent(agent.id))!;
  }

  async getAgent(id: string): Promise<Agent | null> {
    const row = this.#q.agent.get({ id });
    return row ? this.#agentFromRow(row) : null;
  }

  async listAgents(): Promise<Agent[]> {
    return this.db.select().from(agents).orderBy(asc(agents.id)).all().map((row) => this.#agentFromRow(row));
  }

  async updateAgentGating(id: string, patch: AgentGatingPatch, now: string): Promise<Agent | null> {
    const found = this.db.transaction((tx) => {
      const existing = tx.select({ id: agents.id }).from(agents).where(eq(agents.id, id)).get();
      if (!existing) return false;
      tx.update(agents).set({
        ...(patch.requireToolConfirmation !== undefined && { requireToolConfirmation: patch.requireToolConfirmation }),
        ...(patch.pauseTtlSeconds !== undefined && { pauseTtlSeconds: patch.pauseTtlSeconds }),
        gatingSetByApi: true,
        updatedAt: now,
      }).where(eq(agents.id, id)).run();
      for (const [toolId, mode] of Object.entries(patch.toolConfirmation ?? {})) {
        tx.insert(agentToolOverrides).values({ agentId: id, toolId, mode })
          .onConflictDoUpdate({ target: [agentToolOverrides.agentId, agentToolOverrides.toolId], set: { mode } }).run();
      }
      return true;
    });
    return found ? this.getAgent(id) : null;
  }

  #agentFromRow(row: typeof agents.$inferSelect): Agent {
    const overrides = this.#q.overrides.all({ agentId: row.id });
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
    };
  }

  // ---- reads ---------------------------------------------------------------------------------------------

  async getThread(id: string, ownerId: string): Promise<ThreadRecord | null> {
    const row = this.#q.thread.get({ id });
    return row && row.ownerId === ownerId ? threadRecord(row) : null;
  }

  async listThreads(ownerId: string, agentId: string | null, first: number, after: string | null): Promise<Page<ThreadRecord>> {
    const afterSeq = decodeCursor(after);
    const rows = this.db.select().from(threads)
      .where(and(eq(threads.ownerId, ownerId), agentId ? eq(threads.agentId, agentId) : undefined, gt(threads.seq, afterSeq)))
      .orderBy(asc(threads.seq)).limit(first + 1).all();
    return page(rows, first, threadRecord);
  }

  async getTurn(id: string, ownerId: string): Promise<TurnRecord | null> {
    const row = this.#q.turn.get({ id });
    return row && row.ownerId === ownerId ? turnRecord(row) : null;
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
    const row = this.#q.elicitation.get({ id });
    return row && row.ownerId === ownerId ? elicitationRecord(row) : null;
  }

  async listTurnElicitations(turnId: string): Promise<ElicitationRecord[]> {
    return this.#q.turnElicitations.all({ turnId }).map(elicitationRecord);
  }

  async listPendingElicitations(
    ownerId: string, filter: { threadId?: string | null; agentId?: string | null }, now: string, first: number, after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }> {
    const where = and(
      eq(elicitations.ownerId, ownerId),
      eq(elicitations.status, 'PENDING'),
      gt(elicitations.expiresAt, now),
      filter.threadId ? eq(elicitations.threadId, filter.threadId) : undefined,
      filter.agentId ? eq(elicitations.agentId, filter.agentId) : undefined,
    );
    const rows = this.db.select().from(elicitations).where(and(where, gt(elicitations.seq, decodeCursor(after))))
      .orderBy(asc(elicitations.seq)).limit(first + 1).all();
    const [{ count }] = this.db.select({ count: sql<number>`count(*)` }).from(elicitations).where(where).all() as [{ count: number }];
    return { ...page(rows, first, elicitationRecord), totalCount: count };
  }

  // ---- the loop's atomic steps -----------------------------------------------------------------------------

  async startTurn(
    input: { turnId: string; newThreadId: string; threadId: string | null; agentId: string; ownerId: string; message: string; now: string },
    closeStep: CloseStep,
  ): Promise<StartTurnResult> {
    return this.sqlite.transaction((): StartTurnResult => {
      const { now } = input;
      let thread: ThreadRecord;
      let superseded: TurnRecord | null = null;
      if (input.threadId) {
        const row = this.#q.thread.get({ id: input.threadId });
        if (!row || row.ownerId !== input.ownerId) return { ok: false, code: 'NOT_FOUND' };
        if (row.agentId !== input.agentId) return { ok: false, code: 'WRONG_AGENT' };
        thread = threadRecord(row);
        const active = this.#q.activeTurn.get({ threadId: thread.id });
        if (active?.status === 'RUNNING') return { ok: false, code: 'THREAD_BUSY' };
        if (active?.status === 'PAUSED') {
          const expired = active.expiresAt !== null && active.expiresAt <= now;
          superseded = this.#closePausedTurn(turnRecord(active), expired ? 'expired' : 'superseded', closeStep, now);
        }
      } else {
        this.db.insert(threads).values({ id: input.newThreadId, agentId: input.agentId, ownerId: input.ownerId, createdAt: now }).run();
        thread = { id: input.newThreadId, agentId: input.agentId, ownerId: input.ownerId, createdAt: now };
      }
      this.#q.insertTurn.run({ id: input.turnId, threadId: thread.id, agentId: input.agentId, ownerId: input.ownerId, now });
      this.#appendMessage(input.turnId, thread.id, { role: 'USER', text: input.message, toolCalls: [], toolCallId: null }, now);
      return { ok: true, thread, turn: turnRecord(this.#q.turn.get({ id: input.turnId })!), superseded };
    }).immediate();
  }

  async appendAssistantMessage(turnId: string, message: ChatMessage, now: string): Promise<MessageRecord> {
    const turn = this.#q.turn.get({ id: turnId })!;
    return this.#appendMessage(turnId, turn.threadId, message, now);
  }

  async appendToolMessages(turnId: string, drafts: ToolMessageDraft[], now: string): Promise<void> {
    if (drafts.length === 0) return;
    const turn = this.#q.turn.get({ id: turnId })!;
    this.sqlite.transaction(() => {
      for (const draft of drafts) this.#appendToolMessage(turnId, turn.threadId, draft, now);
    })();
  }

  async markToolStarted(turnId: string, toolCallId: string, now: string): Promise<boolean> {
    return this.#q.startTool.run({ turnId, toolCallId, now }).changes === 1;
  }

  async finishTool(turnId: string, draft: ToolMessageDraft, now: string): Promise<void> {
    const turn = this.#q.turn.get({ id: turnId })!;
    this.sqlite.transaction(() => {
      this.#appendToolMessage(turnId, turn.threadId, draft, now);
      this.#q.finishTool.run({ turnId, toolCallId: draft.toolCallId, now });
    })();
  }

  async pauseTurn(turnId: string, step: PendingStep, drafts: ElicitationDraft[], text: string, expiresAt: string, now: string): Promise<TurnRecord> {
    return this.sqlite.transaction(() => {
      const turn = this.#q.turn.get({ id: turnId })!;
      for (const draft of drafts) {
        this.#q.insertElicitation.run({
          id: draft.id, turnId, threadId: turn.threadId, agentId: turn.agentId, ownerId: turn.ownerId, toolCallId: draft.toolCallId,
          request: JSON.stringify(draft.request), toolCall: JSON.stringify(draft.toolCall), now, expiresAt,
        });
      }
      this.#q.pauseTurn.run({ id: turnId, step: JSON.stringify(step), text, expiresAt, now });
      return turnRecord(this.#q.turn.get({ id: turnId })!);
    })();
  }

  async finishTurn(turnId: string, status: 'COMPLETED' | 'FAILED' | 'CANCELLED', fields: { text?: string | null; error?: string | null }, now: string): Promise<TurnRecord> {
    this.db.update(turns).set({ status, text: fields.text ?? null, error: fields.error ?? null, step: null, expiresAt: null, updatedAt: now })
      .where(eq(turns.id, turnId)).run();
    return turnRecord(this.#q.turn.get({ id: turnId })!);
  }

  async setIterations(turnId: string, iterations: number, now: string): Promise<void> {
    this.#q.setIterations.run({ id: turnId, iterations, now });
  }

  async resolveElicitation(
    input: { elicitationId: string; ownerId: string; answer: ElicitationAnswer; now: string },
    closeStep: CloseStep,
  ): Promise<ResolveResult> {
    return this.sqlite.transaction((): ResolveResult => {
      const { now, answer } = input;
      const row = this.#q.elicitation.get({ id: input.elicitationId });
      if (!row || row.ownerId !== input.ownerId) return { kind: 'not_found' };
      const turnRow = this.#q.turn.get({ id: row.turnId })!;
      const current = () => ({ elicitation: elicitationRecord(this.#q.elicitation.get({ id: row.id })!), turn: turnRecord(this.#q.turn.get({ id: row.turnId })!) });
      if (row.status !== 'PENDING') {
        if (row.status === 'EXPIRED') return { kind: 'expired', ...current(), changed: false };
        const same = row.responseAction === answer.action && sameJson(row.responseContent ?? null, answer.content);
        return { kind: same ? 'duplicate' : 'already_resolved', ...current() };
      }
      // Never fail open: an answer after expiresAt runs nothing, whether or not the sweeper got there first.
      if (row.expiresAt <= now) {
        this.#closePausedTurn(turnRecord(turnRow), 'expired', closeStep, now);
        return { kind: 'expired', ...current(), changed: true };
      }
      const status = answer.action === 'ACCEPT' ? 'ACCEPTED' : answer.action === 'DECLINE' ? 'DECLINED' : 'CANCELLED';
      this.#q.answer.run({
        id: row.id, status, action: answer.action, content: answer.content === null ? null : JSON.stringify(answer.content),
        by: input.ownerId, now,
      });
      if (answer.action === 'CANCEL') {
        this.#closePausedTurn(turnRecord(turnRow), 'cancelled', closeStep, now);
        return { kind: 'cancelled', ...current() };
      }
      const waiting = this.#q.pendingOfTurn.get({ turnId: row.turnId });
      if (waiting) return { kind: 'recorded', ...current() };
      // The last answer: claim the turn. Only one caller can move it from PAUSED to RUNNING.
      const claimed = this.#q.resumeTurn.run({ id: row.turnId, now }).changes === 1;
      return { kind: claimed ? 'resume' : 'recorded', ...current() };
    }).immediate();
  }

  async expireDueTurns(now: string, limit: number, closeStep: CloseStep): Promise<TurnRecord[]> {
    return this.sqlite.transaction(() => {
      const due = this.db.select().from(turns)
        .where(and(eq(turns.status, 'PAUSED'), lte(turns.expiresAt, now))).limit(limit).all();
      return due.map((row) => this.#closePausedTurn(turnRecord(row), 'expired', closeStep, now));
    }).immediate();
  }

  async listRunningTurns(): Promise<TurnRecord[]> {
    return this.db.select().from(turns).where(eq(turns.status, 'RUNNING')).all().map(turnRecord);
  }

  async listUnfinishedToolCalls(turnId: string): Promise<string[]> {
    return this.db.select({ id: toolExecutions.toolCallId }).from(toolExecutions)
      .where(and(eq(toolExecutions.turnId, turnId), isNull(toolExecutions.finishedAt))).all().map((r) => r.id);
  }

  close(): void {
    this.sqlite.close();
  }

  // ---- helpers (inside a transaction) ------------------------------------------------------------------------

  /** PAUSED turn to CANCELLED or EXPIRED; its pending elicitations likewise; its open calls get TOOL messages. */
  #closePausedTurn(turn: TurnRecord, reason: CloseReason, closeStep: CloseStep, now: string): TurnRecord {
    const final = reason === 'expired' ? 'EXPIRED' : 'CANCELLED';
    this.db.update(elicitations).set({ status: final, resolvedAt: now })
      .where(and(eq(elicitations.turnId, turn.id), eq(elicitations.status, 'PENDING'))).run();
    if (turn.step) for (const draft of closeStep(turn.step, reason)) this.#appendToolMessage(turn.id, turn.threadId, draft, now);
    this.db.update(turns).set({ status: final, step: null, updatedAt: now }).where(eq(turns.id, turn.id)).run();
    return turnRecord(this.#q.turn.get({ id: turn.id })!);
  }

  #appendToolMessage(turnId: string, threadId: string, draft: ToolMessageDraft, now: string): void {
    this.#appendMessage(turnId, threadId, { role: 'TOOL', text: draft.text, toolCalls: [], toolCallId: draft.toolCallId }, now);
  }

  #appendMessage(turnId: string, threadId: string, message: ChatMessage, now: string): MessageRecord {
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    this.#q.insertMessage.run({
      id, threadId, turnId, role: message.role, text: message.text,
      toolCalls: message.toolCalls.length ? JSON.stringify(message.toolCalls) : null, toolCallId: message.toolCallId, now,
    });
    return { ...message, id, threadId, turnId, createdAt: now };
  }
}

/** Statements of the hot paths, prepared once. JSON columns are bound as strings the columns already hold. */
function prepareQueries(db: Db, sqlite: Database.Database) {
  const raw = (statement: string) => sqlite.prepare(statement);
  return {
    agent: db.select().from(agents).where(eq(agents.id, p('id'))).prepare(),
    overrides: db.select().from(agentToolOverrides).where(eq(agentToolOverrides.agentId, p('agentId'))).prepare(),
    thread: db.select().from(threads).where(eq(threads.id, p('id'))).prepare(),
    turn: db.select().from(turns).where(eq(turns.id, p('id'))).prepare(),
    threadTurns: db.select().from(turns).where(eq(turns.threadId, p('threadId'))).orderBy(asc(turns.createdAt), asc(sql`rowid`)).prepare(),
    activeTurn: db.select().from(turns)
      .where(and(eq(turns.threadId, p('threadId')), inArray(turns.status, ['RUNNING', 'PAUSED']))).limit(1).prepare(),
    threadMessages: db.select().from(messages).where(eq(messages.threadId, p('threadId'))).orderBy(asc(messages.seq)).prepare(),
    turnMessages: db.select().from(messages).where(eq(messages.turnId, p('turnId'))).orderBy(asc(messages.seq)).prepare(),
    elicitation: db.select().from(elicitations).where(eq(elicitations.id, p('id'))).prepare(),
    turnElicitations: db.select().from(elicitations).where(eq(elicitations.turnId, p('turnId'))).orderBy(asc(elicitations.seq)).prepare(),
    pendingOfTurn: db.select({ id: elicitations.id }).from(elicitations)
      .where(and(eq(elicitations.turnId, p('turnId')), eq(elicitations.status, 'PENDING'))).limit(1).prepare(),
    insertTurn: raw(`INSERT INTO turns (id, thread_id, agent_id, owner_id, status, iterations, created_at, updated_at)
      VALUES (@id, @threadId, @agentId, @ownerId, 'RUNNING', 0, @now, @now)`),
    insertMessage: raw(`INSERT INTO messages (id, thread_id, turn_id, role, text, tool_calls, tool_call_id, created_at)
      VALUES (@id, @threadId, @turnId, @role, @text, @toolCalls, @toolCallId, @now)`),
    insertElicitation: raw(`INSERT INTO elicitations (id, turn_id, thread_id, agent_id, owner_id, tool_call_id, status, request, tool_call, created_at, expires_at)
      VALUES (@id, @turnId, @threadId, @agentId, @ownerId, @toolCallId, 'PENDING', @request, @toolCall, @now, @expiresAt)`),
    pauseTurn: raw(`UPDATE turns SET status = 'PAUSED', step = @step, text = @text, expires_at = @expiresAt, updated_at = @now WHERE id = @id`),
    resumeTurn: raw(`UPDATE turns SET status = 'RUNNING', text = NULL, expires_at = NULL, updated_at = @now WHERE id = @id AND status = 'PAUSED'`),
    setIterations: raw('UPDATE turns SET iterations = @iterations, updated_at = @now WHERE id = @id'),
    answer: raw(`UPDATE elicitations SET status = @status, response_action = @action, response_content = @content, resolved_by = @by,
      resolved_at = @now WHERE id = @id AND status = 'PENDING'`),
    startTool: raw('INSERT OR IGNORE INTO tool_executions (turn_id, tool_call_id, started_at) VALUES (@turnId, @toolCallId, @now)'),
    finishTool: raw('UPDATE tool_executions SET finished_at = @now WHERE turn_id = @turnId AND tool_call_id = @toolCallId'),
  };
}

function threadRecord(row: ThreadRow): ThreadRecord {
  return { id: row.id, agentId: row.agentId, ownerId: row.ownerId, createdAt: row.createdAt };
}

function turnRecord(row: TurnRow): TurnRecord {
  return {
    id: row.id, threadId: row.threadId, agentId: row.agentId, ownerId: row.ownerId, status: row.status, text: row.text,
    error: row.error, iterations: row.iterations, step: (row.step as PendingStep | null) ?? null,
    createdAt: row.createdAt, updatedAt: row.updatedAt, expiresAt: row.expiresAt,
  };
}

function messageRecord(row: MessageRow): MessageRecord {
  return {
    id: row.id, threadId: row.threadId, turnId: row.turnId, role: row.role, text: row.text,
    toolCalls: (row.toolCalls as MessageRecord['toolCalls'] | null) ?? [], toolCallId: row.toolCallId, createdAt: row.createdAt,
  };
}

function elicitationRecord(row: ElicitationRow): ElicitationRecord {
  return {
    id: row.id, turnId: row.turnId, threadId: row.threadId, agentId: row.agentId, ownerId: row.ownerId, toolCallId: row.toolCallId,
    status: row.status, request: row.request as ElicitationRecord['request'], toolCall: row.toolCall as ElicitationRecord['toolCall'],
    response: row.responseAction
      ? { action: row.responseAction, content: (row.responseContent as ElicitationAnswer['content']) ?? null }
      : null,
    resolvedBy: row.resolvedBy, resolvedAt: row.resolvedAt, createdAt: row.createdAt, expiresAt: row.expiresAt,
  };
}

function page<R extends { seq: number }, T>(rows: R[], first: number, map: (row: R) => T): Page<T> {
  const items = rows.slice(0, first);
  const last = items.at(-1);
  return {
    items: items.map(map),
    cursors: items.map((row) => encodeCursor(row.seq)),
    hasNextPage: rows.length > first,
    endCursor: last ? encodeCursor(last.seq) : null,
  };
}

function encodeCursor(seq: number): string {
  return Buffer.from(`seq:${seq}`).toString('base64url');
}

/** A malformed cursor reads as the start: cursors are opaque, and a bad one must not fail the query. */
function decodeCursor(cursor: string | null): number {
  if (!cursor) return 0;
  const match = /^seq:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? Number(match[1]) : 0;
}

/** Compare two JSON values regardless of key order. */
function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
