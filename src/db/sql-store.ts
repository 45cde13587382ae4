// The Store over a dialect's driver and statements: the same methods, scripts (scripts.ts) and row mappers (rows.ts)
// for SQLite and PostgreSQL. What differs is the dialect's: its statements' SQL (sqlite/statements.ts,
// postgres/statements.ts) and how it runs them (Driver: synchronously in SQLite's group commit, asynchronously in
// PostgreSQL's transactions with retries). docs/architecture.md draws the layers.
import { newId } from '../domain/ids.js';
import { buildPage, decodeCursor, pageHoldsAll, seqBound } from '../domain/pagination.js';
import type {
  Agent,
  ApprovalGrantRecord,
  ApproverAnswer,
  ChatMessage,
  ElicitationDraft,
  ElicitationRecord,
  ElicitationStatus,
  GrantUseRecord,
  JsonObject,
  MessageRecord,
  Page,
  PendingStep,
  ThreadRecord,
  ToolMessageDraft,
  TurnRecord,
} from '../domain/records.js';
import {
  loopWriteRefused,
  refusalOf,
  type AgentGatingPatch,
  type AnswerInput,
  type ResolveResult,
  type RunningCall,
  type RunningTurnLease,
  type StartTurnResult,
  type StepAnswer,
  type Store,
  type LeasedTurn,
  type TurnLease,
  type TurnWriter,
} from '../domain/store.js';
import {
  attemptChanges,
  type WebhookAttemptOutcome,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
} from '../domain/webhook-events.js';
import type { Params, Queries, Result, StatementName } from './catalogue.js';
import {
  agentRecord,
  approverAnswerRecord,
  elicitationRecord,
  grantRecord,
  messageRecord,
  threadRecord,
  turnRecord,
  webhookDeliveryRecord,
  type ElicitationRow,
} from './rows.js';
import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import {
  GENERATED_RECEIPT_KEY_ID,
  publicJwk,
  SealedHere,
  signerFrom,
  verifyingKeys,
  type DecisionRecord,
  type PublicJwk,
  type ReceiptSigner,
} from '../domain/decision-records.js';
import * as scripts from './scripts.js';
import { addPasskey } from './passkey-scripts.js';
import { passkeyChallengeRecord, passkeyRecord } from './passkey-rows.js';
import type { PasskeyChallenge, PasskeyRecord } from '../domain/passkeys.js';
import type { DecisionActor } from '../domain/decision-records.js';
import type { Script, ScriptContext, StartTurnInput } from './scripts.js';

/** How a dialect runs statements and scripts. */
export interface Driver {
  /** A statement's result read outside any write transaction (SQLite has it already: the statement ran when called). */
  read<R>(statement: unknown): R | Promise<R>;
  /** A statement that writes, atomic by itself. `statement` is called where it runs (inside SQLite's transaction). */
  write<R>(statement: () => unknown): Promise<R>;
  /** A script in one transaction of its own: committed when the promise resolves. */
  transaction<T>(script: () => Script<T>): Promise<T>;
  /**
   * A script that writes with one statement (reads may come before it), so atomic without a transaction: PostgreSQL
   * sends it without BEGIN and COMMIT (one round trip for a loop write); SQLite runs it as a transaction.
   */
  autocommit<T>(script: () => Script<T>): Promise<T>;
  /** Resolves once a tool's start record is durable, whatever the durability setting: before the tool runs. */
  syncToolStart(): Promise<void>;
  flush(options?: { soon?: boolean }): Promise<void>;
  /** True for the error of a second active turn started on a thread by another writer at the same moment. */
  isThreadBusy(error: unknown): boolean;
  /** Null when the database answers and every migration of this build is applied; else why not. */
  ping(): Promise<string | null>;
  close(): Promise<void>;
}

type PasskeyChallengeRowList = Result<'takePasskeyChallenge'>;

export interface Dialect {
  driver: Driver;
  statements: Queries;
  json: ScriptContext['json'];
  stored: ScriptContext['stored'];
}

export class SqlStore implements Store {
  readonly #d: Driver;
  readonly #q: Queries;
  /** What the scripts run with. */
  #c: ScriptContext;

  constructor(dialect: Dialect, webhooks: ScriptContext['webhooks'], receipts: ScriptContext['receipts'] = null) {
    this.#d = dialect.driver;
    this.#q = dialect.statements;
    this.#c = {
      q: dialect.statements,
      json: dialect.json,
      stored: dialect.stored,
      webhooks,
      receipts,
      receiptKeys: verifyingKeys(receipts ? [publicJwk(receipts)] : []),
      sealedHere: new SealedHere(),
    };
  }

  /** A read of one statement. */
  #read<K extends StatementName>(name: K, ...params: Params<K>): Result<K> | Promise<Result<K>> {
    return this.#d.read((this.#q[name] as (...p: Params<K>) => unknown)(...params));
  }

  /** A loop write of one statement, refused (nothing written) when it matched no turn row it could write. */
  async #loopWrite<K extends StatementName>(
    turnId: string,
    leaseOwner: string | undefined,
    name: K,
    params: Params<K>[0],
  ): Promise<Result<K>> {
    const q = this.#q[name] as (p: Params<K>[0]) => unknown;
    const rows = await this.#d.write<Result<K>>(() => q(params));
    if (!(rows as unknown[])[0]) throw loopWriteRefused(turnId, leaseOwner);
    return rows;
  }

  /** A transaction: its script, then the decision records it noted (appended last, see `recorded`). */
  #transaction<T>(script: (c: ScriptContext) => Script<T>): Promise<T> {
    return this.#d.transaction(() => scripts.recorded(this.#c, script));
  }

  /** PostgreSQL: a loop write that is one statement without webhooks, and a transaction with their outbox rows. */
  #withWebhooks<T>(script: (c: ScriptContext) => Script<T>): Promise<T> {
    return this.#c.webhooks ? this.#transaction(script) : this.#d.autocommit(() => script(this.#c));
  }

  /**
   * The deployment's generated signing key (docs/receipts.md), made by the first instance that asks and kept in the
   * database; every instance reads the same one.
   */
  async generatedReceiptKey(now: string): Promise<ReceiptSigner> {
    const id = GENERATED_RECEIPT_KEY_ID;
    const candidate = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await this.#d.write(() => this.#q.insertReceiptKey({ id, privateKey: candidate, now }));
    const [row] = await this.#read('receiptKey', { id });
    return signerFrom(id, row!.private_key);
  }

  /**
   * From now on, the scripts write decision records signed with `signer`; a call runs only on an accept signed with one
   * of `published` (the deployment's keys, the signer's among them).
   */
  recordDecisions(signer: ReceiptSigner, published: readonly PublicJwk[] = [publicJwk(signer)]): void {
    this.#c = { ...this.#c, receipts: signer, receiptKeys: verifyingKeys(published) };
  }

  /** The decision records whose time is within [from, to] (either null: open), in chain order, as exported. */
  async decisionRecords(from: string | null, to: string | null): Promise<DecisionRecord[]> {
    return (await this.#read('decisionRecords', { from, to })).map((row) => JSON.parse(row.record) as DecisionRecord);
  }

  // ---- passkeys (docs/receipts.md#passkey-step-up) ---------------------------------------------------------

  async savePasskeyChallenge(challenge: PasskeyChallenge): Promise<void> {
    await this.#d.write(() => this.#q.upsertPasskeyChallenge(challenge));
  }

  async takePasskeyChallenge(userId: string, now: string): Promise<PasskeyChallenge | null> {
    const [row] = await this.#d.write<PasskeyChallengeRowList>(() => this.#q.takePasskeyChallenge({ userId }));
    const taken = row ? passkeyChallengeRecord(row) : null;
    return taken && taken.expiresAt > now ? taken : null;
  }

  addPasskey(passkey: PasskeyRecord, actor: DecisionActor, jwk: JsonWebKey): Promise<boolean> {
    return this.#transaction((c) => addPasskey(c, passkey, actor, jwk));
  }

  async listPasskeys(userId: string): Promise<PasskeyRecord[]> {
    return (await this.#read('userPasskeys', { userId })).map(passkeyRecord);
  }

  async getPasskey(credentialId: string): Promise<PasskeyRecord | null> {
    const [row] = await this.#read('passkey', { credentialId });
    return row ? passkeyRecord(row) : null;
  }

  async advancePasskeyCounter(credentialId: string, counter: number, now: string): Promise<boolean> {
    return (await this.#d.write<number>(() => this.#q.advancePasskeyCounter({ credentialId, counter, now }))) === 1;
  }

  flush(options?: { soon?: boolean }): Promise<void> {
    return this.#d.flush(options);
  }

  ping(): Promise<string | null> {
    return this.#d.ping();
  }

  close(): Promise<void> {
    return this.#d.close();
  }

  // ---- agents -------------------------------------------------------------------------------------------

  async syncAgent(agent: Agent, now: string): Promise<Agent> {
    await this.#transaction((c) => scripts.syncAgent(c, agent, now));
    return (await this.getAgent(agent.id))!;
  }

  async getAgent(id: string): Promise<Agent | null> {
    const [row] = await this.#read('agent', { id });
    return row ? agentRecord(row) : null;
  }

  async listAgents(): Promise<Agent[]> {
    return (await this.#read('agents')).map(agentRecord);
  }

  async updateAgentGating(id: string, patch: AgentGatingPatch, now: string): Promise<Agent | null> {
    const found = await this.#transaction((c) => scripts.updateAgentGating(c, id, patch, now));
    return found ? this.getAgent(id) : null;
  }

  // ---- reads ---------------------------------------------------------------------------------------------

  async getThread(id: string, ownerId: string): Promise<ThreadRecord | null> {
    const [row] = await this.#read('ownedThread', { id, ownerId });
    return row ? threadRecord(row) : null;
  }

  async listThreads(
    ownerId: string,
    agentId: string | null,
    first: number,
    after: string | null,
    newestFirst = false,
  ): Promise<Page<ThreadRecord>> {
    const params = { ownerId, agentId, after: seqBound(decodeCursor(after), newestFirst), limit: first + 1 };
    const rows = await this.#read(newestFirst ? 'threadPageNewest' : 'threadPage', params);
    return buildPage(rows, first, threadRecord);
  }

  async getTurn(id: string, ownerId: string): Promise<TurnRecord | null> {
    const [row] = await this.#read('ownedTurn', { id, ownerId });
    return row ? turnRecord(row) : null;
  }

  async loadTurn(id: string): Promise<TurnRecord | null> {
    const [row] = await this.#read('turn', { id });
    return row ? turnRecord(row) : null;
  }

  async listTurns(threadId: string): Promise<TurnRecord[]> {
    return (await this.#read('threadTurns', { threadId })).map(turnRecord);
  }

  async listThreadMessages(threadId: string): Promise<MessageRecord[]> {
    return (await this.#read('threadMessages', { threadId })).map(messageRecord);
  }

  async listTurnMessages(turnId: string): Promise<MessageRecord[]> {
    return (await this.#read('turnMessages', { turnId })).map(messageRecord);
  }

  async getElicitation(id: string, ownerId: string): Promise<ElicitationRecord | null> {
    const [row] = await this.#read('ownedElicitation', { id, ownerId });
    return row ? elicitationRecord(row) : null;
  }

  async loadElicitation(id: string): Promise<ElicitationRecord | null> {
    const [row] = await this.#read('elicitation', { id });
    return row ? elicitationRecord(row) : null;
  }

  async listApproverAnswers(elicitationIds: readonly string[]): Promise<ApproverAnswer[]> {
    if (elicitationIds.length === 0) return [];
    return (await this.#read('answersOfElicitations', { ids: elicitationIds })).map(approverAnswerRecord);
  }

  async listAcceptedDecisions(turnIds: readonly string[]): Promise<DecisionRecord[]> {
    if (turnIds.length === 0) return [];
    const rows = await this.#read('acceptedDecisionsOfTurns', { ids: turnIds });
    return rows.map((row) => JSON.parse(row.record) as DecisionRecord);
  }

  async listDecisionsOfTurns(turnIds: readonly string[]): Promise<DecisionRecord[]> {
    if (turnIds.length === 0) return [];
    const rows = await this.#read('decisionsOfTurns', { ids: turnIds });
    return rows.map((row) => JSON.parse(row.record) as DecisionRecord);
  }

  async listTurnElicitations(turnId: string): Promise<ElicitationRecord[]> {
    return (await this.#read('turnElicitations', { turnId })).map(elicitationRecord);
  }

  async loadTurns(ids: readonly string[]): Promise<TurnRecord[]> {
    return (await this.#read('turnsByIds', { ids })).map(turnRecord);
  }

  async loadThreads(ids: readonly string[]): Promise<ThreadRecord[]> {
    return (await this.#read('threadsByIds', { ids })).map(threadRecord);
  }

  async listMessagesOfTurns(turnIds: readonly string[]): Promise<MessageRecord[]> {
    return (await this.#read('messagesOfTurns', { ids: turnIds })).map(messageRecord);
  }

  async listMessagesOfThreads(threadIds: readonly string[]): Promise<MessageRecord[]> {
    return (await this.#read('messagesOfThreads', { ids: threadIds })).map(messageRecord);
  }

  async listTurnsOfThreads(threadIds: readonly string[]): Promise<TurnRecord[]> {
    return (await this.#read('turnsOfThreads', { ids: threadIds })).map(turnRecord);
  }

  async listElicitationsOfTurns(turnIds: readonly string[]): Promise<ElicitationRecord[]> {
    return (await this.#read('elicitationsOfTurns', { ids: turnIds })).map(elicitationRecord);
  }

  async listPendingElicitations(
    ownerId: string,
    filter: { threadId?: string | null; agentId?: string | null },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }> {
    // The polling hot path: a first page that holds every match is its own count.
    const params = { ownerId, now, threadId: filter.threadId ?? null, agentId: filter.agentId ?? null };
    const afterSeq = decodeCursor(after);
    const rows = await this.#read('pendingPage', { ...params, after: afterSeq, limit: first + 1 });
    const count = pageHoldsAll(afterSeq, rows.length, first)
      ? rows.length
      : (await this.#read('pendingCount', params))[0].count;
    return { ...buildPage(rows, first, elicitationRecord), totalCount: count };
  }

  async listElicitationsToAnswer(
    viewerId: string,
    roles: readonly string[],
    filter: { threadId?: string | null; agentId?: string | null },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ElicitationRecord> & { totalCount: number }> {
    const params = {
      ownerId: viewerId,
      roles,
      now,
      threadId: filter.threadId ?? null,
      agentId: filter.agentId ?? null,
    };
    const afterSeq = decodeCursor(after);
    const rows = await this.#read('toAnswerPage', { ...params, after: afterSeq, limit: first + 1 });
    const count = pageHoldsAll(afterSeq, rows.length, first)
      ? rows.length
      : (await this.#read('toAnswerCount', params))[0].count;
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
    const statuses = filter.statuses ? [...new Set(filter.statuses)].sort() : null;
    const params = { ownerId, now, threadId: filter.threadId ?? null, agentId: filter.agentId ?? null, statuses };
    const page = { ...params, after: seqBound(afterSeq, newestFirst), limit: first + 1 };
    const rows: ElicitationRow[] = await this.#read(newestFirst ? 'auditPageNewest' : 'auditPage', page);
    const count = pageHoldsAll(afterSeq, rows.length, first)
      ? rows.length
      : (await this.#read('auditCount', params))[0].count;
    return { ...buildPage(rows, first, elicitationRecord), totalCount: count };
  }

  // ---- the loop's atomic steps -----------------------------------------------------------------------------

  async startTurn(input: StartTurnInput): Promise<StartTurnResult> {
    // A start that writes with one statement is atomic without a transaction (on PostgreSQL, no BEGIN and COMMIT).
    const script = (c: ScriptContext) => scripts.startTurn(c, input);
    try {
      return await (scripts.startTurnWritesOnce(input)
        ? this.#d.autocommit(() => script(this.#c))
        : this.#transaction(script));
    } catch (error) {
      if (this.#d.isThreadBusy(error)) return { ok: false, code: 'THREAD_BUSY' };
      // A refusal rolled its transaction back: a key it claimed is not kept.
      return refusalOf(error);
    }
  }

  async recordCallRan(input: scripts.RecordCallRanInput): Promise<StartTurnResult> {
    try {
      return await this.#transaction((c) => scripts.recordCallRan(c, input));
    } catch (error) {
      return refusalOf(error);
    }
  }

  turnWriter(target: LeasedTurn): TurnWriter {
    return this.#writer(target.turnId, target.lease.owner);
  }

  unleasedTurnWriter(turnId: string): TurnWriter {
    return this.#writer(turnId, undefined);
  }

  /** The writer of one turn: `leaseOwner` undefined for a turn started without a lease (no lease check). */
  #writer(turnId: string, leaseOwner: string | undefined): TurnWriter {
    return {
      turnId,
      appendAssistantMessage: ({ message, iterations, now }) =>
        this.#appendAssistantMessage(turnId, message, now, iterations, leaseOwner),
      appendToolMessages: ({ messages, now }) => this.#appendToolMessages(turnId, messages, now, leaseOwner),
      markToolStarted: ({ toolCallId, grantId, now, running }) =>
        this.#markToolStarted(turnId, toolCallId, now, leaseOwner, grantId, running),
      finishTool: ({ message, result, interrupted, now }) =>
        this.#finishTool(turnId, message, now, leaseOwner, result, interrupted ?? false),
      pauseTurn: ({ step, elicitations, text, expiresAt, answer, now }) =>
        this.#pauseTurn(turnId, step, elicitations, text, expiresAt, now, leaseOwner, answer),
      finishTurn: ({ status, now, ...fields }) => this.#finishTurn(turnId, status, fields, now, leaseOwner),
      setIterations: ({ iterations, now }) => this.#setIterations(turnId, iterations, now, leaseOwner),
    };
  }

  // The loop's writes take the lease check into their statement (catalogue.ts), so that a step of the loop costs as
  // few statements as it writes (on PostgreSQL one round trip).

  async #appendAssistantMessage(
    turnId: string,
    message: ChatMessage,
    now: string,
    iterations?: number,
    leaseOwner?: string,
  ): Promise<MessageRecord> {
    const id = newId('msg');
    const [held] = await this.#loopWrite(turnId, leaseOwner, 'appendMessage', {
      turnId,
      owner: leaseOwner ?? null,
      iterations: iterations ?? null,
      now,
      id,
      role: message.role,
      text: message.text,
      toolCalls: message.toolCalls.length ? this.#c.json(message.toolCalls) : null,
      toolCallId: message.toolCallId,
    });
    return { ...message, id, threadId: held!.thread_id, turnId, createdAt: now };
  }

  async #appendToolMessages(
    turnId: string,
    drafts: ToolMessageDraft[],
    now: string,
    leaseOwner?: string,
  ): Promise<void> {
    if (drafts.length === 0) return;
    const params = { turnId, owner: leaseOwner ?? null, now, drafts };
    // With decision records to write, one transaction with them.
    if (this.#c.receipts && drafts.some((d) => d.decision)) {
      await this.#transaction((c) => scripts.appendToolMessages(c, params));
      return;
    }
    const plain = drafts.map(({ toolCallId, text }) => ({ toolCallId, text }));
    await this.#loopWrite(turnId, leaseOwner, 'appendToolMessages', { ...params, drafts: plain });
  }

  async #markToolStarted(
    turnId: string,
    toolCallId: string,
    now: string,
    leaseOwner?: string,
    grantId?: string,
    running?: RunningCall,
  ): Promise<boolean> {
    const script = (c: ScriptContext) =>
      scripts.markToolStarted(c, turnId, toolCallId, now, leaseOwner, grantId, running);
    const once = grantId === undefined && !this.#c.receipts;
    const started = await (once ? this.#d.autocommit(() => script(this.#c)) : this.#transaction(script));
    // The started row must be on disk before the tool's effect happens; the same sync makes every earlier commit
    // durable too (the answer that allowed the call).
    await this.#d.syncToolStart();
    return started;
  }

  async #finishTool(
    turnId: string,
    draft: ToolMessageDraft,
    now: string,
    leaseOwner?: string,
    result?: JsonObject,
    interrupted = false,
  ): Promise<void> {
    const { json } = this.#c;
    const params = {
      turnId,
      owner: leaseOwner ?? null,
      toolCallId: draft.toolCallId,
      now,
      id: newId('msg'),
      text: draft.text,
      // The loop made it storable (the same on every backend); json binds it as the dialect does.
      result: result === undefined ? null : json(result),
    };
    // With decision records, one transaction with its RESULT (or INTERRUPTED) record.
    if (this.#c.receipts) {
      await this.#transaction((c) => scripts.finishTool(c, params, interrupted));
      return;
    }
    await this.#loopWrite(turnId, leaseOwner, 'finishTool', params);
  }

  async #pauseTurn(
    turnId: string,
    step: PendingStep,
    drafts: ElicitationDraft[],
    text: string,
    expiresAt: string,
    now: string,
    leaseOwner?: string,
    answer?: StepAnswer,
  ): Promise<{ turn: TurnRecord; elicitations: ElicitationRecord[] }> {
    const params = {
      id: turnId,
      owner: leaseOwner ?? null,
      step: this.#c.json(step),
      text,
      expiresAt,
      now,
      drafts,
      iterations: answer ? answer.iterations : null,
      answer: answer ? answer.message : null,
    };
    // With decision records, one transaction with the records of its requests.
    const script = (c: ScriptContext) => scripts.pauseTurn(c, params);
    return this.#c.receipts ? this.#transaction(script) : this.#withWebhooks(script);
  }

  async #finishTurn(
    turnId: string,
    status: 'COMPLETED' | 'FAILED' | 'CANCELLED',
    fields: { text?: string | null; error?: string | null; answer?: StepAnswer },
    now: string,
    leaseOwner?: string,
  ): Promise<TurnRecord> {
    const { answer } = fields;
    const params = {
      id: turnId,
      owner: leaseOwner ?? null,
      status,
      text: fields.text ?? null,
      error: fields.error ?? null,
      now,
      iterations: answer ? answer.iterations : null,
      answer: answer ? answer.message : null,
    };
    return this.#withWebhooks((c) => scripts.finishTurn(c, params));
  }

  async #setIterations(turnId: string, iterations: number, now: string, leaseOwner?: string): Promise<void> {
    await this.#loopWrite(turnId, leaseOwner, 'touchTurn', { id: turnId, owner: leaseOwner ?? null, iterations, now });
  }

  async resolveElicitation(input: AnswerInput): Promise<ResolveResult> {
    return this.#transaction((c) => scripts.resolveElicitation(c, input));
  }

  async expireDueTurns(now: string, limit: number): Promise<TurnRecord[]> {
    return this.#transaction((c) => scripts.expireDueTurns(c, now, limit));
  }

  async escalateDueElicitations(now: string, limit: number): Promise<ElicitationRecord[]> {
    return this.#withWebhooks((c) => scripts.escalateDueElicitations(c, now, limit));
  }

  async listRunningTurns(): Promise<TurnRecord[]> {
    return (await this.#read('runningTurns')).map(turnRecord);
  }

  async listUnfinishedToolCalls(turnId: string): Promise<string[]> {
    return (await this.#read('unfinishedToolCalls', { turnId })).map((row) => row.tool_call_id);
  }

  async getToolResult(turnId: string, toolCallId: string): Promise<JsonObject | null> {
    const [row] = await this.#read('toolResult', { turnId, toolCallId });
    return row?.result ? (JSON.parse(row.result) as JsonObject) : null;
  }

  async listRunningLeases(): Promise<RunningTurnLease[]> {
    return (await this.#read('runningLeases')).map((row) => ({
      turnId: row.id,
      owner: row.lease_owner,
      expiresAt: row.lease_expires_at,
      recoveries: row.recoveries,
    }));
  }

  async claimTurn(
    turnId: string,
    expectedOwner: string | null,
    lease: TurnLease,
    now: string,
  ): Promise<{ turn: TurnRecord; recoveries: number } | null> {
    // Compare-and-swap in one UPDATE: of several processes, the first to take the row wins; the others find the
    // lease no longer `expectedOwner`'s and change nothing.
    const params = { id: turnId, expected: expectedOwner, owner: lease.owner, until: lease.until, now };
    const [row] = await this.#d.write<Result<'claimTurn'>>(() => this.#q.claimTurn(params));
    return row ? { turn: turnRecord(row), recoveries: row.recoveries } : null;
  }

  async renewLeases(owner: string, until: string, now: string): Promise<number> {
    return this.#d.write(() => this.#q.renewLeases({ owner, until, now }));
  }

  async holdsLease(turnId: string, owner: string): Promise<boolean> {
    return (await this.#read('leaseOwner', { id: turnId }))[0]?.lease_owner === owner;
  }

  async deleteDeliveredWebhooks(before: string, limit: number): Promise<number> {
    return this.#d.write(() => this.#q.deleteDeliveredWebhooks({ before, limit }));
  }

  async deleteLapsedGrants(before: string, limit: number): Promise<number> {
    return this.#d.write(() => this.#q.deleteLapsedGrants({ before, limit }));
  }

  async deleteExpiredElicitations(before: string, limit: number): Promise<number> {
    return this.#d.write(() => this.#q.deleteExpiredElicitations({ before, limit }));
  }

  async deleteIdempotencyKeys(before: string, limit: number): Promise<number> {
    return this.#d.write(() => this.#q.deleteIdempotencyKeys({ before, limit }));
  }

  async countPendingElicitations(now: string): Promise<number> {
    return (await this.#read('allPendingCount', { now }))[0].count;
  }

  // ---- remembered approvals ---------------------------------------------------------------------------------

  async listGrantCandidates(ownerId: string, agentId: string, toolId: string): Promise<ApprovalGrantRecord[]> {
    return (await this.#read('grantCandidates', { ownerId, agentId, toolId })).map(grantRecord);
  }

  async getApprovalGrant(id: string, ownerId: string): Promise<ApprovalGrantRecord | null> {
    const [row] = await this.#read('ownedGrant', { id, ownerId });
    return row ? grantRecord(row) : null;
  }

  async listApprovalGrants(
    ownerId: string,
    filter: { agentId?: string | null; threadId?: string | null; activeOnly: boolean },
    now: string,
    first: number,
    after: string | null,
  ): Promise<Page<ApprovalGrantRecord>> {
    const rows = await this.#read('grantPage', {
      ownerId,
      agentId: filter.agentId ?? null,
      threadId: filter.threadId ?? null,
      activeOnly: scripts.bit(filter.activeOnly),
      now,
      after: decodeCursor(after),
      limit: first + 1,
    });
    return buildPage(rows, first, grantRecord);
  }

  async markCallerWaiting(turnId: string, ownerId: string, until: string | null): Promise<void> {
    await this.#d.autocommit(() => scripts.markCallerWaiting(this.#c, turnId, ownerId, until));
  }

  async revokeApprovalGrant(id: string, ownerId: string, now: string): Promise<ApprovalGrantRecord | null> {
    return this.#transaction((c) => scripts.revokeApprovalGrant(c, id, ownerId, now));
  }

  async listGrantUses(grantIds: readonly string[]): Promise<GrantUseRecord[]> {
    if (grantIds.length === 0) return [];
    return (await this.#read('grantUses', { ids: grantIds })).map((row) => ({
      grantId: row.grant_id,
      turnId: row.turn_id,
      toolCallId: row.tool_call_id,
      startedAt: row.started_at,
    }));
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
    const params = { owner, endpoints, now, until, limit };
    const rows = await this.#d.write<Result<'claimWebhookDeliveries'>>(() => this.#q.claimWebhookDeliveries(params));
    return rows.sort((a, b) => a.seq - b.seq).map(webhookDeliveryRecord);
  }

  async recordWebhookAttempt(id: string, owner: string, outcome: WebhookAttemptOutcome, now: string): Promise<boolean> {
    const params = { id, owner, ...attemptChanges(outcome, now) };
    return (await this.#d.write(() => this.#q.recordWebhookAttempt(params))) === 1;
  }

  async listWebhookDeliveries(
    filter: { status?: WebhookDeliveryStatus | null },
    first: number,
    after: string | null,
  ): Promise<Page<WebhookDeliveryRecord> & { totalCount: number }> {
    const afterSeq = decodeCursor(after);
    const status = filter.status ?? null;
    const rows = await this.#read('webhookDeliveryPage', { status, after: afterSeq, limit: first + 1 });
    const count = pageHoldsAll(afterSeq, rows.length, first)
      ? rows.length
      : (await this.#read('webhookDeliveryCount', { status }))[0].count;
    return { ...buildPage(rows, first, webhookDeliveryRecord), totalCount: count };
  }
}
