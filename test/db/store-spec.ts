// The Store contract (src/domain/store.ts) as one suite that any implementation runs, after LangGraph JS's
// libs/checkpoint-validation: a backend's test file calls describeStore with a factory that opens a fresh, migrated,
// empty database per test. Every case passes fixed ISO instants as `now` (nothing sleeps), and the concurrency cases
// race two store instances on the same database (two processes' views) with Promise.all.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeStep } from '../../src/agent/closing.js';
import { toolText } from '../../src/agent/messages.js';
import type {
  Agent,
  ArgumentRule,
  ApprovalGrantRecord,
  ChatMessage,
  CloseReason,
  ElicitationAnswer,
  ElicitationDraft,
  ElicitationRecord,
  ElicitationStatus,
  GrantScope,
  JsonObject,
  PendingStep,
  StepCall,
  ThreadRecord,
  ToolCall,
  TurnRecord,
} from '../../src/domain/records.js';
import {
  GrantLapsedError,
  LeaseLostError,
  type ResolveResult,
  type Store,
  type TurnLease,
} from '../../src/domain/store.js';
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookDeliveryRecord,
  type WebhookOutbox,
  type WebhookSubscription,
} from '../../src/domain/webhook-events.js';

export interface StoreUnderTest {
  /** A store on a fresh, migrated, empty database of its own. */
  store: Store;
  /**
   * A second store instance on the SAME database (another process's view), for concurrency cases; with `options`,
   * one opened with them (webhooks: the endpoints whose events it writes).
   */
  second(options?: StoreOptions): Promise<Store>;
  /**
   * Drops the database and releases whatever open() holds. The spec has closed `store` and every store second()
   * returned before it calls this: cleanup must not close them again.
   */
  cleanup(): Promise<void>;
}

/** What a store may be opened with, beside its database. */
export interface StoreOptions {
  webhooks?: WebhookOutbox;
}

export interface StoreFactory {
  name: string;
  open(): Promise<StoreUnderTest>;
}

// ---- fixtures ------------------------------------------------------------------------------------------------

const EPOCH = Date.parse('2026-01-01T00:00:00.000Z');
/** The fixed instant `seconds` after the spec's epoch, as the ISO string the stores take for `now`. */
const at = (seconds: number): string => new Date(EPOCH + seconds * 1000).toISOString();

/** The owner most cases act as, and another one. */
const ANN = 'user-ann';
const BOB = 'user-bob';
const AGENT = 'agent-main';
const SIDE_AGENT = 'agent-side';

const ACCEPT: ElicitationAnswer = { action: 'ACCEPT', content: null };
const DECLINE: ElicitationAnswer = { action: 'DECLINE', content: null };
const CANCEL: ElicitationAnswer = { action: 'CANCEL', content: null };

/** A process's lease, as the loop takes it ("host:pid:nonce"). */
const lease = (owner: string, until = at(600)): TurnLease => ({ owner, until });

let counter = 0;
/** Readable unique ids: each test has a fresh database, the counter only keeps one test's ids apart. */
const nextId = (prefix: string) => `${prefix}-${++counter}`;

function agentConfig(id: string, changes: Partial<Agent> = {}): Agent {
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
    ...changes,
  };
}

function toolCall(name: string, args: JsonObject = {}): ToolCall {
  return { id: nextId('call'), name, toolId: `demo:${name}`, arguments: args };
}

function assistantMessage(text: string | null, toolCalls: ToolCall[] = []): ChatMessage {
  return { role: 'ASSISTANT', text, toolCalls, toolCallId: null };
}

/** A step of one call that asks, with the elicitation it asks by. */
function askingStep(call: ToolCall, elicitationId: string): PendingStep {
  return { version: 1, calls: [{ toolCall: call, outcome: { kind: 'confirm', elicitationId } }] };
}

function draftFor(call: ToolCall, elicitationId: string): ElicitationDraft {
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

interface TurnOptions {
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

function startInput(options: TurnOptions) {
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

interface Started {
  thread: ThreadRecord;
  turn: TurnRecord;
  superseded: TurnRecord | null;
  agent: Agent;
}

/** A RUNNING turn (startTurn that must succeed). */
async function runningTurn(store: Store, options: TurnOptions = {}): Promise<Started> {
  const result = await store.startTurn(startInput(options), closeStep);
  if (!result.ok) throw new Error(`startTurn was refused: ${result.code}`);
  if (result.replayed) throw new Error('startTurn replayed an earlier turn');
  return result;
}

interface PauseOptions extends TurnOptions {
  /** Calls that ask for confirmation, one elicitation each (default 1): edit_1, edit_2, … */
  elicitations?: number;
  /** Also a call that runs without asking (lookup) and a vetoed one (wipe), ahead of the confirmed ones. */
  mixed?: boolean;
  expiresAt?: string;
}

interface Paused extends Started {
  step: PendingStep;
  elicitations: ElicitationRecord[];
  expiresAt: string;
}

/** A turn as the loop leaves it at a gate: the model's answer saved, the step PAUSED with its elicitations. */
async function pausedTurn(store: Store, options: PauseOptions = {}): Promise<Paused> {
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
    drafts.push(draftFor(call, elicitationId));
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

function answer(
  store: Store,
  elicitationId: string,
  response: ElicitationAnswer,
  options: { now?: string; ownerId?: string; lease?: TurnLease; grantId?: string } = {},
): Promise<ResolveResult> {
  return store.resolveElicitation(
    {
      elicitationId,
      ownerId: options.ownerId ?? ANN,
      answer: response,
      now: options.now ?? at(10),
      lease: options.lease,
      grantId: options.grantId,
    },
    closeStep,
  );
}

/** A turn's TOOL messages as [toolCallId, text], in transcript order. */
async function toolAnswers(store: Store, turnId: string): Promise<[string | null, string | null][]> {
  return (await store.listTurnMessages(turnId)).filter((m) => m.role === 'TOOL').map((m) => [m.toolCallId, m.text]);
}

/** What closing `step` for `reason` must append: closeStep's messages, given the answers recorded. */
function closing(
  step: PendingStep,
  reason: CloseReason,
  answers: Record<string, ElicitationAnswer | null> = {},
): [string, string][] {
  return closeStep(step, reason, answers).map((m) => [m.toolCallId, m.text]);
}

const callNamed = (paused: Paused, name: string) => paused.step.calls.find((c) => c.toolCall.name === name)!.toolCall;

/** Everything a write to one turn could change, to show that a refused write changed nothing. */
async function stateOf(store: Store, turnId: string) {
  return {
    turn: await store.loadTurn(turnId),
    messages: await store.listTurnMessages(turnId),
    elicitations: await store.listTurnElicitations(turnId),
    unfinished: await store.listUnfinishedToolCalls(turnId),
    leases: await store.listRunningLeases(),
  };
}

const ids = (records: readonly { id: string }[]) => records.map((r) => r.id);
const sorted = (values: readonly string[]) => [...values].sort();
const statusesOf = async (store: Store, turnId: string) =>
  (await store.listTurnElicitations(turnId)).map((e) => [e.id, e.status]);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

// ---- fixtures: remembered approvals and edited answers ------------------------------------------------------------

/** The hash of a tool's trusted definition a request records since approvals can be remembered. */
const TOOL_HASH = `sha256:${'a1'.repeat(32)}`;

/** A request as the loop makes it since approvals can be remembered: bound to the tool's definition hash. */
function rememberableDraftFor(call: ToolCall, elicitationId: string): ElicitationDraft {
  const draft = draftFor(call, elicitationId);
  return { ...draft, toolCall: { ...draft.toolCall, definitionHash: TOOL_HASH } };
}

interface RememberablePauseOptions extends TurnOptions {
  /** The tool the one call is of (default edit_note, tool id demo:edit_note). */
  toolName?: string;
  arguments?: JsonObject;
  expiresAt?: string;
}

/** A PAUSED turn whose one call asks, with a request whose approval can be remembered. */
async function rememberablePause(store: Store, options: RememberablePauseOptions = {}): Promise<Paused> {
  const started = await runningTurn(store, options);
  const now = options.now ?? at(0);
  const expiresAt = options.expiresAt ?? at(3600);
  const call = toolCall(options.toolName ?? 'edit_note', options.arguments ?? { note: 'n1' });
  const elicitationId = nextId('elc');
  const step = askingStep(call, elicitationId);
  await store
    .unleasedTurnWriter(started.turn.id)
    .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now });
  const paused = await store
    .unleasedTurnWriter(started.turn.id)
    .pauseTurn({ step, elicitations: [rememberableDraftFor(call, elicitationId)], text: 'May I?', expiresAt, now });
  return { ...started, turn: paused.turn, step, elicitations: paused.elicitations, expiresAt };
}

const acceptRemembering = (scope: GrantScope, ttlSeconds: number): ElicitationAnswer => ({
  action: 'ACCEPT',
  content: null,
  remember: { scope, ttlSeconds },
});

interface GrantOptions extends RememberablePauseOptions {
  scope?: GrantScope;
  ttlSeconds?: number;
  /** When the ACCEPT is given (default at(10)). */
  answeredAt?: string;
}

/** A remembered approval, recorded as the loop records one: an ACCEPT with `remember` of a request that asked. */
async function grantOf(
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
  if (result.kind !== 'resume') throw new Error(`the ACCEPT with remember was ${result.kind}`);
  const grant = await store.getApprovalGrant(grantId, options.ownerId ?? ANN);
  if (!grant) throw new Error(`the ACCEPT recorded no grant ${grantId}`);
  return { grant, paused };
}

/** A RUNNING turn with one call of the model's (not yet started): what markToolStarted journals. */
async function turnWithCall(store: Store, options: TurnOptions = {}): Promise<{ turnId: string; callId: string }> {
  const { turn } = await runningTurn(store, options);
  const call = toolCall('edit_note');
  await store
    .unleasedTurnWriter(turn.id)
    .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now: options.now ?? at(0) });
  return { turnId: turn.id, callId: call.id };
}

// ---- the suite ---------------------------------------------------------------------------------------------------

export function describeStore(factory: StoreFactory): void {
  describe(`Store contract: ${factory.name}`, () => {
    let sut: StoreUnderTest | undefined;
    let store: Store;
    /** Every store the test was handed (second() included), closed after it unless the test closed one itself. */
    let opened: Store[] = [];
    let closed = new Set<Store>();

    async function close(s: Store): Promise<void> {
      if (closed.has(s)) return;
      closed.add(s);
      await s.close();
    }

    /** Another process's store on the same database. */
    async function second(options?: StoreOptions): Promise<Store> {
      const other = await sut!.second(options);
      opened.push(other);
      return other;
    }

    beforeEach(async () => {
      sut = undefined;
      opened = [];
      closed = new Set();
      sut = await factory.open();
      store = sut.store;
      opened.push(store);
    });

    afterEach(async () => {
      // The second() stores first, then the first one; then the database goes.
      for (const s of opened.reverse()) await close(s);
      await sut?.cleanup();
    });

    /** The agents the turns below belong to, as the server syncs them from its config before anything runs. */
    async function seedAgents(): Promise<void> {
      await store.syncAgent(agentConfig(AGENT), at(0));
      await store.syncAgent(agentConfig(SIDE_AGENT), at(0));
    }

    // ---- 1. agents ---------------------------------------------------------------------------------------------

    describe('agents', () => {
      it('syncAgent creates an agent as configured, and getAgent reads it back; an unknown id reads null', async () => {
        const config = agentConfig('notes', {
          description: 'Keeps notes',
          toolIds: ['notes:*', 'demo:read_graph'],
          toolConfirmation: { 'notes:delete': 'ALWAYS', 'notes:read': 'NEVER' },
        });
        expect(await store.syncAgent(config, at(0))).toEqual(config);
        expect(await store.getAgent('notes')).toEqual(config);
        expect(await store.getAgent('nobody')).toBeNull();
      });

      it('syncAgent updates an agent from the config: definition, gating and overrides (replaced, not merged)', async () => {
        await store.syncAgent(agentConfig('notes', { toolConfirmation: { 'notes:delete': 'ALWAYS' } }), at(0));
        const changed = agentConfig('notes', {
          name: 'Notes v2',
          description: 'Now with a description',
          modelId: 'gpt-x',
          systemPrompt: 'Be brief.',
          toolIds: ['notes:read'],
          maxIterations: 3,
          requireToolConfirmation: false,
          pauseTtlSeconds: 60,
          toolConfirmation: { 'notes:read': 'NEVER' },
        });
        expect(await store.syncAgent(changed, at(1))).toEqual(changed);
        expect(await store.getAgent('notes')).toEqual(changed);
      });

      it('once updateAgentGating changed gating, syncAgent updates the definition and keeps the gating', async () => {
        await store.syncAgent(agentConfig('notes', { toolConfirmation: { 'notes:delete': 'ALWAYS' } }), at(0));
        const updated = await store.updateAgentGating(
          'notes',
          { requireToolConfirmation: false, pauseTtlSeconds: 90, toolConfirmation: { 'notes:read': 'NEVER' } },
          at(1),
        );
        const gating: Partial<Agent> = {
          requireToolConfirmation: false,
          pauseTtlSeconds: 90,
          toolConfirmation: { 'notes:delete': 'ALWAYS', 'notes:read': 'NEVER' },
        };
        expect(updated).toEqual(agentConfig('notes', gating));

        const config = agentConfig('notes', {
          name: 'Renamed',
          maxIterations: 2,
          requireToolConfirmation: true,
          pauseTtlSeconds: 3600,
          toolConfirmation: { 'notes:write': 'ALWAYS' },
        });
        const synced = await store.syncAgent(config, at(2));
        expect(synced).toEqual(agentConfig('notes', { name: 'Renamed', maxIterations: 2, ...gating }));
        expect(await store.getAgent('notes')).toEqual(synced);
      });

      it('updateAgentGating changes only what the patch names, and upserts tool overrides', async () => {
        await store.syncAgent(
          agentConfig('notes', { toolConfirmation: { 'notes:a': 'ALWAYS', 'notes:b': 'NEVER' } }),
          at(0),
        );
        const ttlOnly = await store.updateAgentGating('notes', { pauseTtlSeconds: 30 }, at(1));
        expect(ttlOnly).toMatchObject({
          requireToolConfirmation: true,
          pauseTtlSeconds: 30,
          toolConfirmation: { 'notes:a': 'ALWAYS', 'notes:b': 'NEVER' },
        });
        const upserted = await store.updateAgentGating(
          'notes',
          { toolConfirmation: { 'notes:b': 'BY_ANNOTATION', 'notes:c': 'ALWAYS' } },
          at(2),
        );
        expect(upserted?.toolConfirmation).toEqual({
          'notes:a': 'ALWAYS',
          'notes:b': 'BY_ANNOTATION',
          'notes:c': 'ALWAYS',
        });
        expect(upserted?.pauseTtlSeconds).toBe(30);
        expect((await store.getAgent('notes'))?.toolConfirmation).toEqual(upserted?.toolConfirmation);
      });

      it('updateAgentGating of an unknown agent returns null and creates nothing', async () => {
        expect(await store.updateAgentGating('ghost', { pauseTtlSeconds: 5 }, at(0))).toBeNull();
        expect(await store.getAgent('ghost')).toBeNull();
        expect(await store.listAgents()).toEqual([]);
      });

      it('listAgents lists every agent with its overrides, by id', async () => {
        await store.syncAgent(agentConfig('charlie'), at(0));
        await store.syncAgent(agentConfig('alpha', { toolConfirmation: { 'demo:x': 'NEVER' } }), at(0));
        await store.syncAgent(agentConfig('bravo'), at(0));
        expect(await store.listAgents()).toEqual([
          agentConfig('alpha', { toolConfirmation: { 'demo:x': 'NEVER' } }),
          agentConfig('bravo'),
          agentConfig('charlie'),
        ]);
      });
    });

    // ---- 1b. argument rules and allowEdit (issue 15) ------------------------------------------------------------

    describe('agents: argument rules and allowEdit', () => {
      const TMP: ArgumentRule = {
        match: { properties: { path: { type: 'string', pattern: '^/tmp/' } }, required: ['path'] },
        mode: 'NEVER',
      };
      const ETC: ArgumentRule = {
        match: { properties: { path: { pattern: '^/etc/' } } },
        mode: 'DENY',
        reason: 'system files are off limits',
      };
      const ANY: ArgumentRule = { match: {}, mode: 'ALWAYS' };

      it('syncAgent stores rules in order, the agent allowEdit and per-tool allowEdit; every read returns them', async () => {
        const config = agentConfig('files', {
          allowEdit: false,
          toolConfirmation: { 'fs:write': 'BY_ANNOTATION', 'fs:delete': 'ALWAYS', 'fs:read': 'NEVER' },
          toolRules: { 'fs:write': [ETC, TMP, ANY], 'fs:delete': [TMP] },
          toolAllowEdit: { 'fs:write': true, 'fs:delete': false },
        });
        expect(await store.syncAgent(config, at(0))).toEqual(config);
        expect(await store.getAgent('files')).toEqual(config);
        expect(await store.listAgents()).toEqual([config]);
        // The agent as a turn reads it in its transaction.
        const started = await store.startTurn(startInput({ agentId: 'files', now: at(1) }), closeStep);
        expect(started.ok && started.agent).toEqual(config);
      });

      it('an agent without any keeps the defaults: allowEdit true, no rules, no per-tool allowEdit', async () => {
        await store.syncAgent(agentConfig('plain', { toolConfirmation: { 'fs:read': 'NEVER' } }), at(0));
        expect(await store.getAgent('plain')).toMatchObject({ allowEdit: true, toolRules: {}, toolAllowEdit: {} });
      });

      it('syncAgent replaces rules and allowEdit from the config while updateAgent has not changed gating', async () => {
        await store.syncAgent(
          agentConfig('files', {
            toolConfirmation: { 'fs:write': 'BY_ANNOTATION' },
            toolRules: { 'fs:write': [ETC, TMP] },
            toolAllowEdit: { 'fs:write': false },
          }),
          at(0),
        );
        const changed = agentConfig('files', {
          allowEdit: false,
          toolConfirmation: { 'fs:delete': 'ALWAYS' },
          toolRules: { 'fs:delete': [ANY] },
        });
        expect(await store.syncAgent(changed, at(1))).toEqual(changed);
      });

      it('updateAgentGating replaces the rules of the tools it names, [] clears them, null clears a tool allowEdit', async () => {
        await store.syncAgent(
          agentConfig('files', {
            toolConfirmation: { 'fs:write': 'ALWAYS', 'fs:delete': 'ALWAYS' },
            toolRules: { 'fs:write': [ETC, TMP], 'fs:delete': [ANY] },
            toolAllowEdit: { 'fs:write': false, 'fs:delete': false },
          }),
          at(0),
        );
        const updated = await store.updateAgentGating(
          'files',
          {
            allowEdit: false,
            toolRules: { 'fs:write': [TMP], 'fs:delete': [], 'fs:new': [ETC] },
            toolAllowEdit: { 'fs:write': null, 'fs:other': true },
          },
          at(1),
        );
        const expected = agentConfig('files', {
          allowEdit: false,
          // The modes stay; a tool named for the first time gets BY_ANNOTATION.
          toolConfirmation: {
            'fs:write': 'ALWAYS',
            'fs:delete': 'ALWAYS',
            'fs:new': 'BY_ANNOTATION',
            'fs:other': 'BY_ANNOTATION',
          },
          toolRules: { 'fs:write': [TMP], 'fs:new': [ETC] },
          toolAllowEdit: { 'fs:delete': false, 'fs:other': true },
        });
        expect(updated).toEqual(expected);
        expect(await store.getAgent('files')).toEqual(expected);

        // A mode alone leaves the tool's rules and allowEdit as they are.
        const modeOnly = await store.updateAgentGating('files', { toolConfirmation: { 'fs:new': 'NEVER' } }, at(2));
        expect(modeOnly).toEqual({
          ...expected,
          toolConfirmation: { ...expected.toolConfirmation, 'fs:new': 'NEVER' },
        });
      });

      it('once updateAgentGating changed them, syncAgent keeps rules and allowEdit as the API left them', async () => {
        await store.syncAgent(
          agentConfig('files', { toolConfirmation: { 'fs:write': 'BY_ANNOTATION' }, toolRules: { 'fs:write': [TMP] } }),
          at(0),
        );
        const updated = await store.updateAgentGating(
          'files',
          { allowEdit: false, toolRules: { 'fs:write': [ETC] }, toolAllowEdit: { 'fs:write': true } },
          at(1),
        );
        const synced = await store.syncAgent(
          agentConfig('files', {
            name: 'Files v2',
            allowEdit: true,
            toolConfirmation: { 'fs:write': 'NEVER' },
            toolRules: { 'fs:write': [ANY] },
            toolAllowEdit: { 'fs:write': false },
          }),
          at(2),
        );
        expect(synced).toEqual({ ...updated, name: 'Files v2' });
        expect(synced).toMatchObject({
          allowEdit: false,
          toolRules: { 'fs:write': [ETC] },
          toolAllowEdit: { 'fs:write': true },
        });
      });

      it('an allowEdit-only change also counts as a gating change that later syncs keep', async () => {
        await store.syncAgent(agentConfig('files'), at(0));
        await store.updateAgentGating('files', { allowEdit: false }, at(1));
        expect((await store.syncAgent(agentConfig('files', { allowEdit: true }), at(2))).allowEdit).toBe(false);
      });

      it('a second store instance reads what the first wrote', async () => {
        const config = agentConfig('files', {
          toolConfirmation: { 'fs:write': 'BY_ANNOTATION' },
          toolRules: { 'fs:write': [ETC, TMP] },
          toolAllowEdit: { 'fs:write': false },
        });
        await store.syncAgent(config, at(0));
        const other = await second();
        expect(await other.getAgent('files')).toEqual(config);
      });
    });

    // ---- 2. threads, turns, messages ---------------------------------------------------------------------------

    describe('starting turns', () => {
      beforeEach(seedAgents);

      it('without a thread: a new thread of the owner and agent, a RUNNING turn with its lease, the USER message', async () => {
        const result = await store.startTurn(
          {
            turnId: 'turn-a',
            newThreadId: 'thread-a',
            threadId: null,
            agentId: AGENT,
            ownerId: ANN,
            message: 'Hello there',
            now: at(5),
            lease: lease('host:1:a'),
          },
          closeStep,
        );
        expect(result).toEqual({
          ok: true,
          thread: { id: 'thread-a', agentId: AGENT, ownerId: ANN, createdAt: at(5) },
          turn: {
            id: 'turn-a',
            threadId: 'thread-a',
            agentId: AGENT,
            ownerId: ANN,
            status: 'RUNNING',
            text: null,
            error: null,
            iterations: 0,
            step: null,
            createdAt: at(5),
            updatedAt: at(5),
            expiresAt: null,
          },
          superseded: null,
          agent: agentConfig(AGENT),
          message: {
            id: expect.any(String),
            threadId: 'thread-a',
            turnId: 'turn-a',
            role: 'USER',
            text: 'Hello there',
            toolCalls: [],
            toolCallId: null,
            createdAt: at(5),
          },
        });
        expect(await store.listThreadMessages('thread-a')).toEqual([result.ok && result.message]);
        expect(await store.getThread('thread-a', ANN)).toEqual({
          id: 'thread-a',
          agentId: AGENT,
          ownerId: ANN,
          createdAt: at(5),
        });
        expect(await store.loadTurn('turn-a')).toEqual(result.ok && result.turn);
        expect(await store.listThreadMessages('thread-a')).toEqual([
          {
            id: expect.any(String),
            threadId: 'thread-a',
            turnId: 'turn-a',
            role: 'USER',
            text: 'Hello there',
            toolCalls: [],
            toolCallId: null,
            createdAt: at(5),
          },
        ]);
        expect(await store.holdsLease('turn-a', 'host:1:a')).toBe(true);
      });

      it('on an existing thread of the owner, once its last turn ended: the same thread, a new RUNNING turn', async () => {
        const first = await runningTurn(store, { now: at(0) });
        await store.unleasedTurnWriter(first.turn.id).finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(1) });
        const next = await runningTurn(store, { threadId: first.thread.id, now: at(2), message: 'And now?' });
        expect(next.thread).toEqual(first.thread);
        expect(next.turn).toMatchObject({ threadId: first.thread.id, status: 'RUNNING', createdAt: at(2) });
        expect(next.superseded).toBeNull();
        expect(ids(await store.listTurns(first.thread.id))).toEqual([first.turn.id, next.turn.id]);
        const users = (await store.listThreadMessages(first.thread.id)).filter((m) => m.role === 'USER');
        expect(users.map((m) => [m.turnId, m.text])).toEqual([
          [first.turn.id, 'Tidy my notes.'],
          [next.turn.id, 'And now?'],
        ]);
      });

      it("refuses another owner's thread and an unknown one as NOT_FOUND, another agent's as WRONG_AGENT, writing nothing", async () => {
        const { thread, turn } = await runningTurn(store);
        await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
        const refused = [
          await store.startTurn(startInput({ threadId: thread.id, ownerId: BOB, turnId: 'turn-bob' }), closeStep),
          await store.startTurn(startInput({ threadId: 'thread-nowhere', turnId: 'turn-lost' }), closeStep),
          await store.startTurn(
            startInput({ threadId: thread.id, agentId: SIDE_AGENT, turnId: 'turn-side' }),
            closeStep,
          ),
        ];
        expect(refused).toEqual([
          { ok: false, code: 'NOT_FOUND' },
          { ok: false, code: 'NOT_FOUND' },
          { ok: false, code: 'WRONG_AGENT' },
        ]);
        for (const id of ['turn-bob', 'turn-lost', 'turn-side']) expect(await store.loadTurn(id)).toBeNull();
        expect(ids(await store.listTurns(thread.id))).toEqual([turn.id]);
        expect(await store.listThreadMessages(thread.id)).toHaveLength(1);
        expect((await store.listThreads(BOB, null, 10, null)).items).toEqual([]);
      });

      it('refuses an unknown agent as AGENT_NOT_FOUND, writing nothing, even on an existing thread', async () => {
        const { thread } = await runningTurn(store);
        expect(await store.startTurn(startInput({ agentId: 'agent-none', turnId: 'turn-none' }), closeStep)).toEqual({
          ok: false,
          code: 'AGENT_NOT_FOUND',
        });
        expect(
          await store.startTurn(
            startInput({ agentId: 'agent-none', threadId: thread.id, turnId: 'turn-none-2' }),
            closeStep,
          ),
        ).toEqual({ ok: false, code: 'AGENT_NOT_FOUND' });
        expect(await store.loadTurn('turn-none')).toBeNull();
        expect(await store.loadTurn('turn-none-2')).toBeNull();
        expect((await store.listThreads(ANN, null, 10, null)).items).toHaveLength(1);
      });

      it('returns the agent as committed when the turn starts: a gating change before it applies', async () => {
        await store.updateAgentGating(
          AGENT,
          { requireToolConfirmation: false, toolConfirmation: { 'demo:x': 'NEVER' } },
          at(1),
        );
        const started = await runningTurn(store, { now: at(2) });
        expect(started.agent).toMatchObject({
          requireToolConfirmation: false,
          toolConfirmation: { 'demo:x': 'NEVER' },
        });
      });

      it('refuses a thread whose turn is RUNNING with THREAD_BUSY, writing nothing', async () => {
        const { thread, turn } = await runningTurn(store, { lease: lease('host:1:a') });
        const before = await stateOf(store, turn.id);
        const result = await store.startTurn(startInput({ threadId: thread.id, turnId: 'turn-late' }), closeStep);
        expect(result).toEqual({ ok: false, code: 'THREAD_BUSY' });
        expect(await store.loadTurn('turn-late')).toBeNull();
        expect(await stateOf(store, turn.id)).toEqual(before);
        expect(await store.listThreadMessages(thread.id)).toHaveLength(1);
      });

      it('supersedes a PAUSED turn: CANCELLED, its elicitations closed, one synthetic TOOL message per call, before the new USER message', async () => {
        const paused = await pausedTurn(store, { elicitations: 2, mixed: true, now: at(0) });
        const result = await store.startTurn(
          startInput({ threadId: paused.thread.id, now: at(20), message: 'Never mind.', turnId: 'turn-new' }),
          closeStep,
        );
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        expect(result.superseded).toMatchObject({
          id: paused.turn.id,
          status: 'CANCELLED',
          step: null,
          updatedAt: at(20),
        });
        expect(await store.loadTurn(paused.turn.id)).toEqual(result.superseded);
        expect(result.turn).toMatchObject({ id: 'turn-new', status: 'RUNNING', threadId: paused.thread.id });
        expect(await statusesOf(store, paused.turn.id)).toEqual(paused.elicitations.map((e) => [e.id, 'CANCELLED']));

        const expected = closing(paused.step, 'superseded');
        expect(await toolAnswers(store, paused.turn.id)).toEqual(expected);
        expect(expected).toEqual([
          [callNamed(paused, 'lookup').id, toolText.superseded('lookup')],
          [callNamed(paused, 'wipe').id, toolText.denied('wipe', 'policy says no')],
          [callNamed(paused, 'edit_1').id, toolText.superseded('edit_1')],
          [callNamed(paused, 'edit_2').id, toolText.superseded('edit_2')],
        ]);
        const transcript = await store.listThreadMessages(paused.thread.id);
        expect(transcript.map((m) => [m.role, m.turnId])).toEqual([
          ['USER', paused.turn.id],
          ['ASSISTANT', paused.turn.id],
          ['TOOL', paused.turn.id],
          ['TOOL', paused.turn.id],
          ['TOOL', paused.turn.id],
          ['TOOL', paused.turn.id],
          ['USER', 'turn-new'],
        ]);
      });

      it('supersedes a PAUSED turn past its expiry as EXPIRED, with the expired texts, keeping answers given', async () => {
        const paused = await pausedTurn(store, { elicitations: 2, expiresAt: at(60) });
        const [first, second] = paused.elicitations;
        const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'use a copy' } };
        expect((await answer(store, first!.id, declined, { now: at(30) })).kind).toBe('recorded');
        const result = await store.startTurn(startInput({ threadId: paused.thread.id, now: at(60) }), closeStep);
        expect(result.ok && result.superseded).toMatchObject({ id: paused.turn.id, status: 'EXPIRED' });
        expect(await statusesOf(store, paused.turn.id)).toEqual([
          [first!.id, 'DECLINED'],
          [second!.id, 'EXPIRED'],
        ]);
        expect(await toolAnswers(store, paused.turn.id)).toEqual([
          [callNamed(paused, 'edit_1').id, toolText.declined('edit_1', 'use a copy')],
          [callNamed(paused, 'edit_2').id, toolText.expired('edit_2')],
        ]);
      });
    });

    describe('idempotency keys (startTurn)', () => {
      beforeEach(seedAgents);

      /** Every thread and turn of the owner, with each thread's USER messages: what a start may have added. */
      async function everything(ownerId = ANN) {
        const threads = (await store.listThreads(ownerId, null, 100, null)).items;
        return Promise.all(
          threads.map(async (thread) => ({
            thread: thread.id,
            turns: ids(await store.listTurns(thread.id)),
            users: (await store.listThreadMessages(thread.id)).filter((m) => m.role === 'USER').map((m) => m.text),
          })),
        );
      }

      it('the same request again returns the turn it started, as it is now, and writes nothing', async () => {
        const first = await runningTurn(store, { idempotencyKey: 'key-1', message: 'Hello', now: at(1) });
        const paused = await store.unleasedTurnWriter(first.turn.id).pauseTurn({
          step: askingStep(toolCall('edit'), 'elc-1'),
          elicitations: [draftFor(toolCall('edit'), 'elc-1')],
          text: 'Allow it?',
          expiresAt: at(3600),
          now: at(2),
        });
        const before = await everything();
        const again = await store.startTurn(
          startInput({ idempotencyKey: 'key-1', message: 'Hello', now: at(3), turnId: 'turn-again' }),
          closeStep,
        );
        expect(again).toEqual({ ok: true, replayed: true, thread: first.thread, turn: paused.turn });
        expect(await store.loadTurn('turn-again')).toBeNull();
        expect(await everything()).toEqual(before);
        expect(before).toEqual([{ thread: first.thread.id, turns: [first.turn.id], users: ['Hello'] }]);
      });

      it('on an existing thread: the key finds its turn even when the thread now runs another (no THREAD_BUSY)', async () => {
        const { thread, turn } = await runningTurn(store);
        await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
        const keyed = await runningTurn(store, { threadId: thread.id, idempotencyKey: 'key-1', now: at(2) });
        await store.unleasedTurnWriter(keyed.turn.id).finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(3) });
        const later = await runningTurn(store, { threadId: thread.id, now: at(4) });
        const again = await store.startTurn(startInput({ threadId: thread.id, idempotencyKey: 'key-1' }), closeStep);
        expect(again).toMatchObject({
          ok: true,
          replayed: true,
          thread,
          turn: { id: keyed.turn.id, status: 'COMPLETED' },
        });
        expect(ids(await store.listTurns(thread.id))).toEqual([turn.id, keyed.turn.id, later.turn.id]);
        expect(await store.loadTurn(later.turn.id)).toMatchObject({ status: 'RUNNING' });
      });

      it('the same key with another agent, thread or message is IDEMPOTENCY_KEY_REUSED, writing nothing', async () => {
        const first = await runningTurn(store, { idempotencyKey: 'key-1' });
        await store.unleasedTurnWriter(first.turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
        const before = await everything();
        const others = [
          startInput({ idempotencyKey: 'key-1', message: 'Something else.' }),
          startInput({ idempotencyKey: 'key-1', agentId: SIDE_AGENT }),
          startInput({ idempotencyKey: 'key-1', threadId: first.thread.id }),
        ];
        for (const input of others) {
          expect(await store.startTurn(input, closeStep)).toEqual({ ok: false, code: 'IDEMPOTENCY_KEY_REUSED' });
          expect(await store.loadTurn(input.turnId)).toBeNull();
        }
        expect(await everything()).toEqual(before);
      });

      it("keys are per owner: another owner's same key starts that owner's own turn and never reads the first", async () => {
        const ann = await runningTurn(store, { idempotencyKey: 'key-1' });
        const bob = await store.startTurn(startInput({ ownerId: BOB, idempotencyKey: 'key-1' }), closeStep);
        expect(bob).toMatchObject({ ok: true, turn: { ownerId: BOB } });
        expect(bob.ok && bob.replayed).toBeFalsy();
        expect(bob.ok && bob.turn.id).not.toBe(ann.turn.id);
        const bobAgain = await store.startTurn(startInput({ ownerId: BOB, idempotencyKey: 'key-1' }), closeStep);
        expect(bobAgain).toMatchObject({ ok: true, replayed: true, turn: { id: bob.ok && bob.turn.id } });
        const annAgain = await store.startTurn(startInput({ idempotencyKey: 'key-1' }), closeStep);
        expect(annAgain).toMatchObject({ ok: true, replayed: true, turn: { id: ann.turn.id } });
      });

      it('a refused start claims no key: sent again once it can start, it starts the turn', async () => {
        const { thread, turn } = await runningTurn(store);
        const keyed = startInput({ threadId: thread.id, idempotencyKey: 'key-1', turnId: 'turn-keyed' });
        expect(await store.startTurn(keyed, closeStep)).toEqual({ ok: false, code: 'THREAD_BUSY' });
        expect(
          await store.startTurn(startInput({ agentId: 'agent-none', idempotencyKey: 'key-2' }), closeStep),
        ).toEqual({ ok: false, code: 'AGENT_NOT_FOUND' });
        expect(
          await store.startTurn(startInput({ threadId: 'thread-none', idempotencyKey: 'key-3' }), closeStep),
        ).toEqual({ ok: false, code: 'NOT_FOUND' });
        await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
        const started = await store.startTurn(keyed, closeStep);
        expect(started).toMatchObject({ ok: true, turn: { id: 'turn-keyed', status: 'RUNNING' } });
        expect(started.ok && started.replayed).toBeFalsy();
        expect(await store.deleteIdempotencyKeys(at(10_000), 10)).toBe(1);
      });

      it('deleteIdempotencyKeys deletes at most `limit` keys claimed before `before`; a deleted key starts anew', async () => {
        const first = await runningTurn(store, { idempotencyKey: 'key-1', now: at(10) });
        await runningTurn(store, { idempotencyKey: 'key-2', now: at(20) });
        await runningTurn(store, { idempotencyKey: 'key-3', now: at(30) });
        expect(await store.deleteIdempotencyKeys(at(10), 10)).toBe(0); // claimed at at(10), not before it
        expect(await store.deleteIdempotencyKeys(at(25), 1)).toBe(1);
        expect(await store.deleteIdempotencyKeys(at(25), 1)).toBe(1);
        expect(await store.deleteIdempotencyKeys(at(25), 1)).toBe(0);
        const again = await store.startTurn(startInput({ idempotencyKey: 'key-1', turnId: 'turn-new' }), closeStep);
        expect(again).toMatchObject({ ok: true, turn: { id: 'turn-new' } });
        expect(again.ok && again.replayed).toBeFalsy();
        expect(await store.loadTurn(first.turn.id)).toMatchObject({ status: 'RUNNING' });
        const kept = await store.startTurn(startInput({ idempotencyKey: 'key-3' }), closeStep);
        expect(kept).toMatchObject({ ok: true, replayed: true });
      });
    });

    describe('reading threads, turns and messages', () => {
      beforeEach(seedAgents);

      it("reads are scoped to the owner: another owner's thread, turn and elicitation read null", async () => {
        const paused = await pausedTurn(store);
        const elicitation = paused.elicitations[0]!;
        expect(await store.getThread(paused.thread.id, ANN)).toEqual(paused.thread);
        expect(await store.getTurn(paused.turn.id, ANN)).toEqual(paused.turn);
        expect(await store.getElicitation(elicitation.id, ANN)).toEqual(elicitation);
        expect(await store.getThread(paused.thread.id, BOB)).toBeNull();
        expect(await store.getTurn(paused.turn.id, BOB)).toBeNull();
        expect(await store.getElicitation(elicitation.id, BOB)).toBeNull();
        expect(await store.getThread('thread-none', ANN)).toBeNull();
        expect(await store.getTurn('turn-none', ANN)).toBeNull();
        expect(await store.loadTurn('turn-none')).toBeNull();
        expect(await store.getElicitation('elc-none', ANN)).toBeNull();
      });

      it('listThreads pages the owner’s threads in creation order, with cursors, of one agent or all', async () => {
        const threads: ThreadRecord[] = [];
        for (let i = 0; i < 5; i++) {
          const agentId = i === 1 || i === 3 ? SIDE_AGENT : AGENT;
          threads.push((await runningTurn(store, { agentId, now: at(i) })).thread);
        }
        await runningTurn(store, { ownerId: BOB, now: at(9) });

        const page1 = await store.listThreads(ANN, null, 2, null);
        expect(page1.items).toEqual(threads.slice(0, 2));
        expect(page1.cursors).toHaveLength(2);
        expect(page1.endCursor).toBe(page1.cursors[1]);
        expect(page1.hasNextPage).toBe(true);
        const page2 = await store.listThreads(ANN, null, 2, page1.endCursor);
        expect(page2.items).toEqual(threads.slice(2, 4));
        expect(page2.hasNextPage).toBe(true);
        const page3 = await store.listThreads(ANN, null, 2, page2.endCursor);
        expect(page3.items).toEqual(threads.slice(4));
        expect(page3.hasNextPage).toBe(false);
        expect(page3.endCursor).toBe(page3.cursors[0]);

        // Any item's cursor starts the next page after it.
        expect(ids((await store.listThreads(ANN, null, 10, page1.cursors[0]!)).items)).toEqual(ids(threads.slice(1)));
        expect(await store.listThreads(ANN, null, 5, null)).toMatchObject({ hasNextPage: false });

        const side = await store.listThreads(ANN, SIDE_AGENT, 10, null);
        expect(side.items).toEqual([threads[1], threads[3]]);
        expect(side.hasNextPage).toBe(false);
        const sidePage = await store.listThreads(ANN, SIDE_AGENT, 1, null);
        expect(sidePage.items).toEqual([threads[1]]);
        expect(sidePage.hasNextPage).toBe(true);
        expect((await store.listThreads(ANN, SIDE_AGENT, 1, sidePage.endCursor)).items).toEqual([threads[3]]);

        expect(ids((await store.listThreads(BOB, null, 10, null)).items)).toHaveLength(1);
        expect(await store.listThreads('user-nobody', null, 10, null)).toEqual({
          items: [],
          cursors: [],
          hasNextPage: false,
          endCursor: null,
        });
      });

      it('listTurns lists a thread’s turns oldest first, with their state', async () => {
        const first = await runningTurn(store, { now: at(0) });
        await store.unleasedTurnWriter(first.turn.id).finishTurn({ status: 'FAILED', error: 'model down', now: at(1) });
        const second = await runningTurn(store, { threadId: first.thread.id, now: at(2) });
        await store.unleasedTurnWriter(second.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(3) });
        const third = await runningTurn(store, { threadId: first.thread.id, now: at(4) });
        await runningTurn(store, { now: at(5) }); // another thread
        const turns = await store.listTurns(first.thread.id);
        expect(turns.map((t) => [t.id, t.status])).toEqual([
          [first.turn.id, 'FAILED'],
          [second.turn.id, 'COMPLETED'],
          [third.turn.id, 'RUNNING'],
        ]);
        expect(turns[2]).toEqual(third.turn);
        expect(await store.listTurns('thread-none')).toEqual([]);
      });

      it('messages read back in the order written, per thread and per turn, tool calls and ids intact', async () => {
        const { thread, turn } = await runningTurn(store, { now: at(0) });
        const calls = [
          toolCall('edit_note', { id: 'n1', patch: { title: 'Größe ✓', tags: ['a', 'b'], pinned: true, n: 1.5 } }),
          toolCall('read_graph'),
        ];
        const assistant = await store
          .unleasedTurnWriter(turn.id)
          .appendAssistantMessage({ message: assistantMessage('Let me look.', calls), now: at(1) });
        expect(assistant).toEqual({
          id: expect.any(String),
          threadId: thread.id,
          turnId: turn.id,
          role: 'ASSISTANT',
          text: 'Let me look.',
          toolCalls: calls,
          toolCallId: null,
          createdAt: at(1),
        });
        await store.unleasedTurnWriter(turn.id).appendToolMessages({
          messages: [
            { toolCallId: calls[0]!.id, text: 'edited' },
            { toolCallId: calls[1]!.id, text: '{"nodes":[]}' },
          ],
          now: at(1),
        });
        await store
          .unleasedTurnWriter(turn.id)
          .appendAssistantMessage({ message: assistantMessage('Done.'), now: at(2) });
        await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(2) });
        const next = await runningTurn(store, { threadId: thread.id, now: at(3), message: 'Thanks' });

        const turnMessages = await store.listTurnMessages(turn.id);
        expect(turnMessages.map((m) => [m.role, m.text, m.toolCallId])).toEqual([
          ['USER', 'Tidy my notes.', null],
          ['ASSISTANT', 'Let me look.', null],
          ['TOOL', 'edited', calls[0]!.id],
          ['TOOL', '{"nodes":[]}', calls[1]!.id],
          ['ASSISTANT', 'Done.', null],
        ]);
        expect(turnMessages[1]).toEqual(assistant);
        expect(turnMessages[2]).toMatchObject({ toolCalls: [], turnId: turn.id, threadId: thread.id });
        expect(turnMessages[4]!.toolCalls).toEqual([]);
        expect(new Set(ids(turnMessages)).size).toBe(5);

        const threadMessages = await store.listThreadMessages(thread.id);
        expect(threadMessages.slice(0, 5)).toEqual(turnMessages);
        expect(threadMessages.slice(5).map((m) => [m.role, m.text, m.turnId])).toEqual([
          ['USER', 'Thanks', next.turn.id],
        ]);
        expect(await store.listTurnMessages('turn-none')).toEqual([]);
        expect(await store.listThreadMessages('thread-none')).toEqual([]);
      });
    });

    // ---- 3. the loop's writes ----------------------------------------------------------------------------------

    describe("the loop's writes", () => {
      beforeEach(seedAgents);

      it('appendAssistantMessage sets the iteration count with the message, or leaves it when not given', async () => {
        const { turn } = await runningTurn(store);
        await store
          .unleasedTurnWriter(turn.id)
          .appendAssistantMessage({ message: assistantMessage('one'), iterations: 1, now: at(1) });
        expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 1 });
        await store
          .unleasedTurnWriter(turn.id)
          .appendAssistantMessage({ message: assistantMessage('two'), now: at(2) });
        expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 1 });
        await store.unleasedTurnWriter(turn.id).setIterations({ iterations: 4, now: at(3) });
        expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 4, updatedAt: at(3) });
      });

      it('markToolStarted is true once per call, then false; finishTool appends its TOOL message and journals it finished', async () => {
        const { turn } = await runningTurn(store);
        const [a, b] = [toolCall('edit_note'), toolCall('read_graph')];
        await store
          .unleasedTurnWriter(turn.id)
          .appendAssistantMessage({ message: assistantMessage(null, [a, b]), iterations: 1, now: at(1) });
        expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(1) })).toBe(true);
        expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(2) })).toBe(false);
        expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: b.id, now: at(2) })).toBe(true);
        expect(sorted(await store.listUnfinishedToolCalls(turn.id))).toEqual(sorted([a.id, b.id]));

        await store
          .unleasedTurnWriter(turn.id)
          .finishTool({ message: { toolCallId: a.id, text: 'edited' }, now: at(3) });
        expect(await store.loadTurn(turn.id)).toMatchObject({ id: turn.id, status: 'RUNNING', iterations: 1 });
        expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([b.id]);
        expect(await toolAnswers(store, turn.id)).toEqual([[a.id, 'edited']]);
        expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(4) })).toBe(false); // finished is still started
        expect(await store.listUnfinishedToolCalls('turn-none')).toEqual([]);
      });

      it('a call gets one TOOL message: a second one for the same call is dropped, whichever write brings it', async () => {
        const { turn } = await runningTurn(store);
        const [a, b] = [toolCall('edit_note'), toolCall('read_graph')];
        await store
          .unleasedTurnWriter(turn.id)
          .appendAssistantMessage({ message: assistantMessage(null, [a, b]), iterations: 1, now: at(1) });
        await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: a.id, now: at(1) });
        await store
          .unleasedTurnWriter(turn.id)
          .finishTool({ message: { toolCallId: a.id, text: 'first' }, now: at(2) });
        await store
          .unleasedTurnWriter(turn.id)
          .finishTool({ message: { toolCallId: a.id, text: 'late result' }, now: at(3) });
        await store.unleasedTurnWriter(turn.id).appendToolMessages({
          messages: [
            { toolCallId: a.id, text: 'synthetic' },
            { toolCallId: b.id, text: 'b once' },
            { toolCallId: b.id, text: 'b twice' },
          ],
          now: at(4),
        });
        expect(await toolAnswers(store, turn.id)).toEqual([
          [a.id, 'first'],
          [b.id, 'b once'],
        ]);
        expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([]);
      });

      it('the same tool call id in two turns is two calls: each gets its TOOL message', async () => {
        const first = await runningTurn(store, { now: at(0) });
        const second = await runningTurn(store, { now: at(0) });
        for (const { turn } of [first, second]) {
          await store
            .unleasedTurnWriter(turn.id)
            .appendToolMessages({ messages: [{ toolCallId: 'call_0', text: `for ${turn.id}` }], now: at(1) });
          expect(await store.unleasedTurnWriter(turn.id).markToolStarted({ toolCallId: 'call_0', now: at(1) })).toBe(
            true,
          );
        }
        expect(await toolAnswers(store, first.turn.id)).toEqual([['call_0', `for ${first.turn.id}`]]);
        expect(await toolAnswers(store, second.turn.id)).toEqual([['call_0', `for ${second.turn.id}`]]);
      });

      it("pauseTurn with the step's answer appends it and sets the iteration count in the same commit", async () => {
        const { turn, thread } = await runningTurn(store, { now: at(0) });
        const call = toolCall('edit_note', { id: 'n1' });
        const step = askingStep(call, 'elc-1');
        const answer = { message: assistantMessage('Let me edit it.', [call]), iterations: 1 };
        const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
          step,
          elicitations: [draftFor(call, 'elc-1')],
          text: 'May I edit n1?',
          expiresAt: at(61),
          answer,
          now: at(1),
        });
        expect(paused.turn).toMatchObject({ status: 'PAUSED', iterations: 1, step });
        expect(await store.loadTurn(turn.id)).toEqual(paused.turn);
        const messages = await store.listThreadMessages(thread.id);
        expect(messages.map((m) => [m.role, m.text, m.toolCalls])).toEqual([
          ['USER', 'Tidy my notes.', []],
          ['ASSISTANT', 'Let me edit it.', [call]],
        ]);
        expect(messages[1]).toMatchObject({ turnId: turn.id, threadId: thread.id, createdAt: at(1), toolCallId: null });
        expect(await store.listTurnMessages(turn.id)).toEqual(messages);
      });

      it('pauseTurn stores the step, text and expiry with PENDING elicitations, and returns both as stored', async () => {
        const { turn, thread } = await runningTurn(store, { now: at(0) });
        const call = toolCall('edit_note', { id: 'n1' });
        const step = askingStep(call, 'elc-1');
        await store
          .unleasedTurnWriter(turn.id)
          .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now: at(1) });
        const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
          step,
          elicitations: [draftFor(call, 'elc-1')],
          text: 'May I edit n1?',
          expiresAt: at(61),
          now: at(1),
        });
        expect(paused.turn).toEqual({
          ...turn,
          status: 'PAUSED',
          text: 'May I edit n1?',
          iterations: 1,
          step,
          updatedAt: at(1),
          expiresAt: at(61),
        });
        expect(paused.elicitations).toEqual([
          {
            ...draftFor(call, 'elc-1'),
            turnId: turn.id,
            threadId: thread.id,
            agentId: AGENT,
            ownerId: ANN,
            status: 'PENDING',
            response: null,
            grantId: null,
            resolvedBy: null,
            resolvedAt: null,
            createdAt: at(1),
            expiresAt: at(61),
          },
        ]);
        expect(await store.loadTurn(turn.id)).toEqual(paused.turn);
        expect(await store.listTurnElicitations(turn.id)).toEqual(paused.elicitations);
        expect(await store.getElicitation('elc-1', ANN)).toEqual(paused.elicitations[0]);
        expect(await store.listRunningTurns()).toEqual([]);
      });

      it('listTurnElicitations lists a turn’s elicitations in the order created, and only its own', async () => {
        const paused = await pausedTurn(store, { elicitations: 3 });
        await pausedTurn(store, { elicitations: 1 });
        expect(ids(await store.listTurnElicitations(paused.turn.id))).toEqual(ids(paused.elicitations));
        expect(await store.listTurnElicitations('turn-none')).toEqual([]);
      });

      it.each([
        ['COMPLETED', { text: 'All done.' }, { text: 'All done.', error: null }],
        ['FAILED', { error: 'The model failed.' }, { text: null, error: 'The model failed.' }],
        ['CANCELLED', {}, { text: null, error: null }],
      ] as const)('finishTurn ends a RUNNING turn %s with its fields', async (status, fields, expected) => {
        const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
        const finished = await store.unleasedTurnWriter(turn.id).finishTurn({ status, ...fields, now: at(7) });
        expect(finished).toEqual({ ...turn, status, ...expected, step: null, expiresAt: null, updatedAt: at(7) });
        expect(await store.loadTurn(turn.id)).toEqual(finished);
        expect(await store.listRunningTurns()).toEqual([]);
        expect(await store.holdsLease(turn.id, 'host:1:a')).toBe(false);
      });

      it('finishTurn with the final answer: the ASSISTANT message and the iteration count commit with the end', async () => {
        const { turn, thread } = await runningTurn(store, { lease: lease('host:1:a') });
        const finished = await store.turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } }).finishTurn({
          status: 'COMPLETED',
          text: 'All done.',
          answer: { message: assistantMessage('All done.'), iterations: 3 },
          now: at(7),
        });
        expect(finished).toMatchObject({ status: 'COMPLETED', text: 'All done.', iterations: 3, updatedAt: at(7) });
        expect((await store.listThreadMessages(thread.id)).map((m) => [m.role, m.text, m.turnId, m.createdAt])).toEqual(
          [
            ['USER', 'Tidy my notes.', turn.id, at(0)],
            ['ASSISTANT', 'All done.', turn.id, at(7)],
          ],
        );
        // Held by another process: neither the end nor the answer is written.
        const other = await runningTurn(store, { lease: lease('host:1:a') });
        const lost = await rejection(
          store.turnWriter({ turnId: other.turn.id, lease: { owner: 'host:2:b' } }).finishTurn({
            status: 'COMPLETED',
            text: 'x',
            answer: { message: assistantMessage('x'), iterations: 1 },
            now: at(8),
          }),
        );
        expect(lost).toBeInstanceOf(LeaseLostError);
        expect(await store.loadTurn(other.turn.id)).toMatchObject({ status: 'RUNNING', iterations: 0 });
        expect(await store.listThreadMessages(other.thread.id)).toHaveLength(1);
      });

      describe('with leaseOwner: only while that process holds the lease, else LeaseLostError and nothing written', () => {
        type Write = (s: Store, turnId: string, owner: string) => Promise<unknown>;
        const CALL = 'call-journal';
        const writes: [string, Write][] = [
          [
            'appendAssistantMessage',
            (s, t, o) =>
              s
                .turnWriter({ turnId: t, lease: { owner: o } })
                .appendAssistantMessage({ message: assistantMessage('late'), iterations: 5, now: at(9) }),
          ],
          [
            'appendToolMessages',
            (s, t, o) =>
              s
                .turnWriter({ turnId: t, lease: { owner: o } })
                .appendToolMessages({ messages: [{ toolCallId: 'call-x', text: 'x' }], now: at(9) }),
          ],
          [
            'markToolStarted',
            (s, t, o) =>
              s.turnWriter({ turnId: t, lease: { owner: o } }).markToolStarted({ toolCallId: 'call-y', now: at(9) }),
          ],
          [
            'finishTool',
            (s, t, o) =>
              s
                .turnWriter({ turnId: t, lease: { owner: o } })
                .finishTool({ message: { toolCallId: CALL, text: 'result' }, now: at(9) }),
          ],
          [
            'pauseTurn',
            (s, t, o) => {
              const call = { ...toolCall('edit_note'), id: 'call-z' };
              const step = askingStep(call, 'elc-z');
              return s.turnWriter({ turnId: t, lease: { owner: o } }).pauseTurn({
                step,
                elicitations: [draftFor(call, 'elc-z')],
                text: 'May I?',
                expiresAt: at(99),
                now: at(9),
              });
            },
          ],
          [
            "pauseTurn with the step's answer",
            (s, t, o) => {
              const call = { ...toolCall('edit_note'), id: 'call-w' };
              const step = askingStep(call, 'elc-w');
              const answer = { message: assistantMessage(null, [call]), iterations: 4 };
              return s.turnWriter({ turnId: t, lease: { owner: o } }).pauseTurn({
                step,
                elicitations: [draftFor(call, 'elc-w')],
                text: 'May I?',
                expiresAt: at(99),
                answer,
                now: at(9),
              });
            },
          ],
          [
            'finishTurn',
            (s, t, o) =>
              s
                .turnWriter({ turnId: t, lease: { owner: o } })
                .finishTurn({ status: 'COMPLETED', text: 'late', now: at(9) }),
          ],
          [
            'setIterations',
            (s, t, o) => s.turnWriter({ turnId: t, lease: { owner: o } }).setIterations({ iterations: 7, now: at(9) }),
          ],
        ];

        /** A RUNNING turn held by host:1:a, with one call journaled as started (for finishTool). */
        async function heldTurn(): Promise<string> {
          const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
          await store
            .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
            .markToolStarted({ toolCallId: CALL, now: at(1) });
          return turn.id;
        }

        it.each(writes)('%s by the holder is written', async (_name, write) => {
          const turnId = await heldTurn();
          const before = await stateOf(store, turnId);
          await write(store, turnId, 'host:1:a');
          expect(await stateOf(store, turnId)).not.toEqual(before);
        });

        it.each(writes)('%s by a process whose lease was taken over', async (_name, write) => {
          const turnId = await heldTurn();
          expect(await store.claimTurn(turnId, 'host:1:a', lease('host:2:b'), at(5))).not.toBeNull();
          const before = await stateOf(store, turnId);
          const error = await rejection(write(store, turnId, 'host:1:a'));
          expect(error).toBeInstanceOf(LeaseLostError);
          expect((error as LeaseLostError).turnId).toBe(turnId);
          expect(await stateOf(store, turnId)).toEqual(before);
        });

        it.each(writes)('%s to a turn that has no lease', async (_name, write) => {
          const { turn } = await runningTurn(store);
          const before = await stateOf(store, turn.id);
          expect(await rejection(write(store, turn.id, 'host:1:a'))).toBeInstanceOf(LeaseLostError);
          expect(await stateOf(store, turn.id)).toEqual(before);
        });

        it.each(writes)('%s to a turn that is no longer RUNNING (paused)', async (_name, write) => {
          const paused = await pausedTurn(store, { lease: lease('host:1:a') });
          const before = await stateOf(store, paused.turn.id);
          expect(await rejection(write(store, paused.turn.id, 'host:1:a'))).toBeInstanceOf(LeaseLostError);
          expect(await stateOf(store, paused.turn.id)).toEqual(before);
        });
      });
    });

    // ---- 8. the paused step --------------------------------------------------------------------------------------

    describe('the PendingStep', () => {
      beforeEach(seedAgents);

      it('reads back equal to the step given to pauseTurn, every outcome and argument intact', async () => {
        const { turn } = await runningTurn(store);
        const calls = {
          run: toolCall('read_graph', { depth: 2, filter: null, names: ['a', 'b'], nested: { deep: { ok: true } } }),
          vetoed: toolCall('wipe', { all: true }),
          rejected: toolCall('nope', { 'key.with.dots': 'v', unicode: 'naïve ✓ 日本', empty: {}, list: [] }),
          confirm: toolCall('delete_entities', { names: ['x'], count: 12345678, ratio: 0.25, negative: -3 }),
        };
        const step: PendingStep = {
          version: 1,
          calls: [
            { toolCall: calls.run, outcome: { kind: 'run' } },
            { toolCall: calls.vetoed, outcome: { kind: 'vetoed', reason: 'destructive tools are off "today"' } },
            { toolCall: calls.rejected, outcome: { kind: 'rejected', text: toolText.unknownTool('nope') } },
            { toolCall: calls.confirm, outcome: { kind: 'confirm', elicitationId: 'elc-step' } },
          ],
        };
        const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
          step: structuredClone(step),
          elicitations: [draftFor(calls.confirm, 'elc-step')],
          text: 'Allow delete_entities?',
          expiresAt: at(60),
          now: at(1),
        });
        expect(paused.turn.step).toEqual(step);
        expect((await store.loadTurn(turn.id))!.step).toEqual(step);
        expect((await store.getTurn(turn.id, ANN))!.step).toEqual(step);
        const resumed = await answer(store, 'elc-step', ACCEPT, { now: at(2) });
        expect(resumed.kind).toBe('resume');
        expect(resumed.kind === 'resume' && resumed.turn.step).toEqual(step);
      });
    });

    // ---- 4. answers --------------------------------------------------------------------------------------------

    describe('answers (resolveElicitation)', () => {
      beforeEach(seedAgents);

      it('ACCEPT of the only elicitation resumes: the turn RUNNING with the step, held by the given lease', async () => {
        const paused = await pausedTurn(store, { lease: lease('host:1:old') });
        const content = { instructions: 'only the title' };
        const result = await answer(
          store,
          paused.elicitations[0]!.id,
          { action: 'ACCEPT', content },
          {
            now: at(10),
            lease: lease('host:2:new', at(40)),
          },
        );
        expect(result).toEqual({
          kind: 'resume',
          elicitation: {
            ...paused.elicitations[0],
            status: 'ACCEPTED',
            response: { action: 'ACCEPT', content },
            resolvedBy: ANN,
            resolvedAt: at(10),
          },
          turn: { ...paused.turn, status: 'RUNNING', text: null, expiresAt: null, updatedAt: at(10) },
          elicitations: [expect.objectContaining({ id: paused.elicitations[0]!.id, status: 'ACCEPTED' })],
        });
        if (result.kind !== 'resume') return;
        expect(result.elicitations).toEqual([result.elicitation]);
        expect(await store.loadTurn(paused.turn.id)).toEqual(result.turn);
        expect(await store.getElicitation(result.elicitation.id, ANN)).toEqual(result.elicitation);
        expect(await store.holdsLease(paused.turn.id, 'host:2:new')).toBe(true);
        expect(await store.holdsLease(paused.turn.id, 'host:1:old')).toBe(false);
        expect(await store.listRunningLeases()).toEqual([
          { turnId: paused.turn.id, owner: 'host:2:new', expiresAt: at(40), recoveries: 0 },
        ]);
        expect(ids(await store.listRunningTurns())).toEqual([paused.turn.id]);
      });

      it('DECLINE of the last elicitation resumes too (the step runs and answers it with the decline)', async () => {
        const paused = await pausedTurn(store);
        const result = await answer(store, paused.elicitations[0]!.id, DECLINE);
        expect(result.kind).toBe('resume');
        expect(result.kind === 'resume' && result.elicitation.status).toBe('DECLINED');
        expect(await toolAnswers(store, paused.turn.id)).toEqual([]);
      });

      it('with two elicitations: the first answer is recorded (turn still PAUSED), the second resumes', async () => {
        const paused = await pausedTurn(store, { elicitations: 2 });
        const [first, second] = paused.elicitations;
        const recorded = await answer(store, first!.id, DECLINE, { now: at(10) });
        expect(recorded.kind).toBe('recorded');
        if (recorded.kind !== 'recorded') return;
        expect(recorded.elicitation).toMatchObject({ id: first!.id, status: 'DECLINED', response: DECLINE });
        const stillPaused = { ...paused.turn, updatedAt: expect.any(String) };
        expect(recorded.turn).toEqual(stillPaused);
        expect(await store.loadTurn(paused.turn.id)).toEqual(stillPaused);

        const resumed = await answer(store, second!.id, ACCEPT, { now: at(11), lease: lease('host:1:a') });
        expect(resumed.kind).toBe('resume');
        expect(resumed.kind === 'resume' && resumed.turn).toMatchObject({ status: 'RUNNING', updatedAt: at(11) });
        expect(await statusesOf(store, paused.turn.id)).toEqual([
          [first!.id, 'DECLINED'],
          [second!.id, 'ACCEPTED'],
        ]);
        expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(true);
      });

      it('the same answer again is a duplicate (content compared as JSON) and changes nothing, not even the lease', async () => {
        const paused = await pausedTurn(store);
        const id = paused.elicitations[0]!.id;
        const given = { action: 'ACCEPT', content: { instructions: 'carefully', extra: { a: 1, b: [1, 2] } } } as const;
        const first = await answer(store, id, given, { now: at(10), lease: lease('host:1:a') });
        expect(first.kind).toBe('resume');
        const state = await stateOf(store, paused.turn.id);
        const again = await answer(
          store,
          id,
          { action: 'ACCEPT', content: { extra: { b: [1, 2], a: 1 }, instructions: 'carefully' } },
          { now: at(20), lease: lease('host:2:b') },
        );
        expect(again.kind).toBe('duplicate');
        expect(again.kind === 'duplicate' && again.elicitation).toEqual(first.kind === 'resume' && first.elicitation);
        expect(again.kind === 'duplicate' && again.turn.status).toBe('RUNNING');
        expect(await stateOf(store, paused.turn.id)).toEqual(state);
        expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(true);
      });

      it('a different answer after the first is already_resolved: the first answer stands', async () => {
        const paused = await pausedTurn(store, { elicitations: 2 });
        const id = paused.elicitations[0]!.id;
        await answer(store, id, { action: 'ACCEPT', content: { instructions: 'x' } });
        const state = await stateOf(store, paused.turn.id);
        for (const different of [
          DECLINE,
          CANCEL,
          ACCEPT,
          { action: 'ACCEPT', content: { instructions: 'y' } },
        ] satisfies ElicitationAnswer[]) {
          const result = await answer(store, id, different, { now: at(20) });
          expect(result.kind).toBe('already_resolved');
          expect(result.kind === 'already_resolved' && result.elicitation.response).toEqual({
            action: 'ACCEPT',
            content: { instructions: 'x' },
          });
        }
        expect(await stateOf(store, paused.turn.id)).toEqual(state);
      });

      it('CANCEL cancels the turn: its other elicitations closed, answers given kept, one TOOL message per call', async () => {
        const paused = await pausedTurn(store, { elicitations: 3, mixed: true });
        const [e1, e2, e3] = paused.elicitations;
        const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'not that one' } };
        expect((await answer(store, e1!.id, declined, { now: at(10) })).kind).toBe('recorded');
        const result = await answer(store, e2!.id, CANCEL, { now: at(11) });
        expect(result.kind).toBe('cancelled');
        if (result.kind !== 'cancelled') return;
        expect(result.turn).toMatchObject({ id: paused.turn.id, status: 'CANCELLED', step: null, updatedAt: at(11) });
        expect(result.elicitation).toMatchObject({
          id: e2!.id,
          status: 'CANCELLED',
          response: CANCEL,
          resolvedBy: ANN,
        });
        expect(await store.loadTurn(paused.turn.id)).toEqual(result.turn);
        expect(await statusesOf(store, paused.turn.id)).toEqual([
          [e1!.id, 'DECLINED'],
          [e2!.id, 'CANCELLED'],
          [e3!.id, 'CANCELLED'],
        ]);
        const expected = closing(paused.step, 'cancelled', { [e1!.id]: declined, [e2!.id]: CANCEL });
        expect(await toolAnswers(store, paused.turn.id)).toEqual(expected);
        expect(expected.map(([, text]) => text)).toEqual([
          toolText.cancelledByUser('lookup'),
          toolText.denied('wipe', 'policy says no'),
          toolText.declined('edit_1', 'not that one'),
          toolText.cancelledByUser('edit_2'),
          toolText.cancelledByUser('edit_3'),
        ]);
        expect(await store.listRunningTurns()).toEqual([]);

        expect((await answer(store, e2!.id, CANCEL, { now: at(12) })).kind).toBe('duplicate');
        expect((await answer(store, e3!.id, ACCEPT, { now: at(12) })).kind).toBe('already_resolved');
        expect(await toolAnswers(store, paused.turn.id)).toHaveLength(5);
      });

      it('an answer at or after expiresAt is expired: it expires the turn once (changed), then reports it (unchanged)', async () => {
        const paused = await pausedTurn(store, { elicitations: 2, expiresAt: at(60) });
        const [e1, e2] = paused.elicitations;
        const first = await answer(store, e1!.id, ACCEPT, { now: at(60), lease: lease('host:1:a') });
        expect(first).toMatchObject({ kind: 'expired', changed: true });
        if (first.kind !== 'expired') return;
        expect(first.turn).toMatchObject({ id: paused.turn.id, status: 'EXPIRED', step: null });
        expect(first.elicitation).toMatchObject({ id: e1!.id, status: 'EXPIRED', response: null });
        expect(await statusesOf(store, paused.turn.id)).toEqual([
          [e1!.id, 'EXPIRED'],
          [e2!.id, 'EXPIRED'],
        ]);
        expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'expired'));
        expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(false);

        const state = await stateOf(store, paused.turn.id);
        const later = await answer(store, e2!.id, DECLINE, { now: at(61) });
        expect(later).toMatchObject({ kind: 'expired', changed: false, turn: { status: 'EXPIRED' } });
        const again = await answer(store, e1!.id, ACCEPT, { now: at(62) });
        expect(again).toMatchObject({ kind: 'expired', changed: false });
        expect(await stateOf(store, paused.turn.id)).toEqual(state);
      });

      it('an answer just before expiresAt counts', async () => {
        const paused = await pausedTurn(store, { expiresAt: at(60) });
        const result = await answer(store, paused.elicitations[0]!.id, ACCEPT, {
          now: new Date(Date.parse(at(60)) - 1).toISOString(),
        });
        expect(result.kind).toBe('resume');
      });

      it("another owner's answer and an unknown id are not_found, and change nothing", async () => {
        const paused = await pausedTurn(store);
        const state = await stateOf(store, paused.turn.id);
        expect(await answer(store, paused.elicitations[0]!.id, ACCEPT, { ownerId: BOB })).toEqual({
          kind: 'not_found',
        });
        expect(await answer(store, paused.elicitations[0]!.id, CANCEL, { ownerId: BOB })).toEqual({
          kind: 'not_found',
        });
        expect(await answer(store, 'elc-unknown', ACCEPT)).toEqual({ kind: 'not_found' });
        expect(await stateOf(store, paused.turn.id)).toEqual(state);
      });
    });

    // ---- 5. reading elicitations ---------------------------------------------------------------------------------

    describe('reading elicitations', () => {
      beforeEach(seedAgents);

      it('listPendingElicitations: the owner’s PENDING ones not yet expired, oldest first, filtered, counted and paged', async () => {
        const main = await pausedTurn(store, { elicitations: 2, now: at(0) }); // e1, e2
        const side = await pausedTurn(store, { agentId: SIDE_AGENT, now: at(1) }); // e3
        const soon = await pausedTurn(store, { expiresAt: at(100), now: at(2) }); // e4: expired from at(100)
        const bob = await pausedTurn(store, { ownerId: BOB, now: at(3) }); // e5
        const answered = await pausedTurn(store, { now: at(4) });
        await answer(store, answered.elicitations[0]!.id, ACCEPT, { now: at(5) });
        const [e1, e2] = ids(main.elicitations);
        const [e3, e4, e5] = [side, soon, bob].map((p) => p.elicitations[0]!.id);

        const all = await store.listPendingElicitations(ANN, {}, at(100), 10, null);
        expect(ids(all.items)).toEqual([e1, e2, e3]);
        expect(all).toMatchObject({ totalCount: 3, hasNextPage: false });
        expect(all.items[0]).toEqual(main.elicitations[0]);
        expect(ids((await store.listPendingElicitations(ANN, {}, at(99), 10, null)).items)).toEqual([e1, e2, e3, e4]);
        expect(ids((await store.listPendingElicitations(BOB, {}, at(100), 10, null)).items)).toEqual([e5]);

        const byThread = await store.listPendingElicitations(ANN, { threadId: main.thread.id }, at(100), 10, null);
        expect(ids(byThread.items)).toEqual([e1, e2]);
        expect(byThread.totalCount).toBe(2);
        const byAgent = await store.listPendingElicitations(ANN, { agentId: SIDE_AGENT }, at(100), 10, null);
        expect(ids(byAgent.items)).toEqual([e3]);
        const both = await store.listPendingElicitations(
          ANN,
          { threadId: main.thread.id, agentId: SIDE_AGENT },
          at(100),
          10,
          null,
        );
        expect(both).toMatchObject({ items: [], totalCount: 0, hasNextPage: false });
        const nulls = await store.listPendingElicitations(ANN, { threadId: null, agentId: null }, at(100), 10, null);
        expect(ids(nulls.items)).toEqual([e1, e2, e3]);

        const page1 = await store.listPendingElicitations(ANN, {}, at(100), 2, null);
        expect(ids(page1.items)).toEqual([e1, e2]);
        expect(page1).toMatchObject({ hasNextPage: true, totalCount: 3, endCursor: page1.cursors[1] });
        const page2 = await store.listPendingElicitations(ANN, {}, at(100), 2, page1.endCursor);
        expect(ids(page2.items)).toEqual([e3]);
        expect(page2).toMatchObject({ hasNextPage: false, totalCount: 3 });
        const exact = await store.listPendingElicitations(ANN, {}, at(100), 3, null);
        expect(exact).toMatchObject({ hasNextPage: false, totalCount: 3 });
      });

      it('countPendingElicitations counts every owner’s PENDING elicitations not yet expired at `now`', async () => {
        expect(await store.countPendingElicitations(at(0))).toBe(0);
        await pausedTurn(store, { elicitations: 2 });
        await pausedTurn(store, { ownerId: BOB, expiresAt: at(100) });
        const answered = await pausedTurn(store);
        await answer(store, answered.elicitations[0]!.id, DECLINE);
        expect(await store.countPendingElicitations(at(99))).toBe(3);
        expect(await store.countPendingElicitations(at(100))).toBe(2);
      });

      it('listElicitations: every status, oldest first, statuses as read at `now` (PENDING past expiry is EXPIRED)', async () => {
        const partly = await pausedTurn(store, { elicitations: 2 }); // e1 ACCEPTED, e2 PENDING
        await answer(store, partly.elicitations[0]!.id, ACCEPT, { now: at(10) });
        const declined = await pausedTurn(store); // e3 DECLINED
        await answer(store, declined.elicitations[0]!.id, DECLINE, { now: at(10) });
        const cancelled = await pausedTurn(store, { elicitations: 2 }); // e4, e5 CANCELLED
        await answer(store, cancelled.elicitations[0]!.id, CANCEL, { now: at(10) });
        const swept = await pausedTurn(store, { expiresAt: at(100) }); // e6 EXPIRED, as stored
        expect(ids(await store.expireDueTurns(at(150), 10, closeStep))).toEqual([swept.turn.id]);
        const lapsed = await pausedTurn(store, { expiresAt: at(300) }); // e7 PENDING, past expiry from at(300)
        const bob = await pausedTurn(store, { ownerId: BOB }); // e8
        const side = await pausedTurn(store, { agentId: SIDE_AGENT }); // e9 PENDING
        const [e1, e2] = ids(partly.elicitations);
        const [e4, e5] = ids(cancelled.elicitations);
        const [e3, e6, e7, e8, e9] = [declined, swept, lapsed, bob, side].map((p) => p.elicitations[0]!.id);

        const list = async (
          filter: { threadId?: string | null; agentId?: string | null; statuses?: ElicitationStatus[] | null },
          now = at(500),
        ) => {
          const page = await store.listElicitations(ANN, filter, now, 50, null);
          expect(page.totalCount).toBe(page.items.length);
          return ids(page.items);
        };
        expect(await list({})).toEqual([e1, e2, e3, e4, e5, e6, e7, e9]);
        expect(await list({ statuses: null })).toEqual([e1, e2, e3, e4, e5, e6, e7, e9]);
        expect(await list({ statuses: ['PENDING'] })).toEqual([e2, e9]);
        expect(await list({ statuses: ['EXPIRED'] })).toEqual([e6, e7]);
        expect(await list({ statuses: ['PENDING'] }, at(200))).toEqual([e2, e7, e9]);
        expect(await list({ statuses: ['EXPIRED'] }, at(200))).toEqual([e6]);
        expect(await list({ statuses: ['ACCEPTED', 'DECLINED'] })).toEqual([e1, e3]);
        expect(await list({ statuses: ['DECLINED', 'ACCEPTED', 'DECLINED'] })).toEqual([e1, e3]);
        expect(await list({ statuses: ['CANCELLED'] })).toEqual([e4, e5]);
        expect(await list({ statuses: [] })).toEqual([]);
        expect(await list({ threadId: cancelled.thread.id })).toEqual([e4, e5]);
        expect(await list({ threadId: partly.thread.id, statuses: ['PENDING'] })).toEqual([e2]);
        expect(await list({ agentId: SIDE_AGENT })).toEqual([e9]);
        expect(await list({ agentId: SIDE_AGENT, statuses: ['ACCEPTED'] })).toEqual([]);
        expect(ids((await store.listElicitations(BOB, {}, at(500), 50, null)).items)).toEqual([e8]);

        const records = (await store.listElicitations(ANN, { statuses: ['ACCEPTED'] }, at(500), 50, null)).items;
        expect(records).toEqual([await store.getElicitation(e1!, ANN)]);
        expect(records[0]).toMatchObject({ status: 'ACCEPTED', response: ACCEPT, resolvedBy: ANN, resolvedAt: at(10) });

        // Paged: the pages add up to the whole list, each page counting all of it.
        const seen: string[] = [];
        let after: string | null = null;
        for (let pages = 0; pages < 5; pages++) {
          const page: Awaited<ReturnType<Store['listElicitations']>> = await store.listElicitations(
            ANN,
            {},
            at(500),
            3,
            after,
          );
          expect(page.totalCount).toBe(8);
          seen.push(...ids(page.items));
          if (!page.hasNextPage) break;
          after = page.endCursor;
        }
        expect(seen).toEqual([e1, e2, e3, e4, e5, e6, e7, e9]);
        const expiredPage = await store.listElicitations(ANN, { statuses: ['EXPIRED'] }, at(500), 1, null);
        expect(ids(expiredPage.items)).toEqual([e6]);
        expect(expiredPage).toMatchObject({ hasNextPage: true, totalCount: 2 });
        const expiredNext = await store.listElicitations(
          ANN,
          { statuses: ['EXPIRED'] },
          at(500),
          1,
          expiredPage.endCursor,
        );
        expect(ids(expiredNext.items)).toEqual([e7]);
        expect(expiredNext).toMatchObject({ hasNextPage: false, totalCount: 2 });
      });
    });

    // ---- 6. expiry and retention -----------------------------------------------------------------------------------

    describe('expiry and retention', () => {
      beforeEach(seedAgents);

      it('expireDueTurns expires the PAUSED turns due at `now`, closing their elicitations and answering their calls', async () => {
        const due = [
          await pausedTurn(store, { expiresAt: at(10), elicitations: 2, mixed: true }),
          await pausedTurn(store, { expiresAt: at(30) }),
        ];
        const later = await pausedTurn(store, { expiresAt: at(31) });
        const running = await runningTurn(store);
        const done = await runningTurn(store);
        await store.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(1) });
        const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'skip it' } };
        await answer(store, due[0]!.elicitations[1]!.id, declined, { now: at(5) });

        const expired = await store.expireDueTurns(at(30), 10, closeStep);
        expect(sorted(ids(expired))).toEqual(sorted(ids(due.map((p) => p.turn))));
        for (const turn of expired) {
          expect(turn).toMatchObject({ status: 'EXPIRED', step: null, updatedAt: at(30) });
          expect(await store.loadTurn(turn.id)).toEqual(turn);
        }
        const [first] = due;
        expect(await statusesOf(store, first!.turn.id)).toEqual([
          [first!.elicitations[0]!.id, 'EXPIRED'],
          [first!.elicitations[1]!.id, 'DECLINED'],
        ]);
        expect(await toolAnswers(store, first!.turn.id)).toEqual(
          closing(first!.step, 'expired', { [first!.elicitations[1]!.id]: declined }),
        );
        expect((await toolAnswers(store, first!.turn.id)).map(([, text]) => text)).toEqual([
          toolText.expired('lookup'),
          toolText.denied('wipe', 'policy says no'),
          toolText.expired('edit_1'),
          toolText.declined('edit_2', 'skip it'),
        ]);
        expect(await store.loadTurn(later.turn.id)).toEqual(later.turn);
        expect(await store.loadTurn(running.turn.id)).toMatchObject({ status: 'RUNNING' });
        expect(await store.loadTurn(done.turn.id)).toMatchObject({ status: 'COMPLETED' });

        expect(await store.expireDueTurns(at(30), 10, closeStep)).toEqual([]);
        expect(await toolAnswers(store, first!.turn.id)).toHaveLength(4);
        expect(ids(await store.expireDueTurns(at(31), 10, closeStep))).toEqual([later.turn.id]);
      });

      it('expireDueTurns expires at most `limit` turns per call; the next calls take the rest', async () => {
        const due: string[] = [];
        for (let i = 0; i < 5; i++) due.push((await pausedTurn(store, { expiresAt: at(10 + i) })).turn.id);
        const first = await store.expireDueTurns(at(100), 2, closeStep);
        const second = await store.expireDueTurns(at(100), 2, closeStep);
        const third = await store.expireDueTurns(at(100), 2, closeStep);
        expect([first.length, second.length, third.length]).toEqual([2, 2, 1]);
        expect(sorted(ids([...first, ...second, ...third]))).toEqual(sorted(due));
        expect(await store.expireDueTurns(at(100), 2, closeStep)).toEqual([]);
        for (const turnId of due) expect(await toolAnswers(store, turnId)).toHaveLength(1);
      });

      it('deleteExpiredElicitations deletes at most `limit` EXPIRED ones that expired before `before`, nothing else', async () => {
        const expiring = [
          await pausedTurn(store, { expiresAt: at(10) }),
          await pausedTurn(store, { expiresAt: at(20) }),
          await pausedTurn(store, { expiresAt: at(30) }),
        ];
        const accepted = await pausedTurn(store, { expiresAt: at(15) });
        await answer(store, accepted.elicitations[0]!.id, ACCEPT, { now: at(5) });
        expect(await store.expireDueTurns(at(35), 10, closeStep)).toHaveLength(3);
        const lapsed = await pausedTurn(store, { expiresAt: at(40) }); // PENDING as stored, past expiry by at(100)
        const remaining = async () =>
          (await Promise.all([...expiring, accepted, lapsed].map((p) => store.listTurnElicitations(p.turn.id)))).map(
            (list) => list.length,
          );

        expect(await store.deleteExpiredElicitations(at(20), 10)).toBe(1); // expired before at(20): at(10) only
        expect(await remaining()).toEqual([0, 1, 1, 1, 1]);
        expect(await store.deleteExpiredElicitations(at(100), 1)).toBe(1);
        expect(await store.deleteExpiredElicitations(at(100), 1)).toBe(1);
        expect(await store.deleteExpiredElicitations(at(100), 1)).toBe(0);
        expect(await remaining()).toEqual([0, 0, 0, 1, 1]);
        expect(await store.getElicitation(lapsed.elicitations[0]!.id, ANN)).toMatchObject({ status: 'PENDING' });
        expect(await store.loadTurn(expiring[0]!.turn.id)).toMatchObject({ status: 'EXPIRED' });
      });
    });

    // ---- 7. leases ---------------------------------------------------------------------------------------------

    describe('leases', () => {
      beforeEach(seedAgents);

      it('listRunningTurns and listRunningLeases read the RUNNING turns only, with their leases', async () => {
        const held = await runningTurn(store, { lease: lease('host:1:a', at(30)) });
        const unheld = await runningTurn(store);
        await pausedTurn(store, { lease: lease('host:1:a') });
        const done = await runningTurn(store, { lease: lease('host:1:a') });
        await store.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });

        const running = await store.listRunningTurns();
        expect(sorted(ids(running))).toEqual(sorted([held.turn.id, unheld.turn.id]));
        expect(running.find((t) => t.id === held.turn.id)).toEqual(held.turn);
        const leases = await store.listRunningLeases();
        expect([...leases].sort((a, b) => a.turnId.localeCompare(b.turnId))).toEqual(
          [
            { turnId: held.turn.id, owner: 'host:1:a', expiresAt: at(30), recoveries: 0 },
            { turnId: unheld.turn.id, owner: null, expiresAt: null, recoveries: 0 },
          ].sort((a, b) => a.turnId.localeCompare(b.turnId)),
        );
      });

      it('claimTurn is compare-and-swap on the holder: the expected one gets the turn and a recovery, another gets null', async () => {
        const { turn } = await runningTurn(store, { lease: lease('host:1:dead', at(30)) });
        expect(await store.claimTurn(turn.id, 'host:9:wrong', lease('host:2:b'), at(40))).toBeNull();
        expect(await store.claimTurn(turn.id, null, lease('host:2:b'), at(40))).toBeNull();
        expect(await store.holdsLease(turn.id, 'host:1:dead')).toBe(true);

        const claimed = await store.claimTurn(turn.id, 'host:1:dead', lease('host:2:b', at(70)), at(40));
        expect(claimed).toEqual({ turn: { ...turn, updatedAt: at(40) }, recoveries: 1 });
        expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(true);
        expect(await store.holdsLease(turn.id, 'host:1:dead')).toBe(false);
        expect(await store.listRunningLeases()).toEqual([
          { turnId: turn.id, owner: 'host:2:b', expiresAt: at(70), recoveries: 1 },
        ]);
        expect(await store.claimTurn(turn.id, 'host:1:dead', lease('host:3:c'), at(41))).toBeNull();
        const again = await store.claimTurn(turn.id, 'host:2:b', lease('host:3:c', at(90)), at(60));
        expect(again?.recoveries).toBe(2);
        expect(await store.listRunningLeases()).toEqual([
          { turnId: turn.id, owner: 'host:3:c', expiresAt: at(90), recoveries: 2 },
        ]);
      });

      it('claimTurn takes a turn without a lease with expectedOwner null; a turn not RUNNING or unknown is nobody’s', async () => {
        const { turn } = await runningTurn(store);
        expect(await store.claimTurn(turn.id, null, lease('host:2:b'), at(5))).toMatchObject({ recoveries: 1 });
        expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(true);
        const paused = await pausedTurn(store, { lease: lease('host:1:a') });
        expect(await store.claimTurn(paused.turn.id, 'host:1:a', lease('host:2:b'), at(5))).toBeNull();
        expect(await store.claimTurn(paused.turn.id, null, lease('host:2:b'), at(5))).toBeNull();
        expect(await store.loadTurn(paused.turn.id)).toEqual(paused.turn);
        expect(await store.claimTurn('turn-none', null, lease('host:2:b'), at(5))).toBeNull();
      });

      it("renewLeases extends every RUNNING turn's lease the owner holds, and counts them", async () => {
        const mine = [
          await runningTurn(store, { lease: lease('host:1:a', at(30)) }),
          await runningTurn(store, { lease: lease('host:1:a', at(30)) }),
        ];
        const theirs = await runningTurn(store, { lease: lease('host:2:b', at(30)) });
        await pausedTurn(store, { lease: lease('host:1:a', at(30)) });
        expect(await store.renewLeases('host:1:a', at(60), at(20))).toBe(2);
        expect(await store.renewLeases('host:9:none', at(60), at(20))).toBe(0);
        const leases = new Map((await store.listRunningLeases()).map((l) => [l.turnId, l]));
        for (const { turn } of mine)
          expect(leases.get(turn.id)).toMatchObject({ owner: 'host:1:a', expiresAt: at(60) });
        expect(leases.get(theirs.turn.id)).toMatchObject({ owner: 'host:2:b', expiresAt: at(30) });
      });

      it('holdsLease: true for the holder of a RUNNING turn only', async () => {
        const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
        expect(await store.holdsLease(turn.id, 'host:1:a')).toBe(true);
        expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(false);
        expect(await store.holdsLease('turn-none', 'host:1:a')).toBe(false);
        const paused = await pausedTurn(store, { lease: lease('host:1:a') });
        expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(false);
      });
    });

    // ---- 9. health ---------------------------------------------------------------------------------------------

    describe('batched reads (the API loaders)', () => {
      beforeEach(seedAgents);

      it('loads turns and threads of many ids in one call, missing ids left out, any owner', async () => {
        const a = await pausedTurn(store);
        const b = await runningTurn(store, { ownerId: BOB });
        const turns = await store.loadTurns([a.turn.id, 'turn-missing', b.turn.id]);
        expect(sorted(ids(turns))).toEqual(sorted([a.turn.id, b.turn.id]));
        expect(turns.find((t) => t.id === a.turn.id)).toEqual(await store.loadTurn(a.turn.id));
        const threads = await store.loadThreads([b.thread.id, a.thread.id, 'thread-missing']);
        expect(sorted(ids(threads))).toEqual(sorted([a.thread.id, b.thread.id]));
        expect(threads.find((t) => t.id === b.thread.id)).toEqual(await store.getThread(b.thread.id, BOB));
        expect(await store.loadTurns([])).toEqual([]);
      });

      it('lists the messages, turns and elicitations of several parents at once, each in its own order', async () => {
        const a = await pausedTurn(store, { elicitations: 2 });
        const b = await pausedTurn(store);
        const next = await runningTurn(store, { threadId: b.thread.id, now: at(5) });
        const byTurn = await store.listMessagesOfTurns([a.turn.id, b.turn.id]);
        expect(byTurn.filter((m) => m.turnId === a.turn.id)).toEqual(await store.listTurnMessages(a.turn.id));
        expect(byTurn.filter((m) => m.turnId === b.turn.id)).toEqual(await store.listTurnMessages(b.turn.id));
        const byThread = await store.listMessagesOfThreads([b.thread.id, a.thread.id]);
        expect(byThread.filter((m) => m.threadId === b.thread.id)).toEqual(await store.listThreadMessages(b.thread.id));
        expect(byThread).toHaveLength(
          (await store.listThreadMessages(a.thread.id)).length + (await store.listThreadMessages(b.thread.id)).length,
        );
        const turnsOf = await store.listTurnsOfThreads([a.thread.id, b.thread.id]);
        expect(ids(turnsOf.filter((t) => t.threadId === b.thread.id))).toEqual([b.turn.id, next.turn.id]);
        expect(turnsOf.filter((t) => t.threadId === b.thread.id)).toEqual(await store.listTurns(b.thread.id));
        const elicitationsOf = await store.listElicitationsOfTurns([b.turn.id, a.turn.id, 'turn-missing']);
        expect(elicitationsOf.filter((e) => e.turnId === a.turn.id)).toEqual(
          await store.listTurnElicitations(a.turn.id),
        );
        expect(elicitationsOf).toHaveLength(3);
      });
    });

    describe('health and durability', () => {
      it('ping() is null on a migrated database; flush() resolves', async () => {
        expect(await store.ping()).toBeNull();
        await store.syncAgent(agentConfig(AGENT), at(0));
        await expect(store.flush()).resolves.toBeUndefined();
        await expect(store.flush()).resolves.toBeUndefined();
      });

      it('ping() throws once the store is closed', async () => {
        await close(store);
        await expect(store.ping()).rejects.toThrow();
      });

      it("second() is another view of the same database: each reads the other's commits", async () => {
        await seedAgents();
        const other = await second();
        expect(await other.ping()).toBeNull();
        const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
        expect(await other.loadTurn(turn.id)).toEqual(turn);
        await other
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .finishTurn({ status: 'COMPLETED', text: 'by the other', now: at(1) });
        expect(await store.loadTurn(turn.id)).toMatchObject({ status: 'COMPLETED', text: 'by the other' });
        expect(await other.listAgents()).toHaveLength(2);
      });
    });

    describe('remembered approvals and edited answers', () => {
      beforeEach(seedAgents);

      it('retention: deleteLapsedGrants deletes at most `limit` grants revoked or expired before `before`; active ones stay', async () => {
        const { grant: revoked } = await grantOf(store, 'grt-revoked', { ttlSeconds: 3600 }); // expires at(3610)
        await store.revokeApprovalGrant(revoked.id, ANN, at(20));
        const { grant: expired } = await grantOf(store, 'grt-expired', { ttlSeconds: 30 }); // expires at(40)
        const { grant: active } = await grantOf(store, 'grt-active', { ttlSeconds: 3600 });
        expect(await store.deleteLapsedGrants(at(15), 10)).toBe(0); // nothing lapsed before at(15)
        expect(await store.deleteLapsedGrants(at(100), 1)).toBe(1);
        expect(await store.deleteLapsedGrants(at(100), 10)).toBe(1);
        expect(await store.getApprovalGrant(revoked.id, ANN)).toBeNull();
        expect(await store.getApprovalGrant(expired.id, ANN)).toBeNull();
        expect(await store.getApprovalGrant(active.id, ANN)).toEqual(active);
      });

      it("an ACCEPT with edited arguments and remember is stored as given and read back everywhere; toolCall keeps the model's arguments", async () => {
        const paused = await rememberablePause(store, { arguments: { note: 'n1' } });
        const id = paused.elicitations[0]!.id;
        const given: ElicitationAnswer = {
          action: 'ACCEPT',
          content: { instructions: 'keep it short' },
          arguments: { note: 'n1-edited', tags: ['x', 'y'], nested: { deep: true } },
          remember: { scope: 'THREAD', ttlSeconds: 60 },
        };
        const result = await answer(store, id, given, { grantId: 'grt-1', now: at(10) });
        expect(result.kind).toBe('resume');
        const expected: ElicitationRecord = {
          ...paused.elicitations[0]!,
          status: 'ACCEPTED',
          response: given,
          grantId: 'grt-1',
          resolvedBy: ANN,
          resolvedAt: at(10),
        };
        expect(result.kind === 'resume' && result.elicitation).toEqual(expected);
        expect(await store.getElicitation(id, ANN)).toEqual(expected);
        expect(await store.listTurnElicitations(paused.turn.id)).toEqual([expected]);
        expect((await store.listElicitations(ANN, {}, at(20), 10, null)).items).toEqual([expected]);
        // The audit keeps both: what the model asked for, and what the user let run.
        expect(expected.toolCall).toMatchObject({ arguments: { note: 'n1' }, definitionHash: TOOL_HASH });
      });

      it('an edited ACCEPT without remember records no grant; a plain ACCEPT reads back with neither', async () => {
        const edited = await rememberablePause(store);
        const given: ElicitationAnswer = { action: 'ACCEPT', content: null, arguments: { note: 'other' } };
        await answer(store, edited.elicitations[0]!.id, given);
        const read = await store.getElicitation(edited.elicitations[0]!.id, ANN);
        expect(read).toMatchObject({ status: 'ACCEPTED', grantId: null });
        expect(read!.response).toEqual(given);
        expect(read!.response!.remember ?? null).toBeNull();

        const plain = await rememberablePause(store);
        await answer(store, plain.elicitations[0]!.id, ACCEPT);
        const plainRead = await store.getElicitation(plain.elicitations[0]!.id, ANN);
        expect(plainRead).toMatchObject({ grantId: null, response: { action: 'ACCEPT', content: null } });
        expect(plainRead!.response!.arguments ?? null).toBeNull();
        expect((await store.listApprovalGrants(ANN, { activeOnly: false }, at(20), 10, null)).items).toEqual([]);
      });

      it.each(['THREAD', 'AGENT'] as const)(
        'the grant of an ACCEPT with remember (%s) is written with the answer: owner, agent, scope, thread, tool, hash, expiry',
        async (scope) => {
          const paused = await rememberablePause(store);
          const id = paused.elicitations[0]!.id;
          await answer(store, id, acceptRemembering(scope, 60), { grantId: 'grt-1', now: at(10) });
          const grant: ApprovalGrantRecord = {
            id: 'grt-1',
            ownerId: ANN,
            agentId: AGENT,
            scope,
            threadId: scope === 'THREAD' ? paused.thread.id : null,
            toolId: 'demo:edit_note',
            definitionHash: TOOL_HASH,
            elicitationId: id,
            createdAt: at(10),
            expiresAt: at(70),
            revokedAt: null,
          };
          expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(grant);
          expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([grant]);
          expect((await store.listApprovalGrants(ANN, { activeOnly: true }, at(69), 10, null)).items).toEqual([grant]);
        },
      );

      it('the grant and the answer commit together: when the grant cannot be written, the answer is not recorded', async () => {
        await grantOf(store, 'grt-taken');
        const paused = await rememberablePause(store);
        const state = await stateOf(store, paused.turn.id);
        // The runner makes a fresh id per answer; a taken one makes the grant's insert fail inside the transaction.
        const failed = await rejection(
          answer(store, paused.elicitations[0]!.id, acceptRemembering('AGENT', 60), { grantId: 'grt-taken' }),
        );
        expect(failed).toBeInstanceOf(Error);
        expect(await stateOf(store, paused.turn.id)).toEqual(state);
        expect(await store.getElicitation(paused.elicitations[0]!.id, ANN)).toMatchObject({
          status: 'PENDING',
          response: null,
          grantId: null,
        });
        expect(await store.getApprovalGrant('grt-taken', ANN)).toMatchObject({ scope: 'THREAD' });
      });

      it('no grant unless the answer is recorded: a duplicate, an already_resolved, an expired or another owner’s answer records none', async () => {
        const { paused } = await grantOf(store, 'grt-1', { ttlSeconds: 60 });
        const id = paused.elicitations[0]!.id;
        const state = await stateOf(store, paused.turn.id);
        const duplicate = await answer(store, id, acceptRemembering('THREAD', 60), {
          grantId: 'grt-dup',
          now: at(20),
        });
        expect(duplicate.kind).toBe('duplicate');
        expect(duplicate.kind === 'duplicate' && duplicate.elicitation.grantId).toBe('grt-1');
        const other = await answer(store, id, acceptRemembering('AGENT', 60), {
          grantId: 'grt-other',
          now: at(20),
        });
        expect(other.kind).toBe('already_resolved');
        expect(await stateOf(store, paused.turn.id)).toEqual(state);

        const late = await rememberablePause(store, { expiresAt: at(60) });
        const expired = await answer(store, late.elicitations[0]!.id, acceptRemembering('THREAD', 60), {
          grantId: 'grt-late',
          now: at(60),
        });
        expect(expired.kind).toBe('expired');

        const bobs = await rememberablePause(store, { ownerId: BOB });
        const annOnBobs = await answer(store, bobs.elicitations[0]!.id, acceptRemembering('AGENT', 60), {
          grantId: 'grt-ann-on-bob',
        });
        expect(annOnBobs).toEqual({ kind: 'not_found' });

        for (const gone of ['grt-dup', 'grt-other', 'grt-late', 'grt-ann-on-bob']) {
          expect(await store.getApprovalGrant(gone, ANN)).toBeNull();
          expect(await store.getApprovalGrant(gone, BOB)).toBeNull();
        }
        expect(ids((await store.listApprovalGrants(ANN, { activeOnly: false }, at(30), 10, null)).items)).toEqual([
          'grt-1',
        ]);
        expect((await store.listApprovalGrants(BOB, { activeOnly: false }, at(30), 10, null)).items).toEqual([]);
        expect(await store.listGrantUses(['grt-dup', 'grt-other', 'grt-late'])).toEqual([]);
      });

      it.each([
        ['DECLINE', 'resume'],
        ['CANCEL', 'cancelled'],
      ] as const)('%s with remember records no grant (only an ACCEPT is remembered)', async (action, kind) => {
        const paused = await rememberablePause(store);
        const result = await answer(
          store,
          paused.elicitations[0]!.id,
          { action, content: null, remember: { scope: 'AGENT', ttlSeconds: 60 } },
          { grantId: 'grt-no' },
        );
        expect(result.kind).toBe(kind);
        expect(await store.getElicitation(paused.elicitations[0]!.id, ANN)).toMatchObject({ grantId: null });
        expect(await store.getApprovalGrant('grt-no', ANN)).toBeNull();
        expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([]);
      });

      it("listGrantCandidates: the owner's unrevoked grants of one agent's tool, oldest first (expired ones too: coveringGrant decides)", async () => {
        const { grant: short } = await grantOf(store, 'grt-short', { ttlSeconds: 1, answeredAt: at(10) });
        const { grant: wide } = await grantOf(store, 'grt-wide', { scope: 'AGENT', answeredAt: at(11) });
        await grantOf(store, 'grt-side', { agentId: SIDE_AGENT, answeredAt: at(12) });
        await grantOf(store, 'grt-other-tool', { toolName: 'read_graph', answeredAt: at(13) });
        await grantOf(store, 'grt-bob', { ownerId: BOB, answeredAt: at(14) });
        await grantOf(store, 'grt-revoked', { answeredAt: at(15) });
        const { grant: newest } = await grantOf(store, 'grt-newest', { answeredAt: at(16) });
        expect(await store.revokeApprovalGrant('grt-revoked', ANN, at(20))).not.toBeNull();

        expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([short, wide, newest]);
        expect(ids(await store.listGrantCandidates(ANN, SIDE_AGENT, 'demo:edit_note'))).toEqual(['grt-side']);
        expect(ids(await store.listGrantCandidates(ANN, AGENT, 'demo:read_graph'))).toEqual(['grt-other-tool']);
        expect(ids(await store.listGrantCandidates(BOB, AGENT, 'demo:edit_note'))).toEqual(['grt-bob']);
        expect(await store.listGrantCandidates(BOB, SIDE_AGENT, 'demo:edit_note')).toEqual([]);
        expect(await store.listGrantCandidates(ANN, AGENT, 'demo:unknown')).toEqual([]);
      });

      it("getApprovalGrant reads the owner's grant only: another owner's or an unknown id is null", async () => {
        const { grant } = await grantOf(store, 'grt-1');
        expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(grant);
        expect(await store.getApprovalGrant('grt-1', BOB)).toBeNull();
        expect(await store.getApprovalGrant('grt-none', ANN)).toBeNull();
      });

      it('listApprovalGrants: oldest first and paged; activeOnly keeps those ACTIVE at `now`; filtered by agent and thread', async () => {
        const { paused: inThread } = await grantOf(store, 'g1', { ttlSeconds: 60, answeredAt: at(10) }); // to at(70)
        const { paused: agentWide } = await grantOf(store, 'g2', { scope: 'AGENT', answeredAt: at(11) });
        await grantOf(store, 'g3', { agentId: SIDE_AGENT, answeredAt: at(12) });
        await grantOf(store, 'g4', { answeredAt: at(13) });
        await grantOf(store, 'g5', { ownerId: BOB, answeredAt: at(14) });
        await store.revokeApprovalGrant('g4', ANN, at(20));

        const list = async (
          filter: { agentId?: string | null; threadId?: string | null; activeOnly: boolean },
          now = at(30),
        ) => ids((await store.listApprovalGrants(ANN, filter, now, 10, null)).items);
        expect(await list({ activeOnly: false })).toEqual(['g1', 'g2', 'g3', 'g4']);
        expect(await list({ activeOnly: false }, at(5000))).toEqual(['g1', 'g2', 'g3', 'g4']);
        expect(await list({ activeOnly: true })).toEqual(['g1', 'g2', 'g3']);
        expect(await list({ activeOnly: true }, at(69))).toEqual(['g1', 'g2', 'g3']);
        expect(await list({ activeOnly: true }, at(70))).toEqual(['g2', 'g3']); // g1 expires at exactly at(70)
        expect(await list({ activeOnly: true }, at(5000))).toEqual([]);
        expect(await list({ activeOnly: false, agentId: SIDE_AGENT })).toEqual(['g3']);
        expect(await list({ activeOnly: false, agentId: AGENT })).toEqual(['g1', 'g2', 'g4']);
        expect(await list({ activeOnly: true, agentId: AGENT })).toEqual(['g1', 'g2']);
        expect(await list({ activeOnly: false, threadId: inThread.thread.id })).toEqual(['g1']);
        // An AGENT-scoped grant belongs to no thread: a thread filter lists the THREAD-scoped grants made there.
        expect(await list({ activeOnly: false, threadId: agentWide.thread.id })).toEqual([]);
        expect(await list({ activeOnly: false, threadId: inThread.thread.id, agentId: SIDE_AGENT })).toEqual([]);
        expect(await list({ activeOnly: false, threadId: null, agentId: null })).toEqual(['g1', 'g2', 'g3', 'g4']);
        expect(ids((await store.listApprovalGrants(BOB, { activeOnly: true }, at(30), 10, null)).items)).toEqual([
          'g5',
        ]);

        const page1 = await store.listApprovalGrants(ANN, { activeOnly: false }, at(30), 3, null);
        expect(ids(page1.items)).toEqual(['g1', 'g2', 'g3']);
        expect(page1).toMatchObject({ hasNextPage: true, endCursor: page1.cursors[2] });
        const page2 = await store.listApprovalGrants(ANN, { activeOnly: false }, at(30), 3, page1.endCursor);
        expect(ids(page2.items)).toEqual(['g4']);
        expect(page2.hasNextPage).toBe(false);
        const active1 = await store.listApprovalGrants(ANN, { activeOnly: true }, at(30), 2, null);
        expect(ids(active1.items)).toEqual(['g1', 'g2']);
        const active2 = await store.listApprovalGrants(ANN, { activeOnly: true }, at(30), 2, active1.endCursor);
        expect(ids(active2.items)).toEqual(['g3']);
        expect(active2.hasNextPage).toBe(false);
      });

      it("revokeApprovalGrant: the owner's grant only (another owner's: null, unchanged); revoking again keeps the first revokedAt", async () => {
        const { grant } = await grantOf(store, 'grt-1');
        expect(await store.revokeApprovalGrant('grt-1', BOB, at(15))).toBeNull();
        expect(await store.revokeApprovalGrant('grt-none', ANN, at(15))).toBeNull();
        expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(grant);

        const revoked = await store.revokeApprovalGrant('grt-1', ANN, at(20));
        expect(revoked).toEqual({ ...grant, revokedAt: at(20) });
        expect(await store.revokeApprovalGrant('grt-1', ANN, at(30))).toEqual(revoked);
        expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(revoked);
        expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([]);
        expect((await store.listApprovalGrants(ANN, { activeOnly: true }, at(31), 10, null)).items).toEqual([]);
        expect((await store.listApprovalGrants(ANN, { activeOnly: false }, at(31), 10, null)).items).toEqual([revoked]);
      });

      it('markToolStarted with a grant journals it with the start; listGrantUses lists the calls it let run, in the order started', async () => {
        const { grant } = await grantOf(store, 'grt-1', { scope: 'AGENT' });
        const { grant: other } = await grantOf(store, 'grt-2', { scope: 'AGENT' });
        const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
        const [a, b] = [toolCall('edit_note'), toolCall('edit_note')];
        await store
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .appendAssistantMessage({ message: assistantMessage(null, [a, b]), iterations: 1, now: at(20) });
        expect(
          await store
            .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
            .markToolStarted({ toolCallId: b.id, grantId: grant.id, now: at(21) }),
        ).toBe(true);
        expect(
          await store
            .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
            .markToolStarted({ toolCallId: a.id, grantId: grant.id, now: at(22) }),
        ).toBe(true);
        // Started before: false, and the journal keeps the first start.
        expect(
          await store
            .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
            .markToolStarted({ toolCallId: a.id, grantId: grant.id, now: at(23) }),
        ).toBe(false);
        const plain = await turnWithCall(store);
        expect(
          await store.unleasedTurnWriter(plain.turnId).markToolStarted({ toolCallId: plain.callId, now: at(24) }),
        ).toBe(true);
        const byOther = await turnWithCall(store);
        expect(
          await store
            .unleasedTurnWriter(byOther.turnId)
            .markToolStarted({ toolCallId: byOther.callId, grantId: other.id, now: at(25) }),
        ).toBe(true);

        const uses = [
          { grantId: 'grt-1', turnId: turn.id, toolCallId: b.id, startedAt: at(21) },
          { grantId: 'grt-1', turnId: turn.id, toolCallId: a.id, startedAt: at(22) },
        ];
        expect(await store.listGrantUses(['grt-1'])).toEqual(uses);
        expect(await store.listGrantUses(['grt-2', 'grt-1'])).toEqual([
          ...uses,
          { grantId: 'grt-2', turnId: byOther.turnId, toolCallId: byOther.callId, startedAt: at(25) },
        ]);
        expect(await store.listGrantUses([])).toEqual([]);
        expect(await store.listGrantUses(['grt-none'])).toEqual([]);
        expect(sorted(await store.listUnfinishedToolCalls(turn.id))).toEqual(sorted([a.id, b.id]));
      });

      it('markToolStarted with a grant just before its expiry starts the call', async () => {
        const { grant } = await grantOf(store, 'grt-1', { ttlSeconds: 60 }); // expires at(70)
        const { turnId, callId } = await turnWithCall(store);
        const justBefore = new Date(Date.parse(at(70)) - 1).toISOString();
        expect(
          await store
            .unleasedTurnWriter(turnId)
            .markToolStarted({ toolCallId: callId, grantId: grant.id, now: justBefore }),
        ).toBe(true);
        expect(await store.listGrantUses([grant.id])).toEqual([
          { grantId: grant.id, turnId, toolCallId: callId, startedAt: justBefore },
        ]);
      });

      // The contract, as the store and the runner share it: a refused start writes nothing, so the call stays
      // unjournaled (the loop answers it with toolText.grantLapsed instead and never starts it); the refusal is made
      // per attempt from the grant (the same grant refuses again), and a start without a grant is the caller's call.
      it.each([
        [
          'revoked before the start',
          'grt-1',
          async (s: Store) => void (await s.revokeApprovalGrant('grt-1', ANN, at(15))),
          at(20),
        ],
        ['expired (at exactly expiresAt)', 'grt-1', async () => {}, at(70)],
        ['unknown', 'grt-unknown', async () => {}, at(20)],
      ] as const)(
        'markToolStarted with a grant %s throws GrantLapsedError and journals nothing',
        async (_title, grantId, lapse, startAt) => {
          await grantOf(store, 'grt-1', { ttlSeconds: 60 }); // expires at(70)
          await lapse(store);
          const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
          const call = toolCall('edit_note');
          await store
            .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
            .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now: at(14) });
          const before = await stateOf(store, turn.id);
          for (const attempt of [startAt, at(80)]) {
            const error = await rejection(
              store
                .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
                .markToolStarted({ toolCallId: call.id, grantId, now: attempt }),
            );
            expect(error).toBeInstanceOf(GrantLapsedError);
            expect((error as GrantLapsedError).grantId).toBe(grantId);
          }
          expect(await stateOf(store, turn.id)).toEqual(before);
          expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([]);
          expect(await store.listGrantUses([grantId])).toEqual([]);
          // Nothing was journaled: the call itself is not marked, a start without the grant is not refused.
          expect(
            await store
              .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
              .markToolStarted({ toolCallId: call.id, now: at(90) }),
          ).toBe(true);
          expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([call.id]);
          expect(await store.listGrantUses([grantId])).toEqual([]);
        },
      );

      it('a call started under a grant, then the grant revoked (a crash mid-run): started again reads false, not lapsed', async () => {
        const { grant } = await grantOf(store, 'grt-1', { scope: 'AGENT' });
        const { turnId, callId } = await turnWithCall(store);
        expect(
          await store
            .unleasedTurnWriter(turnId)
            .markToolStarted({ toolCallId: callId, grantId: grant.id, now: at(21) }),
        ).toBe(true);
        await store.revokeApprovalGrant(grant.id, ANN, at(22));
        // The loop then reports it interrupted (its outcome unknown), never "did not run".
        expect(
          await store
            .unleasedTurnWriter(turnId)
            .markToolStarted({ toolCallId: callId, grantId: grant.id, now: at(23) }),
        ).toBe(false);
        expect(await store.listUnfinishedToolCalls(turnId)).toEqual([callId]);
        expect(await store.listGrantUses([grant.id])).toHaveLength(1);
      });

      // revokedAt is no earlier than the last use recorded before the revoke committed: another instance's clock may
      // run ahead, or (PostgreSQL) the revoke's UPDATE may have waited for the start's FOR SHARE lock.
      it('revokedAt is never before a use the grant let start, even when the revoke’s clock reads earlier', async () => {
        const { grant } = await grantOf(store, 'grt-1', { scope: 'AGENT' });
        const { turnId, callId } = await turnWithCall(store);
        expect(
          await store
            .unleasedTurnWriter(turnId)
            .markToolStarted({ toolCallId: callId, grantId: grant.id, now: at(21) }),
        ).toBe(true);
        const revoked = await store.revokeApprovalGrant(grant.id, ANN, at(20));
        const [use] = await store.listGrantUses([grant.id]);
        expect(use!.startedAt).toBe(at(21));
        expect(revoked!.revokedAt! >= use!.startedAt).toBe(true);
      });

      it('a paused step keeps the grant that let a call run unasked ({kind: run, grantId}) through pauseTurn, loadTurn and the resume', async () => {
        const { turn } = await runningTurn(store);
        const unasked = toolCall('edit_note', { note: 'n1' });
        const asked = toolCall('delete_note', { note: 'n2' });
        const plain = toolCall('read_graph');
        const step: PendingStep = {
          version: 1,
          calls: [
            { toolCall: unasked, outcome: { kind: 'run', grantId: 'grt-kept' } },
            { toolCall: plain, outcome: { kind: 'run' } },
            { toolCall: asked, outcome: { kind: 'confirm', elicitationId: 'elc-step' } },
          ],
        };
        await store.unleasedTurnWriter(turn.id).appendAssistantMessage({
          message: assistantMessage(null, [unasked, plain, asked]),
          iterations: 1,
          now: at(1),
        });
        const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
          step: structuredClone(step),
          elicitations: [rememberableDraftFor(asked, 'elc-step')],
          text: 'May I?',
          expiresAt: at(60),
          now: at(1),
        });
        expect(paused.turn.step).toEqual(step);
        expect((await store.loadTurn(turn.id))!.step).toEqual(step);
        const resumed = await answer(store, 'elc-step', ACCEPT, { now: at(2) });
        expect(resumed.kind === 'resume' && resumed.turn.step).toEqual(step);
      });
    });

    // ---- 10. concurrency ---------------------------------------------------------------------------------------

    describe('concurrency: two stores on one database', () => {
      beforeEach(seedAgents);

      it('(a) the two elicitations of a turn answered at the same instant from two stores: exactly one resumes', async () => {
        const other = await second();
        const paused = await pausedTurn(store, { elicitations: 2 });
        const [e1, e2] = paused.elicitations;
        const results = await Promise.all([
          answer(store, e1!.id, ACCEPT, { now: at(10), lease: lease('host:1:a') }),
          answer(other, e2!.id, ACCEPT, { now: at(10), lease: lease('host:2:b') }),
        ]);
        expect(results.map((r) => r.kind).sort()).toEqual(['recorded', 'resume']);
        const winner = results[0]!.kind === 'resume' ? 'host:1:a' : 'host:2:b';
        expect(await store.loadTurn(paused.turn.id)).toMatchObject({ status: 'RUNNING' });
        expect(await statusesOf(store, paused.turn.id)).toEqual([
          [e1!.id, 'ACCEPTED'],
          [e2!.id, 'ACCEPTED'],
        ]);
        expect(await store.listRunningLeases()).toEqual([
          { turnId: paused.turn.id, owner: winner, expiresAt: at(600), recoveries: 0 },
        ]);
      });

      it('(b) the same elicitation ACCEPTed 10 times at once across both stores: one resume, never two', async () => {
        const other = await second();
        const paused = await pausedTurn(store);
        const id = paused.elicitations[0]!.id;
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            answer(i % 2 ? other : store, id, ACCEPT, { now: at(10), lease: lease(`host:${i}:x`) }),
          ),
        );
        const resumes = results.flatMap((r, i) => (r.kind === 'resume' ? [i] : []));
        expect(resumes).toHaveLength(1);
        for (const r of results) expect(['resume', 'duplicate', 'recorded']).toContain(r.kind);
        expect(await store.holdsLease(paused.turn.id, `host:${resumes[0]}:x`)).toBe(true);
        expect(await store.listRunningLeases()).toHaveLength(1);
        expect(await store.getElicitation(id, ANN)).toMatchObject({ status: 'ACCEPTED', response: ACCEPT });
      });

      it('(c) two turns started at once on a thread with no active turn: one starts, the other is THREAD_BUSY', async () => {
        const other = await second();
        const { thread, turn } = await runningTurn(store);
        await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
        const results = await Promise.all([
          store.startTurn(startInput({ threadId: thread.id, turnId: 'turn-a', now: at(5) }), closeStep),
          other.startTurn(startInput({ threadId: thread.id, turnId: 'turn-b', now: at(5) }), closeStep),
        ]);
        const started = results.filter((r) => r.ok);
        expect(started).toHaveLength(1);
        expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, code: 'THREAD_BUSY' }]);
        const turns = await store.listTurns(thread.id);
        expect(turns.filter((t) => t.status === 'RUNNING' || t.status === 'PAUSED')).toHaveLength(1);
        expect(turns).toHaveLength(2);
        const users = (await store.listThreadMessages(thread.id)).filter((m) => m.role === 'USER');
        expect(users).toHaveLength(2);
      });

      it('(c′) two turns started at once on a thread with a PAUSED turn: one supersedes it, once', async () => {
        const other = await second();
        const paused = await pausedTurn(store, { elicitations: 2, mixed: true });
        const results = await Promise.all([
          store.startTurn(startInput({ threadId: paused.thread.id, turnId: 'turn-a', now: at(5) }), closeStep),
          other.startTurn(startInput({ threadId: paused.thread.id, turnId: 'turn-b', now: at(5) }), closeStep),
        ]);
        const started = results.filter((r) => r.ok);
        expect(started).toHaveLength(1);
        expect(started[0]!.ok && started[0]!.superseded).toMatchObject({ id: paused.turn.id, status: 'CANCELLED' });
        expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, code: 'THREAD_BUSY' }]);
        expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'superseded'));
        const active = (await store.listTurns(paused.thread.id)).filter((t) => t.status === 'RUNNING');
        expect(active).toHaveLength(1);
      });

      it.each([
        ['a new thread', false],
        ['an existing thread', true],
      ])(
        '(c″) ten starts with one idempotency key at once across both stores, on %s: one turn, all get it',
        async (_, existing) => {
          const other = await second();
          let threadId: string | null = null;
          if (existing) {
            const { thread, turn } = await runningTurn(store);
            await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', now: at(1) });
            threadId = thread.id;
          }
          const results = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              (i % 2 ? other : store).startTurn(
                startInput({ threadId, idempotencyKey: 'key-1', now: at(5), lease: lease(`host:${i}:x`) }),
                closeStep,
              ),
            ),
          );
          const turnIds = results.map((r) => (r.ok ? r.turn.id : r.code));
          expect(new Set(turnIds).size).toBe(1);
          expect(results.filter((r) => r.ok && !r.replayed)).toHaveLength(1);
          const [result] = results;
          if (!result?.ok) throw new Error('refused');
          const turns = await store.listTurns(result.thread.id);
          expect(ids(turns).filter((id) => id === result.turn.id)).toHaveLength(1);
          expect(turns.filter((t) => t.status === 'RUNNING')).toHaveLength(1);
          expect((await store.listThreads(ANN, null, 10, null)).items).toHaveLength(1);
          const users = (await store.listThreadMessages(result.thread.id)).filter((m) => m.turnId === result.turn.id);
          expect(users).toHaveLength(1);
        },
      );

      it('(d) two stores expiring the same due turns at once: each turn expired exactly once', async () => {
        const other = await second();
        const due: Paused[] = [];
        for (let i = 0; i < 6; i++)
          due.push(await pausedTurn(store, { elicitations: 2, mixed: i % 2 === 0, expiresAt: at(10) }));
        const [mine, theirs] = await Promise.all([
          store.expireDueTurns(at(20), 100, closeStep),
          other.expireDueTurns(at(20), 100, closeStep),
        ]);
        const expired = ids([...mine, ...theirs]);
        expect(expired).toHaveLength(due.length);
        expect(sorted(expired)).toEqual(sorted(ids(due.map((p) => p.turn))));
        for (const p of due) {
          expect(await store.loadTurn(p.turn.id)).toMatchObject({ status: 'EXPIRED' });
          expect(await toolAnswers(store, p.turn.id)).toEqual(closing(p.step, 'expired'));
          expect(await statusesOf(store, p.turn.id)).toEqual(p.elicitations.map((e) => [e.id, 'EXPIRED']));
        }
      });

      it('(e) claimTurn from both stores with the same expected owner at once: exactly one wins', async () => {
        const other = await second();
        const { turn } = await runningTurn(store, { lease: lease('host:1:dead') });
        const claims = await Promise.all([
          store.claimTurn(turn.id, 'host:1:dead', lease('host:2:a'), at(40)),
          other.claimTurn(turn.id, 'host:1:dead', lease('host:3:b'), at(40)),
          store.claimTurn(turn.id, 'host:1:dead', lease('host:4:c'), at(40)),
          other.claimTurn(turn.id, 'host:1:dead', lease('host:5:d'), at(40)),
        ]);
        const winners = claims.flatMap((c, i) => (c ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(claims[winners[0]!]!.recoveries).toBe(1);
        const owner = `host:${winners[0]! + 2}:${'abcd'[winners[0]!]}`;
        expect(await store.listRunningLeases()).toEqual([
          { turnId: turn.id, owner, expiresAt: at(600), recoveries: 1 },
        ]);
      });

      describe.each([
        ['the takeover is asked for first', true],
        ['the old holder writes first', false],
      ])('(f) a lease taken over while its old holder writes (%s)', (_title, claimFirst) => {
        it('each old write committed before the takeover, or threw LeaseLostError and stored nothing; none after it', async () => {
          const other = await second();
          const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
          // A writes one step after another, each setting the iteration count to its number: the turn the claim
          // returns (as of its commit) tells how many of A's writes committed before the takeover.
          const outcomes: boolean[] = [];
          const writesOfA = async () => {
            for (let i = 1; i <= 4; i++) {
              try {
                await store
                  .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
                  .appendAssistantMessage({ message: assistantMessage(`A${i}`), iterations: i, now: at(10) });
                outcomes.push(true);
              } catch (error) {
                expect(error).toBeInstanceOf(LeaseLostError);
                outcomes.push(false);
              }
            }
          };
          const claim = () => other.claimTurn(turn.id, 'host:1:a', lease('host:2:b'), at(10));
          let claimed: Awaited<ReturnType<typeof claim>>;
          if (claimFirst) [claimed] = await Promise.all([claim(), writesOfA()]);
          else [, claimed] = await Promise.all([writesOfA(), claim()]);

          expect(claimed).toMatchObject({ recoveries: 1 });
          const before = claimed!.turn.iterations;
          expect(outcomes).toEqual([1, 2, 3, 4].map((i) => i <= before));
          expect(await store.loadTurn(turn.id)).toMatchObject({ status: 'RUNNING', iterations: before });

          // After the takeover: the new holder writes, the old one cannot.
          await other
            .turnWriter({ turnId: turn.id, lease: { owner: 'host:2:b' } })
            .appendAssistantMessage({ message: assistantMessage('B'), iterations: 10, now: at(11) });
          expect(
            await rejection(
              store
                .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
                .setIterations({ iterations: 99, now: at(12) }),
            ),
          ).toBeInstanceOf(LeaseLostError);
          const texts = (await store.listTurnMessages(turn.id))
            .filter((m) => m.role === 'ASSISTANT')
            .map((m) => m.text);
          expect(texts).toEqual([...outcomes.flatMap((ok, i) => (ok ? [`A${i + 1}`] : [])), 'B']);
          expect(await store.loadTurn(turn.id)).toMatchObject({ iterations: 10 });
          expect(await store.holdsLease(turn.id, 'host:2:b')).toBe(true);
        });
      });

      it('(g) a CANCEL and the sweeper racing on one turn: it closes once, CANCELLED or EXPIRED', async () => {
        const other = await second();
        const paused = await pausedTurn(store, { elicitations: 2, expiresAt: at(60) });
        const [answered, swept] = await Promise.all([
          answer(store, paused.elicitations[0]!.id, CANCEL, { now: at(59) }),
          other.expireDueTurns(at(61), 10, closeStep),
        ]);
        const turn = await store.loadTurn(paused.turn.id);
        if (answered.kind === 'cancelled') {
          expect(swept).toEqual([]);
          expect(turn).toMatchObject({ status: 'CANCELLED' });
          expect(await toolAnswers(store, paused.turn.id)).toEqual(
            closing(paused.step, 'cancelled', { [paused.elicitations[0]!.id]: CANCEL }),
          );
        } else {
          expect(answered).toMatchObject({ kind: 'expired', changed: false });
          expect(ids(swept)).toEqual([paused.turn.id]);
          expect(turn).toMatchObject({ status: 'EXPIRED' });
          expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'expired'));
        }
      });

      it('(h) the last answer and a new message racing on one thread: the turn resumes or is superseded, not both', async () => {
        const other = await second();
        const paused = await pausedTurn(store);
        const [answered, started] = await Promise.all([
          answer(store, paused.elicitations[0]!.id, ACCEPT, { now: at(10), lease: lease('host:1:a') }),
          other.startTurn(startInput({ threadId: paused.thread.id, turnId: 'turn-new', now: at(10) }), closeStep),
        ]);
        if (answered.kind === 'resume') {
          expect(started).toEqual({ ok: false, code: 'THREAD_BUSY' });
          expect(await store.loadTurn('turn-new')).toBeNull();
          expect(await toolAnswers(store, paused.turn.id)).toEqual([]);
        } else {
          expect(answered.kind).toBe('already_resolved');
          expect(started).toMatchObject({ ok: true, superseded: { id: paused.turn.id, status: 'CANCELLED' } });
          expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'superseded'));
        }
        const active = (await store.listTurns(paused.thread.id)).filter((t) => t.status === 'RUNNING');
        expect(active).toHaveLength(1);
      });

      it('(i) a revoke racing a start under the grant, 20 times: the start committed before the revoke (its use recorded) or was refused and journaled nothing', async () => {
        const other = await second();
        const outcomes = { started: 0, refused: 0 };
        for (let round = 0; round < 20; round++) {
          const grantId = `grt-race-${round}`;
          await grantOf(store, grantId, { scope: 'AGENT' });
          const { turnId, callId } = await turnWithCall(store);
          // Both at one instant: the stores take `now` from their caller, so the order that matters is the commits'.
          const now = at(100 + round);
          const [starter, revoker] = round % 2 ? [store, other] : [other, store];
          const start = () => starter.unleasedTurnWriter(turnId).markToolStarted({ toolCallId: callId, grantId, now });
          const revoke = () => revoker.revokeApprovalGrant(grantId, ANN, now);
          const [started, revoked] =
            round % 4 < 2
              ? await Promise.allSettled([start(), revoke()])
              : await Promise.allSettled([revoke(), start()]).then(([r, s]) => [s, r] as const);

          expect(revoked).toMatchObject({ status: 'fulfilled', value: { id: grantId, revokedAt: now } });
          const revokedAt = (revoked as PromiseFulfilledResult<ApprovalGrantRecord>).value.revokedAt!;
          const uses = await store.listGrantUses([grantId]);
          if (started.status === 'fulfilled') {
            outcomes.started++;
            expect(started.value).toBe(true);
            expect(uses).toEqual([{ grantId, turnId, toolCallId: callId, startedAt: now }]);
            expect(uses[0]!.startedAt <= revokedAt).toBe(true);
            expect(await store.listUnfinishedToolCalls(turnId)).toEqual([callId]);
          } else {
            outcomes.refused++;
            expect(started.reason).toBeInstanceOf(GrantLapsedError);
            expect(uses).toEqual([]);
            expect(await store.listUnfinishedToolCalls(turnId)).toEqual([]);
          }
          // After the revoke, the grant lets nothing else start, from either store.
          const later = await turnWithCall(store);
          for (const s of [store, other]) {
            const refused = await rejection(
              s.unleasedTurnWriter(later.turnId).markToolStarted({ toolCallId: later.callId, grantId, now: at(200) }),
            );
            expect(refused).toBeInstanceOf(GrantLapsedError);
          }
          expect(await store.listUnfinishedToolCalls(later.turnId)).toEqual([]);
        }
        expect(outcomes.started + outcomes.refused).toBe(20);
      });
    });

    // ---- webhooks: the outbox ---------------------------------------------------------------------------------

    describe('webhooks: the outbox', () => {
      beforeEach(seedAgents);

      const EVERYTHING = 'http://127.0.0.1:9/everything';
      const TURNS = 'http://127.0.0.1:9/turns';
      const subscriptions: WebhookSubscription[] = [
        {
          url: EVERYTHING,
          events: [...WEBHOOK_EVENT_TYPES],
        },
        { url: TURNS, events: ['turn.completed', 'turn.failed'] },
      ];
      /** How often the store said it committed outbox rows. */
      let announced = 0;

      /** A store on the same database that writes the events of `subscriptions`. */
      async function hooked(): Promise<Store> {
        return second({
          webhooks: {
            subscriptions,
            written: () => {
              announced++;
            },
          },
        });
      }

      beforeEach(() => {
        announced = 0;
      });

      async function deliveries(s: Store): Promise<WebhookDeliveryRecord[]> {
        return (await s.listWebhookDeliveries({}, 200, null)).items;
      }
      const events = (list: WebhookDeliveryRecord[]) => list.map((d) => [d.endpoint, d.eventType]);
      const dataOf = (d: WebhookDeliveryRecord) => d.payload.data as Record<string, unknown>;

      it('retention: deleteDeliveredWebhooks deletes at most `limit` DELIVERED rows finished before `before`; PENDING and FAILED stay', async () => {
        const s = await hooked();
        const done = await runningTurn(s);
        await s.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(0) }); // turn.completed to both endpoints
        const other = await runningTurn(s);
        await s.unleasedTurnWriter(other.turn.id).finishTurn({ status: 'FAILED', error: 'boom', now: at(0) }); // turn.failed to both
        const third = await runningTurn(s);
        await s.unleasedTurnWriter(third.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(0) });
        const [d1, d2, f1, , d3, pending] = await store.claimWebhookDeliveries(
          'host:1:a',
          [EVERYTHING, TURNS],
          at(1),
          at(61),
          10,
        );
        const delivered = { kind: 'delivered', statusCode: 204 } as const;
        expect(await store.recordWebhookAttempt(d1!.id, 'host:1:a', delivered, at(10))).toBe(true);
        expect(await store.recordWebhookAttempt(d2!.id, 'host:1:a', delivered, at(20))).toBe(true);
        expect(await store.recordWebhookAttempt(d3!.id, 'host:1:a', delivered, at(30))).toBe(true);
        const failed = { kind: 'failed', error: 'HTTP 500', statusCode: 500 } as const;
        expect(await store.recordWebhookAttempt(f1!.id, 'host:1:a', failed, at(5))).toBe(true);
        expect(await store.deleteDeliveredWebhooks(at(25), 1)).toBe(1);
        expect(await store.deleteDeliveredWebhooks(at(25), 10)).toBe(1); // the other one finished before at(25)
        expect(await store.deleteDeliveredWebhooks(at(25), 10)).toBe(0);
        const left = await deliveries(store);
        expect(left.map((d) => d.id)).not.toContain(d1!.id);
        expect(left.map((d) => d.id)).not.toContain(d2!.id);
        expect(left.find((d) => d.id === d3!.id)).toMatchObject({ status: 'DELIVERED' });
        expect(left.find((d) => d.id === f1!.id)).toMatchObject({ status: 'FAILED' });
        expect(left.find((d) => d.id === pending!.id)).toMatchObject({ status: 'PENDING' });
      });

      it('a store opened without webhooks writes no outbox row on any path', async () => {
        const paused = await pausedTurn(store, { elicitations: 2 });
        await answer(store, paused.elicitations[0]!.id, ACCEPT);
        await answer(store, paused.elicitations[1]!.id, CANCEL);
        const done = await runningTurn(store);
        await store.unleasedTurnWriter(done.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(20) });
        await pausedTurn(store, { expiresAt: at(30) });
        await store.expireDueTurns(at(40), 10, closeStep);
        expect(await deliveries(store)).toEqual([]);
        expect(await store.listWebhookDeliveries({}, 10, null)).toMatchObject({ totalCount: 0, hasNextPage: false });
      });

      it('a pause writes elicitation.requested per request, for the endpoints subscribed to it, with the change', async () => {
        const s = await hooked();
        const paused = await pausedTurn(s, { elicitations: 2, lease: lease('host:1:a') });
        const written = await deliveries(store);
        expect(events(written)).toEqual([
          [EVERYTHING, 'elicitation.requested'],
          [EVERYTHING, 'elicitation.requested'],
        ]);
        expect(announced).toBeGreaterThan(0);
        expect(new Set(written.map((d) => d.id)).size).toBe(2);
        const [first] = paused.elicitations;
        expect(written[0]).toMatchObject({
          status: 'PENDING',
          attempts: 0,
          nextAttemptAt: at(0),
          createdAt: at(0),
          lockedBy: null,
          finishedAt: null,
          lastError: null,
        });
        expect(written[0]!.payload).toEqual({
          type: 'elicitation.requested',
          timestamp: at(0),
          data: {
            elicitationId: first!.id,
            turnId: paused.turn.id,
            threadId: paused.thread.id,
            agentId: AGENT,
            ownerId: ANN,
            status: 'PENDING',
            resolution: null,
            message: first!.request.message,
            toolCall: {
              id: first!.toolCallId,
              name: first!.toolCall.name,
              toolId: first!.toolCall.toolId,
              arguments: first!.toolCall.arguments,
              annotations: first!.toolCall.annotations,
            },
            answer: null,
            answeredBy: null,
            createdAt: at(0),
            expiresAt: paused.expiresAt,
            resolvedAt: null,
          },
        });
      });

      it('answers write elicitation.resolved (ANSWERED); the turn ending writes turn.completed or turn.failed', async () => {
        const s = await hooked();
        const paused = await pausedTurn(s, { elicitations: 2 });
        const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'not that one' } };
        await answer(s, paused.elicitations[0]!.id, declined, { now: at(10) });
        await answer(s, paused.elicitations[1]!.id, ACCEPT, { now: at(11), lease: lease('host:1:a') });
        await s
          .turnWriter({ turnId: paused.turn.id, lease: { owner: 'host:1:a' } })
          .finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(12) });
        const failing = await runningTurn(s);
        await s
          .unleasedTurnWriter(failing.turn.id)
          .finishTurn({ status: 'FAILED', error: 'The model call failed: boom', now: at(13) });
        const cancelled = await runningTurn(s);
        await s.unleasedTurnWriter(cancelled.turn.id).finishTurn({ status: 'CANCELLED', now: at(14) });

        const written = await deliveries(store);
        expect(events(written.slice(2))).toEqual([
          [EVERYTHING, 'elicitation.resolved'],
          [EVERYTHING, 'elicitation.resolved'],
          [EVERYTHING, 'turn.completed'],
          [TURNS, 'turn.completed'],
          [EVERYTHING, 'turn.failed'],
          [TURNS, 'turn.failed'],
        ]);
        expect(dataOf(written[2]!)).toMatchObject({
          elicitationId: paused.elicitations[0]!.id,
          status: 'DECLINED',
          resolution: 'ANSWERED',
          answer: declined,
          answeredBy: ANN,
          resolvedAt: at(10),
        });
        expect(dataOf(written[3]!)).toMatchObject({ status: 'ACCEPTED', answer: ACCEPT, resolvedAt: at(11) });
        expect(written[4]!.payload).toEqual({
          type: 'turn.completed',
          timestamp: at(12),
          data: {
            turnId: paused.turn.id,
            threadId: paused.thread.id,
            agentId: AGENT,
            ownerId: ANN,
            status: 'COMPLETED',
            text: 'Done.',
            error: null,
            iterations: 1,
            createdAt: at(0),
            finishedAt: at(12),
          },
        });
        // One event, one id per endpoint.
        expect(written[4]!.id).not.toBe(written[5]!.id);
        expect(written[5]!.payload).toEqual(written[4]!.payload);
        expect(dataOf(written[6]!)).toMatchObject({
          status: 'FAILED',
          error: 'The model call failed: boom',
          text: null,
        });
      });

      it('CANCEL: the answered request is resolved ANSWERED, the others of its step resolved TURN_CANCELLED', async () => {
        const s = await hooked();
        const paused = await pausedTurn(s, { elicitations: 3 });
        await answer(s, paused.elicitations[0]!.id, ACCEPT, { now: at(5) });
        await answer(s, paused.elicitations[1]!.id, CANCEL, { now: at(6) });
        const closed = (await deliveries(store)).slice(3);
        expect(
          closed.map((d) => [d.eventType, dataOf(d).elicitationId, dataOf(d).status, dataOf(d).resolution]),
        ).toEqual([
          ['elicitation.resolved', paused.elicitations[0]!.id, 'ACCEPTED', 'ANSWERED'],
          ['elicitation.resolved', paused.elicitations[1]!.id, 'CANCELLED', 'ANSWERED'],
          ['elicitation.resolved', paused.elicitations[2]!.id, 'CANCELLED', 'TURN_CANCELLED'],
        ]);
        expect(dataOf(closed[2]!)).toMatchObject({ answer: null, answeredBy: null, resolvedAt: at(6) });
        // Answering again changes nothing and writes nothing.
        await answer(s, paused.elicitations[1]!.id, CANCEL, { now: at(7) });
        expect(await deliveries(store)).toHaveLength(6);
      });

      it('expiry writes elicitation.expired per request that expired: the sweeper, a late answer, a late new message', async () => {
        const s = await hooked();
        const swept = await pausedTurn(s, { elicitations: 2, expiresAt: at(20) });
        await answer(s, swept.elicitations[0]!.id, DECLINE, { now: at(10) });
        const lateAnswer = await pausedTurn(s, { expiresAt: at(20) });
        const lateMessage = await pausedTurn(s, { expiresAt: at(20) });
        const superseded = await pausedTurn(s, { expiresAt: at(500) });
        const before = (await deliveries(store)).length;

        expect(await answer(s, lateAnswer.elicitations[0]!.id, ACCEPT, { now: at(21) })).toMatchObject({
          kind: 'expired',
          changed: true,
        });
        await s.startTurn(startInput({ threadId: lateMessage.thread.id, now: at(22) }), closeStep);
        await s.startTurn(startInput({ threadId: superseded.thread.id, now: at(23) }), closeStep);
        expect(ids(await s.expireDueTurns(at(24), 10, closeStep))).toEqual([swept.turn.id]);

        const closed = (await deliveries(store)).slice(before);
        expect(
          closed.map((d) => [d.eventType, dataOf(d).elicitationId, dataOf(d).status, dataOf(d).resolution]),
        ).toEqual([
          ['elicitation.expired', lateAnswer.elicitations[0]!.id, 'EXPIRED', 'EXPIRED'],
          ['elicitation.expired', lateMessage.elicitations[0]!.id, 'EXPIRED', 'EXPIRED'],
          ['elicitation.resolved', superseded.elicitations[0]!.id, 'CANCELLED', 'SUPERSEDED'],
          ['elicitation.expired', swept.elicitations[1]!.id, 'EXPIRED', 'EXPIRED'],
        ]);
        expect(dataOf(closed[0]!)).toMatchObject({ answer: null, resolvedAt: at(21) });
      });

      it('a loop write refused for a lost lease writes no outbox row', async () => {
        const s = await hooked();
        const { turn } = await runningTurn(s, { lease: lease('host:1:a') });
        expect(await s.claimTurn(turn.id, 'host:1:a', lease('host:2:b'), at(5))).not.toBeNull();
        const call = { ...toolCall('edit_note'), id: 'call-z' };
        const step = askingStep(call, 'elc-z');
        const refusedPause = s
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .pauseTurn({ step, elicitations: [draftFor(call, 'elc-z')], text: 'May I?', expiresAt: at(99), now: at(9) });
        expect(await rejection(refusedPause)).toBeInstanceOf(LeaseLostError);
        const refusedEnd = s
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .finishTurn({ status: 'COMPLETED', text: 'late', now: at(9) });
        expect(await rejection(refusedEnd)).toBeInstanceOf(LeaseLostError);
        expect(await deliveries(store)).toEqual([]);
        await s
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:2:b' } })
          .finishTurn({ status: 'COMPLETED', text: 'on time', now: at(10) });
        expect(events(await deliveries(store))).toEqual([
          [EVERYTHING, 'turn.completed'],
          [TURNS, 'turn.completed'],
        ]);
      });

      /** `n` finished turns: 2n deliveries (n to each endpoint), created at at(0). */
      async function finishedTurns(s: Store, n: number): Promise<void> {
        for (let i = 0; i < n; i++) {
          const { turn } = await runningTurn(s);
          await s.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', text: `done ${i}`, now: at(0) });
        }
      }

      it("claims: due deliveries of the claimer's endpoints, oldest first, up to the limit; not one held by a live claim", async () => {
        const s = await hooked();
        await finishedTurns(s, 3);
        const all = await deliveries(store);
        const claimed = await store.claimWebhookDeliveries('host:1:a', [TURNS], at(1), at(61), 2);
        expect(claimed.map((d) => d.id)).toEqual(
          all
            .filter((d) => d.endpoint === TURNS)
            .map((d) => d.id)
            .slice(0, 2),
        );
        expect(claimed.map((d) => dataOf(d).text)).toEqual(['done 0', 'done 1']);
        expect(claimed[0]).toMatchObject({ lockedBy: 'host:1:a', lockedUntil: at(61), status: 'PENDING' });
        const rest = await store.claimWebhookDeliveries('host:1:a', [TURNS, EVERYTHING], at(1), at(61), 10);
        expect(rest.map((d) => d.id)).toEqual(all.map((d) => d.id).filter((id) => !claimed.some((c) => c.id === id)));
        expect(await store.claimWebhookDeliveries('host:1:a', [TURNS, EVERYTHING], at(2), at(62), 10)).toEqual([]);
        expect(await store.claimWebhookDeliveries('host:1:a', [], at(2), at(62), 10)).toEqual([]);
      });

      it('outcomes: retry (due again later, counted), delivered, failed; released is not counted; only the holder records', async () => {
        const s = await hooked();
        await finishedTurns(s, 2);
        const [a, b, c, d] = await store.claimWebhookDeliveries('host:1:a', [EVERYTHING, TURNS], at(1), at(61), 10);
        const retry = { kind: 'retry', at: at(30), error: 'HTTP 503', statusCode: 503 } as const;
        expect(await store.recordWebhookAttempt(a!.id, 'host:2:b', retry, at(2))).toBe(false);
        expect(await store.recordWebhookAttempt(a!.id, 'host:1:a', retry, at(2))).toBe(true);
        expect(await store.recordWebhookAttempt(b!.id, 'host:1:a', { kind: 'delivered', statusCode: 204 }, at(3))).toBe(
          true,
        );
        const failed = { kind: 'failed', error: 'connection refused', statusCode: null } as const;
        expect(await store.recordWebhookAttempt(c!.id, 'host:1:a', failed, at(4))).toBe(true);
        expect(await store.recordWebhookAttempt(d!.id, 'host:1:a', { kind: 'released' }, at(5))).toBe(true);
        // Recorded once: the claim is gone.
        expect(await store.recordWebhookAttempt(b!.id, 'host:1:a', failed, at(6))).toBe(false);

        const byId = new Map((await deliveries(store)).map((row) => [row.id, row]));
        expect(byId.get(a!.id)).toMatchObject({
          status: 'PENDING',
          attempts: 1,
          nextAttemptAt: at(30),
          lastError: 'HTTP 503',
          lastStatusCode: 503,
          lockedBy: null,
          lockedUntil: null,
          finishedAt: null,
        });
        expect(byId.get(b!.id)).toMatchObject({
          status: 'DELIVERED',
          attempts: 1,
          lastError: null,
          lastStatusCode: 204,
          finishedAt: at(3),
        });
        expect(byId.get(c!.id)).toMatchObject({
          status: 'FAILED',
          attempts: 1,
          lastError: 'connection refused',
          lastStatusCode: null,
          finishedAt: at(4),
        });
        expect(byId.get(d!.id)).toMatchObject({ status: 'PENDING', attempts: 0, nextAttemptAt: at(5), lockedBy: null });

        // Due again: the released one now, the retried one at its time; ended ones never.
        expect(ids(await store.claimWebhookDeliveries('host:2:b', [EVERYTHING, TURNS], at(10), at(70), 10))).toEqual([
          d!.id,
        ]);
        expect(ids(await store.claimWebhookDeliveries('host:2:b', [EVERYTHING, TURNS], at(30), at(90), 10))).toEqual([
          a!.id,
        ]);

        // The admin list: by status, paged.
        const failedOnly = await store.listWebhookDeliveries({ status: 'FAILED' }, 10, null);
        expect(failedOnly).toMatchObject({ totalCount: 1, hasNextPage: false });
        expect(ids(failedOnly.items)).toEqual([c!.id]);
        const page1 = await store.listWebhookDeliveries({}, 3, null);
        expect(page1).toMatchObject({ totalCount: 4, hasNextPage: true });
        const page2 = await store.listWebhookDeliveries({}, 3, page1.endCursor);
        expect([...ids(page1.items), ...ids(page2.items)]).toEqual([a!.id, b!.id, c!.id, d!.id]);
        expect(page2).toMatchObject({ hasNextPage: false });
      });

      it('a claim that lapsed is taken over by another process; the first one can no longer record', async () => {
        const s = await hooked();
        await finishedTurns(s, 1);
        const other = await second();
        const [held] = await store.claimWebhookDeliveries('host:1:a', [TURNS], at(1), at(60), 10);
        expect(await other.claimWebhookDeliveries('host:2:b', [TURNS], at(59), at(120), 10)).toEqual([]);
        const taken = await other.claimWebhookDeliveries('host:2:b', [TURNS], at(60), at(120), 10);
        expect(ids(taken)).toEqual([held!.id]);
        expect(taken[0]).toMatchObject({ lockedBy: 'host:2:b', lockedUntil: at(120), attempts: 0 });
        const late = { kind: 'delivered', statusCode: 200 } as const;
        expect(await store.recordWebhookAttempt(held!.id, 'host:1:a', late, at(61))).toBe(false);
        expect(await other.recordWebhookAttempt(held!.id, 'host:2:b', late, at(62))).toBe(true);
      });

      it('two processes claiming at once never get the same delivery, and together get all of them', async () => {
        const s = await hooked();
        await finishedTurns(s, 10);
        const other = await second();
        const endpoints = [EVERYTHING, TURNS];
        const [mine, theirs] = await Promise.all([
          store.claimWebhookDeliveries('host:1:a', endpoints, at(1), at(60), 12),
          other.claimWebhookDeliveries('host:2:b', endpoints, at(1), at(60), 12),
        ]);
        const both = [...ids(mine), ...ids(theirs)];
        expect(new Set(both).size).toBe(both.length);
        const rest = [
          ...ids(await store.claimWebhookDeliveries('host:1:a', endpoints, at(1), at(60), 50)),
          ...ids(await other.claimWebhookDeliveries('host:2:b', endpoints, at(1), at(60), 50)),
        ];
        expect(sorted([...both, ...rest])).toEqual(sorted(ids(await deliveries(store))));
        expect(new Set([...both, ...rest]).size).toBe(20);
      });
    });
  });
}
