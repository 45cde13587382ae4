// The transaction scripts: each change of state that takes more than one statement, written once for both dialects.
// A script is a generator: it yields a statement of the catalogue (`yield c.q.name(params)`) and gets its result back
// (catalogue.ts), so one script runs synchronously on SQLite (inside its group commit: better-sqlite3 transactions
// must not await) and asynchronously on PostgreSQL (inside its transaction, with its retries). The rules themselves
// are the domain's (src/domain/); a script reads rows, asks them, and writes what they say.
import type { KeyObject } from 'node:crypto';
import { agentApproversColumn, overrideChanges, overrideRows } from '../domain/agent-overrides.js';
import { decideAnswer, resumesTurn, type AnswerDecision } from '../domain/answer-rules.js';
import { canonicalJson } from '../domain/canonical-json.js';
import {
  acceptanceProblem,
  type SealedHere,
  argumentsDigest,
  policyDigest,
  resultDigest,
  sealRecord,
  type DecisionDraft,
  type DecisionKind,
  type DecisionRecord,
  type ReceiptSigner,
} from '../domain/decision-records.js';
import { grantStateAt, revokedAtFor } from '../domain/grants.js';
import { isGateway } from '../domain/gateway.js';
import { startTurnFingerprint } from '../domain/idempotency.js';
import { decideApproverAnswer, tallyAnswers } from '../domain/quorum.js';
import { newId } from '../domain/ids.js';
import type {
  Agent,
  ApprovalGrantRecord,
  AnswerIdentity,
  ApproverAnswer,
  CloseReason,
  ElicitationAnswer,
  ElicitationRecord,
  JsonObject,
  ThreadRecord,
  ToolCall,
  ToolMessageDecision,
  TurnRecord,
} from '../domain/records.js';
import {
  AcceptanceUnverifiedError,
  GrantLapsedError,
  loopWriteRefused,
  StartRefused,
  type AgentGatingPatch,
  type AnswerInput,
  type ResolveResult,
  type RunningCall,
  type StartTurnResult,
  type Store,
} from '../domain/store.js';
import { recordedAnswer } from '../domain/stored-answer.js';
import {
  closePausedTurn as closing,
  decideActiveTurn,
  decideThread,
  pausedElicitations,
  startedTurn,
} from '../domain/turn-rules.js';
import {
  elicitationCounted,
  elicitationsClosed,
  elicitationsClosedBy,
  elicitationsEscalated,
  elicitationsRequested,
  outboxRows,
  turnEnded,
  type WebhookEvent,
  type WebhookSubscription,
} from '../domain/webhook-events.js';
import type { Params, Queries } from './catalogue.js';
import {
  agentRecord,
  approverAnswerRecord,
  elicitationRecord,
  grantRecord,
  threadRecord,
  turnRecord,
  type AgentRow,
  type ElicitationAnswerRow,
  type ElicitationRow,
  type GrantRow,
  type IdempotencyKeyRow,
  type ThreadRow,
  type TurnRow,
} from './rows.js';

/** What a script runs with: the dialect's statements and how it binds JSON. One per store. */
export interface ScriptContext {
  readonly q: Queries;
  /** A JSON parameter as the dialect binds it. */
  readonly json: (value: unknown) => string;
  /** A JSON value as the dialect stores it (PostgreSQL replaces what jsonb refuses); null: as it is given (SQLite). */
  readonly stored: (<T>(value: T) => T) | null;
  /** The endpoints subscribed to events; null without any: no outbox row is written. */
  readonly webhooks: readonly WebhookSubscription[] | null;
  /** The deployment's signing key for decision records; null: no records are written. */
  readonly receipts: ReceiptSigner | null;
  /** The deployment's published keys by key id: what a record must be signed with to let a call run. */
  readonly receiptKeys: ReadonlyMap<string, KeyObject>;
  /** The records this store signed lately: read back unchanged, their signatures need no verifying again. */
  readonly sealedHere: SealedHere;
  /** The decision records of the running transaction, appended at its end (`recorded`). */
  readonly decisions?: DecisionDraft[];
}

/** A script: yields statements, gets their results back (typed at each yield by the catalogue's Result). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each yield's result is the statement's (catalogue.ts)
export type Script<T> = Generator<unknown, T, any>;

/** Booleans are bound as 0/1: better-sqlite3 binds no booleans, and PostgreSQL reads '1' and '0' as booleans. */
export const bit = (value: boolean): number => (value ? 1 : 0);
const bitOrNull = (value: boolean | null | undefined): number | null => (value == null ? null : bit(value));
/** A nullable JSON column's parameter. */
const nullOrJson = (c: ScriptContext, value: unknown): string | null => (value == null ? null : c.json(value));

// ---- agents -----------------------------------------------------------------------------------------------------

/** Create the agent from the config, or update it; its gating only while no admin changed it (gating_set_by_api). */
export function* syncAgent(c: ScriptContext, agent: Agent, now: string): Script<void> {
  // Instances starting at once each sync the config: the row lock of the upsert makes them one after the other.
  const [row]: { gating_set_by_api: boolean | number }[] = yield c.q.upsertAgent({
    id: agent.id,
    name: agent.name,
    description: agent.description,
    modelId: agent.modelId,
    systemPrompt: agent.systemPrompt,
    toolIds: c.json(agent.toolIds),
    maxIterations: agent.maxIterations,
    requireToolConfirmation: bit(agent.requireToolConfirmation),
    pauseTtlSeconds: agent.pauseTtlSeconds,
    allowEdit: bit(agent.allowEdit),
    approvers: nullOrJson(c, agentApproversColumn(agent)),
    now,
  });
  if (row!.gating_set_by_api) return;
  yield c.q.deleteOverrides({ agentId: agent.id });
  const overrides = overrideRows(agent);
  if (overrides.length) yield c.q.insertOverrides({ agentId: agent.id, overrides });
}

/** False when there is no such agent. */
export function* updateAgentGating(
  c: ScriptContext,
  id: string,
  patch: AgentGatingPatch,
  now: string,
): Script<boolean> {
  const changed: number = yield c.q.updateAgentGating({
    id,
    requireToolConfirmation: bitOrNull(patch.requireToolConfirmation),
    pauseTtlSeconds: patch.pauseTtlSeconds ?? null,
    allowEdit: bitOrNull(patch.allowEdit),
    now,
  });
  if (changed !== 1) return false;
  // One statement per tool named (an admin's change, rare): each sets only what the patch names for it.
  for (const { toolId, set } of overrideChanges(patch)) {
    yield c.q.upsertOverride({
      agentId: id,
      toolId,
      columns: Object.keys(set) as (keyof typeof set)[],
      mode: set.mode ?? null,
      rules: set.rules ? c.json(set.rules) : null,
      allowEdit: bitOrNull(set.allowEdit),
    });
  }
  return true;
}

// ---- the loop's atomic steps --------------------------------------------------------------------------------------

export type StartTurnInput = Parameters<Store['startTurn']>[0];

/**
 * Whether startTurn writes with one statement after its reads (so that it needs no transaction of its own): on a new
 * thread, without a key to claim or a gateway call to save.
 */
export function startTurnWritesOnce(input: StartTurnInput): boolean {
  return input.threadId === null && input.idempotencyKey === undefined && input.call === undefined;
}

/**
 * New thread or existing one (of this owner and agent); supersedes a PAUSED turn, refuses a RUNNING one. A refusal
 * throws StartRefused (the caller returns it), so the transaction rolls back with the idempotency key it claimed.
 */
export function* startTurn(c: ScriptContext, input: StartTurnInput): Script<StartTurnResult> {
  const { now } = input;
  // The key first, before any lock: a second start with the key waits on this claim until it commits (or rolls
  // back), then finds its turn; taken after the thread's lock, it would find the thread busy with that very turn.
  if (input.idempotencyKey !== undefined) {
    const prior = yield* claimIdempotencyKey(c, input, input.idempotencyKey);
    if (prior) return prior;
  }
  // The agent as committed now: the turn runs with it (a gating change committed before this applies).
  const [agentRow]: AgentRow[] = yield c.q.agent({ id: input.agentId });
  if (!agentRow) throw new StartRefused({ code: 'NOT_FOUND', of: 'agent' });
  if (isGateway({ modelId: agentRow.model_id }) !== (input.call !== undefined)) {
    // A gateway's turns are its clients' calls; an agent's, messages to its model.
    throw new StartRefused(
      input.call ? { code: 'NOT_FOUND', of: 'agent' } : { code: 'INVALID_INPUT', reason: 'GATEWAY' },
    );
  }
  let thread: ThreadRecord;
  let superseded: TurnRecord | null = null;
  // The thread's row lock: two turns started on one thread at once go one after the other, and the second sees the
  // first's turn as active.
  let found: ThreadRow | undefined;
  if (input.threadId !== null) [found] = yield c.q.lockOwnedThread({ id: input.threadId, ownerId: input.ownerId });
  const where = decideThread(input, found ? threadRecord(found) : null);
  if (where.kind === 'refuse') throw new StartRefused(where.refusal);
  if (where.kind === 'existing') {
    thread = where.thread;
    const [row]: TurnRow[] = yield c.q.lockActiveTurn({ threadId: thread.id });
    const active = row ? turnRecord(row) : null;
    const decision = decideActiveTurn(active, now);
    if (decision.kind === 'refuse') throw new StartRefused(decision.refusal);
    if (decision.kind === 'supersede') superseded = yield* closePausedTurn(c, active!, decision.reason, now);
  } else {
    thread = { id: input.newThreadId, agentId: input.agentId, ownerId: input.ownerId, createdAt: now };
  }
  const messageId = newId('msg');
  yield c.q.insertTurn({
    id: input.turnId,
    threadId: thread.id,
    newThread: where.kind !== 'existing',
    agentId: input.agentId,
    ownerId: input.ownerId,
    now,
    leaseOwner: input.lease?.owner ?? null,
    leaseUntil: input.lease?.until ?? null,
    messageId,
    text: input.message,
  });
  // A gateway's call is the turn's step, saved with its start: the loop finds it open and gates it.
  if (input.call) {
    yield c.q.insertMessage({
      id: newId('msg'),
      threadId: thread.id,
      turnId: input.turnId,
      role: 'ASSISTANT',
      text: null,
      toolCalls: c.json([input.call]),
      toolCallId: null,
      now,
    });
  }
  // What the rows now hold, without reading them back.
  const turn = startedTurn(
    { id: input.turnId, threadId: thread.id, agentId: input.agentId, ownerId: input.ownerId },
    now,
  );
  const message = {
    id: messageId,
    threadId: thread.id,
    turnId: input.turnId,
    role: 'USER' as const,
    text: input.message,
    toolCalls: [],
    toolCallId: null,
    createdAt: now,
  };
  return { ok: true, thread, turn, superseded, agent: agentRecord(agentRow), message };
}

export type RecordCallRanInput = Parameters<Store['recordCallRan']>[0];

/**
 * A gateway's read-only call that ran unasked, recorded whole (Store.recordCallRan): the start, the journal started
 * and finished with the result, the turn COMPLETED; the RAN and RESULT records with them.
 */
export function* recordCallRan(c: ScriptContext, input: RecordCallRanInput): Script<StartTurnResult> {
  const { turnId, call, now } = input;
  const started = yield* startTurn(c, input);
  if (!started.ok || started.replayed) return started;
  const owner = input.lease?.owner;
  yield* markToolStarted(c, turnId, call.id, now, owner, undefined, input.running);
  const end = input.finishedAt;
  const message = { turnId, owner: owner ?? null, toolCallId: call.id, now: end, id: newId('msg'), text: input.text };
  yield* finishTool(c, { ...message, result: c.json(input.result) }, false);
  const turn = yield* finishTurn(c, {
    id: turnId,
    owner: owner ?? null,
    status: 'COMPLETED',
    text: input.text,
    error: null,
    now: end,
    iterations: null,
    answer: null,
  });
  return { ...started, turn };
}

/**
 * Claims the owner's key for this request's turn; null once claimed. Claimed before: the result that request gets
 * again (its turn as it is now; on PostgreSQL each statement sees what committed before it), or IDEMPOTENCY_KEY_REUSED.
 */
function* claimIdempotencyKey(c: ScriptContext, input: StartTurnInput, key: string): Script<StartTurnResult | null> {
  const fingerprint = startTurnFingerprint(input);
  const claimed: number = yield c.q.claimIdempotencyKey({
    ownerId: input.ownerId,
    key,
    fingerprint,
    turnId: input.turnId,
    threadId: input.threadId ?? input.newThreadId,
    now: input.now,
  });
  if (claimed) return null;
  const [prior]: IdempotencyKeyRow[] = yield c.q.idempotencyKey({ ownerId: input.ownerId, key });
  if (prior!.fingerprint !== fingerprint) return { ok: false, code: 'IDEMPOTENCY_KEY_REUSED' };
  const [turn]: TurnRow[] = yield c.q.turn({ id: prior!.turn_id });
  const [thread]: ThreadRow[] = yield c.q.ownedThread({ id: prior!.thread_id, ownerId: input.ownerId });
  return { ok: true, replayed: true, thread: threadRecord(thread!), turn: turnRecord(turn!) };
}

/**
 * Journals the call as started; false if it was before. With `grantId`, only while that remembered approval holds
 * (else GrantLapsedError, nothing written): the grant's row is held FOR SHARE where writers run at once, so a revoke
 * commits wholly before the check or after the start.
 */
export function* markToolStarted(
  c: ScriptContext,
  turnId: string,
  toolCallId: string,
  now: string,
  leaseOwner: string | undefined,
  grantId: string | undefined,
  running?: RunningCall,
): Script<boolean> {
  if (grantId !== undefined) {
    const [grant]: GrantRow[] = yield c.q.lockGrant({ id: grantId });
    // A call started before (a crash mid-run) reports so below, whatever became of its grant since; only a new start
    // needs the grant to hold.
    const startedBefore: unknown[] = yield c.q.toolStartedBefore({ turnId, toolCallId });
    if (startedBefore.length === 0 && (!grant || grantStateAt(grantRecord(grant), now) !== 'ACTIVE')) {
      throw new GrantLapsedError(grantId);
    }
  }
  const [row]: { started: number }[] = yield c.q.startTool({
    turnId,
    owner: leaseOwner ?? null,
    toolCallId,
    now,
    grantId: grantId ?? null,
  });
  if (!row) throw loopWriteRefused(turnId, leaseOwner);
  if (row.started === 1 && c.receipts) yield* appendRanDecision(c, { turnId, toolCallId, now, grantId, running });
  return row.started === 1;
}

/**
 * The RAN record of a call: the arguments that run (those given, else the accepted ones, edited or not, else the
 * model's). A call whose request was accepted runs only if that request's ACCEPTED record verifies and holds these
 * arguments (acceptanceProblem): else AcceptanceUnverifiedError, and the start rolls back with it.
 */
function* appendRanDecision(
  c: ScriptContext,
  call: { turnId: string; toolCallId: string; now: string; grantId: string | undefined; running?: RunningCall },
): Script<void> {
  const { turnId, toolCallId, now, grantId, running } = call;
  let agentId: string;
  let asked: ElicitationRecord | undefined;
  let stepCall: ToolCall | undefined;
  if (running?.unasked) {
    agentId = running.unasked.agentId;
  } else {
    const [turnRow]: TurnRow[] = yield c.q.turn({ id: turnId });
    const turn = turnRecord(turnRow!);
    agentId = turn.agentId;
    asked = ((yield c.q.turnElicitations({ turnId })) as ElicitationRow[])
      .map(elicitationRecord)
      .find((e) => e.toolCallId === toolCallId && e.status === 'ACCEPTED');
    stepCall = turn.step?.calls.find((s) => s.toolCall.id === toolCallId)?.toolCall;
  }
  // A step that paused is stored with its turn; one that ran unasked is not: the loop says what runs.
  const toolId = running?.toolId ?? asked?.toolCall.toolId ?? stepCall?.toolId;
  const args =
    running?.arguments ?? (asked ? (asked.response?.arguments ?? asked.toolCall.arguments) : stepCall?.arguments);
  if (toolId === undefined || args === undefined) return;
  const digest = argumentsDigest(args);
  if (asked) {
    const problem = acceptanceProblem(
      yield* decisionsOfCall(c, turnId, toolCallId),
      asked.id,
      digest,
      c.receiptKeys,
      c.sealedHere,
    );
    if (problem) throw new AcceptanceUnverifiedError(asked.id, problem);
  }
  recordDecision(c, {
    kind: 'RAN',
    turnId,
    toolCallId,
    elicitationId: asked?.id ?? null,
    agentId,
    toolId,
    argsDigest: digest,
    policyDigest: asked ? policyDigest(asked.approval) : null,
    actor: null,
    at: now,
    toolDefinitionDigest: running?.toolDefinitionDigest ?? asked?.toolCall.toolDefinitionDigest ?? null,
    ...(grantId !== undefined && { grantId }),
  });
}

/** The decision records of one call, in chain order. */
function* decisionsOfCall(c: ScriptContext, turnId: string, toolCallId: string): Script<DecisionRecord[]> {
  const rows: { record: string }[] = yield c.q.decisionsOfCall({ turnId, toolCallId });
  return rows.map((row) => JSON.parse(row.record) as DecisionRecord);
}

/**
 * The record of what became of a started call (its RESULT, or INTERRUPTED), naming what its RAN record named; none
 * for a call started before records were kept.
 */
function* appendAfterRan(
  c: ScriptContext,
  turnId: string,
  toolCallId: string,
  outcome: Pick<DecisionDraft, 'kind' | 'resultDigest'>,
  now: string,
): Script<void> {
  if (!c.receipts) return;
  // Started in this very transaction (a call recorded whole), its RAN is noted, not yet in the chain.
  const isRan = (r: DecisionDraft) => r.kind === 'RAN' && r.turnId === turnId && r.toolCallId === toolCallId;
  const ran = c.decisions?.findLast(isRan) ?? (yield* decisionsOfCall(c, turnId, toolCallId)).findLast(isRan);
  if (!ran) return;
  recordDecision(c, {
    ...outcome,
    turnId,
    toolCallId,
    elicitationId: ran.elicitationId,
    agentId: ran.agentId,
    toolId: ran.toolId,
    argsDigest: ran.argsDigest,
    policyDigest: ran.policyDigest,
    actor: null,
    at: now,
    toolDefinitionDigest: ran.toolDefinitionDigest ?? null,
    ...(ran.grantId !== undefined && { grantId: ran.grantId }),
  });
}

/** Journals a started call finished with its TOOL message, and records its RESULT (or INTERRUPTED). */
export function* finishTool(c: ScriptContext, params: Params<'finishTool'>[0], interrupted: boolean): Script<void> {
  const held: unknown[] = yield c.q.finishTool(params);
  if (!held[0]) throw loopWriteRefused(params.turnId, params.owner ?? undefined);
  const { turnId, toolCallId, now } = params;
  const result = params.result === null ? null : (JSON.parse(params.result) as JsonObject);
  yield* appendAfterRan(
    c,
    turnId,
    toolCallId,
    interrupted ? { kind: 'INTERRUPTED' } : { kind: 'RESULT', resultDigest: resultDigest(params.text, result) },
    now,
  );
}

/** TOOL messages of calls that do not run, with the decision record each names (a veto, a refusal, an interruption). */
export function* appendToolMessages(c: ScriptContext, params: Params<'appendToolMessages'>[0]): Script<void> {
  const drafts = params.drafts.map(({ toolCallId, text }) => ({ toolCallId, text }));
  const held: unknown[] = yield c.q.appendToolMessages({ ...params, drafts });
  if (!held[0]) throw loopWriteRefused(params.turnId, params.owner ?? undefined);
  if (!c.receipts) return;
  let agentId: string | null = null;
  for (const { toolCallId, decision } of params.drafts) {
    if (!decision) continue;
    if (decision.kind === 'INTERRUPTED') {
      yield* appendAfterRan(c, params.turnId, toolCallId, { kind: 'INTERRUPTED' }, params.now);
      continue;
    }
    agentId ??= turnRecord(((yield c.q.turn({ id: params.turnId })) as TurnRow[])[0]!).agentId;
    // Edited arguments vetoed after an accept: the record names the request, under the policy it was asked under.
    const asked =
      decision.elicitationId === null
        ? undefined
        : (yield* decisionsOfCall(c, params.turnId, toolCallId)).find(
            (r) => r.kind === 'ASKED' && r.elicitationId === decision.elicitationId,
          );
    const draft = refusalDraft(params.turnId, toolCallId, agentId, decision, params.now);
    recordDecision(c, { ...draft, policyDigest: asked?.policyDigest ?? null });
  }
}

function refusalDraft(
  turnId: string,
  toolCallId: string,
  agentId: string,
  d: Exclude<ToolMessageDecision, { kind: 'INTERRUPTED' }>,
  at: string,
): DecisionDraft {
  return {
    kind: d.kind,
    turnId,
    toolCallId,
    elicitationId: d.elicitationId,
    agentId,
    toolId: d.toolId,
    argsDigest: argumentsDigest(d.arguments),
    policyDigest: null,
    actor: null,
    at,
    toolDefinitionDigest: d.toolDefinitionDigest,
    reason: d.reason,
  };
}

/** What a request's record says of it, before its outcome. */
function askedDraft(e: ElicitationRecord, kind: DecisionKind, at: string): DecisionDraft {
  return {
    kind,
    turnId: e.turnId,
    toolCallId: e.toolCallId,
    elicitationId: e.id,
    agentId: e.agentId,
    toolId: e.toolCall.toolId,
    argsDigest: argumentsDigest(e.toolCall.arguments),
    policyDigest: policyDigest(e.approval),
    actor: null,
    at,
    toolDefinitionDigest: e.toolCall.toolDefinitionDigest ?? null,
  };
}

/** Notes a decision record of the running transaction; `recorded` appends it to the chain when the script ends. */
export function recordDecision(c: ScriptContext, draft: DecisionDraft): void {
  if (!c.receipts) return;
  if (!c.decisions) throw new Error('a decision record outside a recorded transaction');
  c.decisions.push(draft);
}

/**
 * Runs a transaction's script, then appends the decision records it noted to the deployment's one chain: the chain's
 * lock (PostgreSQL; SQLite writes one transaction at a time), its head, the records. Last, so that the chain is held
 * only for the append and the commit, not for the script's other statements.
 */
export function* recorded<T>(c: ScriptContext, script: (c: ScriptContext) => Script<T>): Script<T> {
  const decisions: DecisionDraft[] = [];
  const result = yield* script({ ...c, decisions });
  if (decisions.length === 0 || !c.receipts) return result;
  yield c.q.lockDecisionChain();
  const [head]: { seq: number; hash: string }[] = yield c.q.decisionChainHead();
  let previous = head ? { seq: Number(head.seq), hash: head.hash } : null;
  for (const draft of decisions) {
    const record = sealRecord(draft, previous, c.receipts);
    c.sealedHere.add(record);
    yield c.q.insertDecisionRecord({
      seq: record.seq,
      hash: record.hash,
      kind: record.kind,
      turnId: record.turnId,
      toolCallId: record.toolCallId,
      at: record.at,
      record: JSON.stringify(record),
    });
    previous = record;
  }
  return result;
}

/** The step, its elicitations and the answer that asked, turn PAUSED; the elicitations' outbox rows. */
export function* pauseTurn(
  c: ScriptContext,
  params: Params<'pauseTurn'>[0],
): Script<{ turn: TurnRecord; elicitations: ElicitationRecord[] }> {
  const [row]: TurnRow[] = yield c.q.pauseTurn(params);
  if (!row) throw loopWriteRefused(params.id, params.owner ?? undefined);
  const turn = turnRecord(row);
  // As stored (what the dialect could hold of them), without reading them back.
  const { stored: asStored } = c;
  const stored = asStored
    ? params.drafts.map((d) => ({ ...d, request: asStored(d.request), toolCall: asStored(d.toolCall) }))
    : params.drafts;
  const created = pausedElicitations(turn, stored, params.now, params.expiresAt);
  for (const e of created) {
    recordDecision(c, { ...askedDraft(e, 'ASKED', params.now), actor: actorOf(turn), policy: e.approval });
  }
  if (c.webhooks) yield* writeWebhookEvents(c, elicitationsRequested(created, params.now), params.now);
  return { turn, elicitations: created };
}

/** RUNNING turn to a final state, with the model's final answer; its outbox rows. */
export function* finishTurn(c: ScriptContext, params: Params<'finishTurn'>[0]): Script<TurnRecord> {
  const [row]: TurnRow[] = yield c.q.finishTurn(params);
  if (!row) throw loopWriteRefused(params.id, params.owner ?? undefined);
  const turn = turnRecord(row);
  if (c.webhooks) yield* writeWebhookEvents(c, turnEnded(turn, params.now), params.now);
  return turn;
}

/**
 * Record an answer (idempotent by elicitation id); see ResolveResult. A request under an approvers policy counts its
 * approvers' answers first (answerUnderPolicy) and resolves through the same transition once they decide it.
 */
export function* resolveElicitation(c: ScriptContext, input: AnswerInput): Script<ResolveResult> {
  const { now, answer, ownerId } = input;
  const id = input.elicitationId;
  // Where writers run at once, the turn's row is locked first: answers to one turn (from any instance, by any of its
  // approvers), the sweeper and a new message on its thread wait for each other, and each reads what the one before
  // it committed. An approver's answer reaches the request whoever owns it: the caller authorized it.
  const [locked]: TurnRow[] = yield ownerId !== null
    ? c.q.lockTurnOfElicitation({ id, ownerId })
    : c.q.lockTurnOfElicitationForApprover({ id });
  // Every elicitation of the answered one's turn: the answered one, and whether others still wait.
  const rows: ElicitationRow[] = yield ownerId !== null
    ? c.q.elicitationsWithSibling({ id, ownerId })
    : c.q.elicitationsWithSiblingForApprover({ id });
  const ofTurn = rows.map(elicitationRecord);
  const found = ofTurn.find((e) => e.id === id) ?? null;
  // The unscoped lookup serves only requests under a policy: any other is the requester's alone.
  if (!found || (ownerId === null && found.approval === null)) return NOT_FOUND;
  const answering: Answering = { c, input, found, ofTurn, locked: locked ?? null };
  if (found.approval !== null) return yield* answerUnderPolicy(answering);
  const decision = decideAnswer(found, answer, now);
  if (decision.kind === 'not_found') return NOT_FOUND;
  if (decision.kind !== 'record') return yield* unrecorded(answering, decision);
  return yield* recordAnswer(answering, answer, decision, input.answeredBy, input.answeredAs ?? null);
}

const NOT_FOUND: ResolveResult = { ok: false, code: 'NOT_FOUND', of: 'elicitation' };

/** What the answer's transaction has read of the request, for the steps below. */
interface Answering {
  c: ScriptContext;
  input: AnswerInput;
  found: ElicitationRecord;
  /** Every elicitation of its turn, as read in the transaction. */
  ofTurn: ElicitationRecord[];
  /** The turn's row as locked (null where nothing is locked). */
  locked: TurnRow | null;
}

/** The turn as it is now: the locked row, or read where the answer needs it. */
function* turnNow({ c, found, locked }: Answering): Script<TurnRecord> {
  if (locked) return turnRecord(locked);
  return turnRecord(((yield c.q.turn({ id: found.turnId })) as TurnRow[])[0]!);
}

/** The request and its turn as committed now (after a write of this transaction). */
function* current({ c, found }: Answering): Script<{ elicitation: ElicitationRecord; turn: TurnRecord }> {
  const [elicitation]: ElicitationRow[] = yield c.q.elicitation({ id: found.id });
  const [turn]: TurnRow[] = yield c.q.turn({ id: found.turnId });
  return { elicitation: elicitationRecord(elicitation!), turn: turnRecord(turn!) };
}

/** An answer that records nothing: a duplicate, too late (which expires the turn if nobody did), or answered before. */
function* unrecorded(
  a: Answering,
  decision: { kind: 'duplicate' | 'already_resolved' } | { kind: 'expired'; expireTurn: boolean },
): Script<ResolveResult> {
  const { found } = a;
  if (decision.kind !== 'expired') {
    if (decision.kind === 'already_resolved') return { ok: false, code: 'ALREADY_RESOLVED', status: found.status };
    return { ok: true, kind: 'duplicate', elicitation: found, turn: yield* turnNow(a) };
  }
  const closed = decision.expireTurn ? yield* closePausedTurn(a.c, yield* turnNow(a), 'expired', a.input.now) : null;
  return { ok: false, code: 'EXPIRED', expiresAt: found.expiresAt, closed };
}

/**
 * An answer to a request under an approvers policy (docs/approvers.md): the approver's own answer is recorded (one
 * row per approver), then the answers so far are tallied; once they decide, the request resolves through the same
 * transition as an answer of the requester alone, exactly once (the turn's row is locked, and the request is no
 * longer PENDING for the next one).
 */
function* answerUnderPolicy(a: Answering): Script<ResolveResult> {
  const { c, input, found } = a;
  const { now, answer, answeredBy } = input;
  const answers = ((yield c.q.elicitationAnswers({ id: found.id })) as ElicitationAnswerRow[]).map(
    approverAnswerRecord,
  );
  const decision = decideApproverAnswer(found, answers, answeredBy, answer, now);
  if (decision.kind !== 'record') return yield* unrecorded(a, decision);
  const mine: ApproverAnswer = {
    elicitationId: found.id,
    approverId: answeredBy,
    position: Math.max(0, ...answers.map((other) => other.position)) + 1,
    action: answer.action,
    content: answer.content ?? null,
    // Canonical: the same arguments are the same text on every backend, whatever their key order.
    arguments: answer.arguments ? (JSON.parse(canonicalJson(answer.arguments)) as JsonObject) : null,
    remember: answer.remember ?? null,
    createdAt: now,
    identity: input.answeredAs ?? null,
  };
  yield c.q.upsertElicitationAnswer({
    elicitationId: mine.elicitationId,
    approverId: mine.approverId,
    position: mine.position,
    action: mine.action,
    content: nullOrJson(c, mine.content),
    arguments: nullOrJson(c, mine.arguments),
    remember: nullOrJson(c, mine.remember),
    identity: nullOrJson(c, mine.identity),
    now,
  });
  // Each approver's ACCEPT is recorded, counted or not: a verifier counts the distinct approvers of one digest.
  if (mine.action === 'ACCEPT') {
    recordDecision(c, {
      ...askedDraft(found, 'APPROVED', now),
      argsDigest: argumentsDigest(mine.arguments ?? found.toolCall.arguments),
      actor: { id: answeredBy, identity: mine.identity },
      // Passkey step-up: this approver's assertion over what they approve (src/app/passkeys.ts verified it).
      ...(input.assertion && { assertion: input.assertion }),
    });
  }
  const tally = tallyAnswers(
    found.approval!,
    [...answers.filter((o) => o.approverId !== answeredBy), mine],
    found.ownerId,
  );
  if (tally.kind === 'pending') {
    if (c.webhooks) yield* writeWebhookEvents(c, elicitationCounted(found, now), now);
    return { ok: true, kind: 'counted', elicitation: found, turn: yield* turnNow(a) };
  }
  const decided = decideAnswer(found, tally.answer, now);
  if (decided.kind !== 'record') throw new Error(`a pending request ${found.id} could not record its decided answer`);
  // The request's own record names the approver whose answer decided it, as they were when they gave it.
  const decider = tally.by === answeredBy ? mine : answers.find((other) => other.approverId === tally.by);
  return yield* recordAnswer(a, tally.answer, decided, tally.by, decider?.identity ?? null);
}

/**
 * The transition of an answered request: PENDING to ACCEPTED, DECLINED or CANCELLED with its response (and the grant
 * an ACCEPT with remember records); then CANCEL closes the turn, and the step's last answer resumes it.
 */
function* recordAnswer(
  a: Answering,
  answer: ElicitationAnswer,
  decision: Extract<AnswerDecision, { kind: 'record' }>,
  by: string,
  byIdentity: AnswerIdentity | null,
): Script<ResolveResult> {
  const { c, input, found, ofTurn } = a;
  const { now } = input;
  // An ACCEPT that asks to remember records its grant in the same transaction as the answer.
  const { columns, grant } = recordedAnswer(found, answer, input.grantId, now);
  if (grant) yield c.q.insertGrant(grant);
  const [answered]: ElicitationRow[] = yield c.q.answer({
    id: found.id,
    status: decision.status,
    action: answer.action,
    content: columns.content === null ? null : c.json(columns.content),
    arguments: columns.arguments === null ? null : c.json(columns.arguments),
    remember: columns.remember === null ? null : c.json(columns.remember),
    by,
    byIdentity: byIdentity === null ? null : c.json(byIdentity),
    withdrawn: input.withdrawn ?? null,
    now,
  });
  const elicitation = elicitationRecord(answered!);
  recordDecision(c, {
    ...askedDraft(found, ANSWERED[answer.action], now),
    ...(answer.action === 'ACCEPT' && { argsDigest: argumentsDigest(answer.arguments ?? found.toolCall.arguments) }),
    actor: { id: by, identity: byIdentity },
    // Passkey step-up: the deciding approver's assertion over this decision (src/app/passkeys.ts verified it).
    ...(answer.action === 'ACCEPT' && input.assertion && by === input.answeredBy && { assertion: input.assertion }),
    ...(grant && { grantId: grant.id }),
  });
  // Decided: no longer offered to its approvers.
  if (found.approval) yield c.q.deleteApproverRoles({ ids: [found.id] });
  if (c.webhooks) yield* writeWebhookEvents(c, elicitationsClosed([elicitation], 'ANSWERED', now), now);
  if (decision.then === 'cancel_turn') {
    yield* closePausedTurn(c, yield* turnNow(a), 'cancelled', now);
    return { ok: true, kind: 'cancelled', ...(yield* current(a)) };
  }
  const elicitations = ofTurn.map((e) => (e.id === elicitation.id ? elicitation : e));
  if (!resumesTurn(elicitations.some((e) => e.status === 'PENDING'))) {
    return { ok: true, kind: 'recorded', elicitation, turn: yield* turnNow(a) };
  }
  // The claim: only one caller moves the turn from PAUSED to RUNNING (where rows are locked, the WHERE re-checks).
  const [resumed]: TurnRow[] = yield c.q.resumeTurn({
    id: found.turnId,
    now,
    leaseOwner: input.lease?.owner ?? null,
    leaseUntil: input.lease?.until ?? null,
  });
  if (!resumed) return { ok: true, kind: 'recorded', elicitation, turn: yield* turnNow(a) };
  return { ok: true, kind: 'resume', elicitation, turn: turnRecord(resumed), elicitations };
}

const ANSWERED = { ACCEPT: 'ACCEPTED', DECLINE: 'DECLINED', CANCEL: 'CANCELLED' } as const;

/** The user a turn runs for, as the record of its requests names them. */
const actorOf = (turn: TurnRecord) => ({ id: turn.ownerId, identity: null });

/** Expire PAUSED turns whose expiresAt has passed (at most `limit`); where writers run at once, skipping held ones. */
export function* expireDueTurns(c: ScriptContext, now: string, limit: number): Script<TurnRecord[]> {
  const due: TurnRow[] = yield c.q.lockDueTurns({ now, limit });
  const expired: TurnRecord[] = [];
  for (const row of due) expired.push(yield* closePausedTurn(c, turnRecord(row), 'expired', now));
  return expired;
}

/**
 * Mark escalated the PENDING requests whose escalation is due at `now` and whose expiry is not (at most `limit`), each
 * once (the statement's WHERE), with their `elicitation.escalated` outbox rows: the event exists exactly when the mark
 * committed.
 */
export function* escalateDueElicitations(c: ScriptContext, now: string, limit: number): Script<ElicitationRecord[]> {
  const rows: ElicitationRow[] = yield c.q.escalateDue({ now, limit });
  const escalated = [...rows].sort((a, b) => a.seq - b.seq).map(elicitationRecord);
  if (c.webhooks) yield* writeWebhookEvents(c, elicitationsEscalated(escalated, now), now);
  return escalated;
}

/** PAUSED turn (its row locked) to CANCELLED or EXPIRED, as closePausedTurn (src/domain/turn-rules.ts) decides. */
function* closePausedTurn(c: ScriptContext, turn: TurnRecord, reason: CloseReason, now: string): Script<TurnRecord> {
  const stored = ((yield c.q.turnElicitations({ turnId: turn.id })) as ElicitationRow[]).map(elicitationRecord);
  const close = closing(turn, stored, reason);
  if (close.closeElicitations.length) {
    yield c.q.closeElicitations({ ids: close.closeElicitations, status: close.status, now });
    for (const e of stored.filter((s) => close.closeElicitations.includes(s.id))) {
      recordDecision(c, askedDraft(e, close.status, now));
    }
    // Those under a policy are no longer offered to their approvers.
    const offered = stored.filter((e) => e.approval && close.closeElicitations.includes(e.id)).map((e) => e.id);
    if (offered.length) yield c.q.deleteApproverRoles({ ids: offered });
  }
  if (c.webhooks) yield* writeWebhookEvents(c, elicitationsClosedBy(stored, close, reason, now), now);
  if (close.toolMessages.length) {
    yield c.q.insertToolMessages({ threadId: turn.threadId, turnId: turn.id, drafts: close.toolMessages, now });
  }
  const [row]: TurnRow[] = yield c.q.closeTurn({ id: turn.id, status: close.status, now });
  return turnRecord(row!);
}

/** The outbox rows of a change's events, for the subscribed endpoints, in the change's transaction. */
function* writeWebhookEvents(c: ScriptContext, events: WebhookEvent[], now: string): Script<void> {
  const deliveries = outboxRows(events, c.webhooks!, now);
  if (deliveries.length) yield c.q.insertWebhookDeliveries({ deliveries, now });
}

// ---- remembered approvals -----------------------------------------------------------------------------------------

/** Revokes the owner's grant (the first revoke's time stands); null when the owner has no such grant. */
export function* markCallerWaiting(
  c: ScriptContext,
  turnId: string,
  ownerId: string,
  until: string | null,
): Script<void> {
  yield c.q.markCallerWaiting({ turnId, ownerId, until });
}

export function* revokeApprovalGrant(
  c: ScriptContext,
  id: string,
  ownerId: string,
  now: string,
): Script<ApprovalGrantRecord | null> {
  // The row lock first (where writers run at once): a start under this grant holds it FOR SHARE until it commits, so
  // the uses read next include every start that committed before this revoke.
  const [row]: GrantRow[] = yield c.q.lockGrantForRevoke({ id, ownerId });
  if (!row) return null;
  const grant = grantRecord(row);
  const [lastUse]: { started_at: string | null }[] = yield c.q.lastGrantUse({ id });
  const revokedAt = revokedAtFor(grant, lastUse?.started_at ?? null, now);
  if (grant.revokedAt === null) yield c.q.revokeGrant({ id, revokedAt });
  return { ...grant, revokedAt };
}
