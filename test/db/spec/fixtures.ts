// The fixtures every role of the Store contract (./index.ts) builds its cases from. Cases pass fixed ISO instants
// (at()) as `now`, so nothing sleeps; turns, pauses and grants are set up through the Store's own writes, as the loop
// makes them, so a backend is only ever read in states it wrote itself.
import { closeStep } from '../../../src/domain/gate/closing.js';
import type {
  Agent,
  ApprovalGrantRecord,
  ChatMessage,
  CloseReason,
  ElicitationAnswer,
  ElicitationApproval,
  ElicitationDraft,
  ElicitationRecord,
  GrantScope,
  JsonObject,
  PendingStep,
  StepCall,
  ThreadRecord,
  ToolCall,
  TurnRecord,
} from '../../../src/domain/records.js';
import type { ResolveResult, Store, TurnLease } from '../../../src/domain/store.js';

const EPOCH = Date.parse('2026-01-01T00:00:00.000Z');
/** The fixed instant `seconds` after the spec's epoch, as the ISO string the stores take for `now`. */
export const at = (seconds: number): string => new Date(EPOCH + seconds * 1000).toISOString();

/** The owner most cases act as, and another one. */
export const ANN = 'user-ann';
export const BOB = 'user-bob';
export const AGENT = 'agent-main';
export const SIDE_AGENT = 'agent-side';

export const ACCEPT: ElicitationAnswer = { action: 'ACCEPT', content: null };
export const DECLINE: ElicitationAnswer = { action: 'DECLINE', content: null };
export const CANCEL: ElicitationAnswer = { action: 'CANCEL', content: null };

/** A process's lease, as the loop takes it ("host:pid:nonce"). */
export const lease = (owner: string, until = at(600)): TurnLease => ({ owner, until });

let counter = 0;
/** Readable unique ids: each test has a fresh database, the counter only keeps one test's ids apart. */
const nextId = (prefix: string) => `${prefix}-${++counter}`;

export function agentConfig(id: string, changes: Partial<Agent> = {}): Agent {
  return {
    id,
    name: `Agent ${id}`,
    description: null,
    modelId: 'scripted',
    systemPrompt: 'You help with notes.',
    toolIds: ['demo:*', 'notes:edit_note'],
    requireToolConfirmation: true,
    toolConfirmation: {},
    pauseTtlSeconds: 3600,
    maxIterations: 8,
    allowEdit: true,
    toolRules: {},
    toolAllowEdit: {},
    approvers: 'REQUESTER',
    toolApprovers: {},
    ...changes,
  };
}

export function toolCall(name: string, args: JsonObject = {}): ToolCall {
  return { id: nextId('call'), name, toolId: `demo:${name}`, arguments: args };
}

export function assistantMessage(text: string | null, toolCalls: ToolCall[] = []): ChatMessage {
  return { role: 'ASSISTANT', text, toolCalls, toolCallId: null };
}

/** A step of one call that asks, with the elicitation it asks by. */
export function askingStep(call: ToolCall, elicitationId: string): PendingStep {
  return { version: 1, calls: [{ toolCall: call, outcome: { kind: 'confirm', elicitationId } }] };
}

export function draftFor(call: ToolCall, elicitationId: string): ElicitationDraft {
  return {
    id: elicitationId,
    toolCallId: call.id,
    request: {
      message: `Allow the agent to run "${call.name}"?`,
      requestedSchema: { type: 'object', properties: { instructions: { type: 'string' } } },
      _meta: { 'toolgate.dev/tool_call': { name: call.name, toolId: call.toolId, arguments: call.arguments } },
    },
    toolCall: {
      name: call.name,
      toolId: call.toolId,
      arguments: call.arguments,
      annotations: { destructiveHint: true },
    },
  };
}

export interface TurnOptions {
  ownerId?: string;
  agentId?: string;
  /** An existing thread; a new one by default. */
  threadId?: string | null;
  now?: string;
  lease?: TurnLease;
  message?: string;
  turnId?: string;
  idempotencyKey?: string;
}

export function startInput(options: TurnOptions) {
  return {
    turnId: options.turnId ?? nextId('turn'),
    newThreadId: nextId('thread'),
    threadId: options.threadId ?? null,
    agentId: options.agentId ?? AGENT,
    ownerId: options.ownerId ?? ANN,
    message: options.message ?? 'Tidy my notes.',
    now: options.now ?? at(0),
    lease: options.lease,
    ...(options.idempotencyKey !== undefined && { idempotencyKey: options.idempotencyKey }),
  };
}

export interface Started {
  thread: ThreadRecord;
  turn: TurnRecord;
  superseded: TurnRecord | null;
  agent: Agent;
}

/** A RUNNING turn (startTurn that must succeed). */
export async function runningTurn(store: Store, options: TurnOptions = {}): Promise<Started> {
  const result = await store.startTurn(startInput(options));
  if (!result.ok) throw new Error(`startTurn was refused: ${result.code}`);
  if (result.replayed) throw new Error('startTurn replayed an earlier turn');
  return result;
}

export interface PauseOptions extends TurnOptions {
  /** Calls that ask for confirmation, one elicitation each (default 1): edit_1, edit_2, … */
  elicitations?: number;
  /** Also a call that runs without asking (lookup) and a vetoed one (wipe), ahead of the confirmed ones. */
  mixed?: boolean;
  expiresAt?: string;
  /** The approvers policy each request is paused with (docs/approvers.md); none by default. */
  approval?: ElicitationApproval;
}

export interface Paused extends Started {
  step: PendingStep;
  elicitations: ElicitationRecord[];
  expiresAt: string;
}

/** A turn as the loop leaves it at a gate: the model's answer saved, the step PAUSED with its elicitations. */
export async function pausedTurn(store: Store, options: PauseOptions = {}): Promise<Paused> {
  const started = await runningTurn(store, options);
  const now = options.now ?? at(0);
  const expiresAt = options.expiresAt ?? at(3600);
  const calls: StepCall[] = [];
  const drafts: ElicitationDraft[] = [];
  if (options.mixed) {
    calls.push({ toolCall: toolCall('lookup', { q: 'notes' }), outcome: { kind: 'run' } });
    calls.push({ toolCall: toolCall('wipe'), outcome: { kind: 'vetoed', reason: 'policy says no' } });
  }
  for (let i = 1; i <= (options.elicitations ?? 1); i++) {
    const call = toolCall(`edit_${i}`, { note: `n${i}` });
    const elicitationId = nextId('elc');
    calls.push({ toolCall: call, outcome: { kind: 'confirm', elicitationId } });
    drafts.push({ ...draftFor(call, elicitationId), ...(options.approval && { approval: options.approval }) });
  }
  const step: PendingStep = { version: 1, calls };
  const { turn } = started;
  await store.unleasedTurnWriter(turn.id).appendAssistantMessage({
    message: assistantMessage(
      null,
      calls.map((c) => c.toolCall),
    ),
    iterations: 1,
    now,
  });
  const paused = await store
    .unleasedTurnWriter(turn.id)
    .pauseTurn({ step, elicitations: drafts, text: 'May I?', expiresAt, now });
  return { ...started, turn: paused.turn, step, elicitations: paused.elicitations, expiresAt };
}

export function answer(
  store: Store,
  elicitationId: string,
  response: ElicitationAnswer,
  options: { now?: string; ownerId?: string; lease?: TurnLease; grantId?: string } = {},
): Promise<ResolveResult> {
  return store.resolveElicitation({
    elicitationId,
    ownerId: options.ownerId ?? ANN,
    answeredBy: options.ownerId ?? ANN,
    answer: response,
    now: options.now ?? at(10),
    lease: options.lease,
    grantId: options.grantId,
  });
}

/**
 * An approver's answer to another user's request under a policy, as the answer use case sends it once it authorized
 * the approver: unscoped (ownerId null), answered by them.
 */
export function approverAnswer(
  store: Store,
  elicitationId: string,
  approverId: string,
  response: ElicitationAnswer,
  options: { now?: string; lease?: TurnLease; grantId?: string } = {},
): Promise<ResolveResult> {
  return store.resolveElicitation({
    elicitationId,
    ownerId: null,
    answeredBy: approverId,
    answer: response,
    now: options.now ?? at(10),
    lease: options.lease,
    grantId: options.grantId,
  });
}

/** What an answer did, in one word: the kind of one recorded (or a duplicate), the code of a refusal. */
export function outcome(result: ResolveResult): string {
  return result.ok ? result.kind : result.code;
}

/** A turn's TOOL messages as [toolCallId, text], in transcript order. */
export async function toolAnswers(store: Store, turnId: string): Promise<[string | null, string | null][]> {
  return (await store.listTurnMessages(turnId)).filter((m) => m.role === 'TOOL').map((m) => [m.toolCallId, m.text]);
}

/** What closing `step` for `reason` must append: closeStep's messages, given the answers recorded. */
export function closing(
  step: PendingStep,
  reason: CloseReason,
  answers: Record<string, ElicitationAnswer | null> = {},
): [string, string][] {
  return closeStep(step, reason, answers).map((m) => [m.toolCallId, m.text]);
}

export const callNamed = (paused: Paused, name: string) =>
  paused.step.calls.find((c) => c.toolCall.name === name)!.toolCall;

/** Everything a write to one turn could change, to show that a refused write changed nothing. */
export async function stateOf(store: Store, turnId: string) {
  return {
    turn: await store.loadTurn(turnId),
    messages: await store.listTurnMessages(turnId),
    elicitations: await store.listTurnElicitations(turnId),
    unfinished: await store.listUnfinishedToolCalls(turnId),
    leases: await store.listRunningLeases(),
  };
}

export const ids = (records: readonly { id: string }[]) => records.map((r) => r.id);
export const sorted = (values: readonly string[]) => [...values].sort();
export const statusesOf = async (store: Store, turnId: string) =>
  (await store.listTurnElicitations(turnId)).map((e) => [e.id, e.status]);

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

// ---- remembered approvals and edited answers ------------------------------------------------------------------------

/** The hash of a tool's trusted definition a request records since approvals can be remembered. */
export const TOOL_HASH = `sha256:${'a1'.repeat(32)}`;

/** A request as the loop makes it since approvals can be remembered: bound to the tool's definition hash. */
export function rememberableDraftFor(call: ToolCall, elicitationId: string): ElicitationDraft {
  const draft = draftFor(call, elicitationId);
  return { ...draft, toolCall: { ...draft.toolCall, definitionHash: TOOL_HASH } };
}

export interface RememberablePauseOptions extends TurnOptions {
  /** The tool the one call is of (default edit_note, tool id demo:edit_note). */
  toolName?: string;
  arguments?: JsonObject;
  expiresAt?: string;
  /** The approvers policy the request is paused with; none by default. */
  approval?: ElicitationApproval;
}

/** A PAUSED turn whose one call asks, with a request whose approval can be remembered. */
export async function rememberablePause(store: Store, options: RememberablePauseOptions = {}): Promise<Paused> {
  const started = await runningTurn(store, options);
  const now = options.now ?? at(0);
  const expiresAt = options.expiresAt ?? at(3600);
  const call = toolCall(options.toolName ?? 'edit_note', options.arguments ?? { note: 'n1' });
  const elicitationId = nextId('elc');
  const step = askingStep(call, elicitationId);
  await store
    .unleasedTurnWriter(started.turn.id)
    .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now });
  const paused = await store.unleasedTurnWriter(started.turn.id).pauseTurn({
    step,
    elicitations: [
      { ...rememberableDraftFor(call, elicitationId), ...(options.approval && { approval: options.approval }) },
    ],
    text: 'May I?',
    expiresAt,
    now,
  });
  return { ...started, turn: paused.turn, step, elicitations: paused.elicitations, expiresAt };
}

export const acceptRemembering = (scope: GrantScope, ttlSeconds: number): ElicitationAnswer => ({
  action: 'ACCEPT',
  content: null,
  remember: { scope, ttlSeconds },
});

export interface GrantOptions extends RememberablePauseOptions {
  scope?: GrantScope;
  ttlSeconds?: number;
  /** When the ACCEPT is given (default at(10)). */
  answeredAt?: string;
}

/** A remembered approval, recorded as the loop records one: an ACCEPT with `remember` of a request that asked. */
export async function grantOf(
  store: Store,
  grantId: string,
  options: GrantOptions = {},
): Promise<{ grant: ApprovalGrantRecord; paused: Paused }> {
  const paused = await rememberablePause(store, options);
  const result = await answer(
    store,
    paused.elicitations[0]!.id,
    acceptRemembering(options.scope ?? 'THREAD', options.ttlSeconds ?? 3600),
    { grantId, now: options.answeredAt ?? at(10), ownerId: options.ownerId },
  );
  if (!result.ok || result.kind !== 'resume') throw new Error(`the ACCEPT with remember was ${outcome(result)}`);
  const grant = await store.getApprovalGrant(grantId, options.ownerId ?? ANN);
  if (!grant) throw new Error(`the ACCEPT recorded no grant ${grantId}`);
  return { grant, paused };
}

/** A RUNNING turn with one call of the model's (not yet started): what markToolStarted journals. */
export async function turnWithCall(
  store: Store,
  options: TurnOptions = {},
): Promise<{ turnId: string; callId: string }> {
  const { turn } = await runningTurn(store, options);
  const call = toolCall('edit_note');
  await store
    .unleasedTurnWriter(turn.id)
    .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now: options.now ?? at(0) });
  return { turnId: turn.id, callId: call.id };
}
