// The agent loop, in one place: model call, gate phase, execute phase, until the turn answers, pauses or stops.
// Its state is what the store holds (the transcript and a paused turn's PendingStep), so any process can
// continue a turn from where the last one stopped.
import { coveringGrant, definitionHash } from '../domain/grants.js';
import { newId } from '../domain/ids.js';
import { PENDING_STEP_VERSION } from '../domain/pending-step.js';
import { toStorableText } from '../domain/text.js';
import type {
  Agent,
  ChatMessage,
  ElicitationAnswer,
  ElicitationDraft,
  ElicitationRecord,
  MessageRecord,
  PendingStep,
  ThreadRecord,
  ToolCall,
  TurnRecord,
} from '../domain/records.js';
import { GrantLapsedError, LeaseLostError, type StepAnswer, type Store } from '../domain/store.js';
import type { Model, ModelMessage } from '../models/model.js';
import type { Tool } from '../tools/tool.js';
import { DEFAULT_MAX_TOOL_ARGUMENTS_BYTES } from './argument-size.js';
import { closeStep } from './closing.js';
import type { ListenerRegistry } from './event.js';
import type { LifecycleEvent, LifecycleObserver } from './lifecycle.js';
import { TurnLeases, type LeaseOptions } from './lease.js';
import { answerInstructions, calledName, pausedQuestion, toolText, turnErrors } from './messages.js';
import { preExecute } from './pre-execute.js';
import { normaliseToolCalls } from './tool-calls.js';
import { ToolNames } from './tool-names.js';

/** Resolves an agent's tools (by its tool ids) to runnable tools. */
export interface ToolCatalog {
  toolsFor(agent: Agent): Promise<Tool[]>;
}

/** What the loop tells the outside about (subscriptions). */
export interface RunnerEvents {
  turnChanged(turn: TurnRecord): void;
  elicitationsCreated(elicitations: ElicitationRecord[]): void;
  /**
   * A model call (`iteration`, 1-based) starts: where each piece of its text goes as it is generated (live display,
   * best-effort: it returns at once and is never awaited; the saved ASSISTANT message is what counts).
   */
  modelText?(turn: TurnRecord, iteration: number): (delta: string) => void;
  /**
   * This process stopped running the turn for now: it paused or ended, or another process took it over (a lost
   * lease), or the store stopped answering. Whatever was kept for the turn's live events can go.
   */
  turnLeft?(turnId: string): void;
}

export interface RunnerOptions {
  store: Store;
  models: (modelId: string) => Model | undefined;
  tools: ToolCatalog;
  listeners: ListenerRegistry;
  events?: RunnerEvents;
  /** Told what happened to turns, answers, tools and model calls, after it committed (logs, metrics). */
  observer?: LifecycleObserver;
  clock?: () => Date;
  /** Where unexpected faults are reported; they end the turn FAILED. */
  onError?: (error: unknown) => void;
  /** Which process runs a turn (several may serve one database); see lease.ts. */
  lease?: LeaseOptions;
  /** Times a turn may be taken over after the process running it died, before it is FAILED instead. Default 3. */
  maxRecoveries?: number;
  /** Largest arguments of a model's tool call, in UTF-8 bytes of JSON; a larger call is refused. Default 256 KiB. */
  maxToolArgumentsBytes?: number;
  /**
   * Fault injection for tests: awaited at each named moment of a turn, so a test can kill the process exactly
   * there (test/fixtures/durability-server.ts). Not for production use.
   */
  checkpoint?: (
    point: Checkpoint,
    at: { turnId: string; toolCallId?: string; toolName?: string },
  ) => void | Promise<void>;
}

/**
 * The moments between a turn's persisted steps: `modelAnswered` (model replied, ASSISTANT not saved yet),
 * `stepSaved` (a step whose calls run unasked: ASSISTANT saved, no call started; a step that asks is saved with its
 * pause, in one commit, and has no such moment), `answerRecorded` (last answer and RUNNING committed, nothing run),
 * `toolStarting` (before the call is journaled started), `toolReturned` (tool returned, result not saved yet).
 */
export type Checkpoint = 'modelAnswered' | 'stepSaved' | 'answerRecorded' | 'toolStarting' | 'toolReturned';

export type StartTurnOutcome =
  | {
      ok: true;
      thread: ThreadRecord;
      turn: TurnRecord;
      /** When `turn` is the pause this call stopped at: its elicitations as created (no need to read them back). */
      pausedWith: ElicitationRecord[] | null;
    }
  | {
      ok: false;
      code: 'NOT_FOUND' | 'THREAD_BUSY' | 'IDEMPOTENCY_KEY_REUSED';
      message: string;
      field: string[];
    };

export type ResolveOutcome =
  | { ok: true; elicitation: ElicitationRecord; turn: TurnRecord; pausedWith: ElicitationRecord[] | null }
  | { ok: false; code: 'NOT_FOUND' | 'EXPIRED' | 'ALREADY_RESOLVED'; message: string };

/** What a caller already holds of a turn it hands to the loop, so that the loop need not read it again. */
interface KnownState {
  /** The turn as this process just committed it RUNNING. */
  turn?: TurnRecord;
  /** The agent as read in the same transaction. */
  agent?: Agent;
  /** The whole transcript (a new thread's: its first message). */
  transcript?: MessageRecord[];
  /** Just resumed by this process: the step's elicitations with their answers; none of its calls has run. */
  resumedWith?: ElicitationRecord[];
}

export class AgentRunner {
  readonly #store: Store;
  readonly #clock: () => Date;
  /** Turns this process is running now; a restart recovers the rest. */
  readonly #inFlight = new Map<string, Promise<TurnRecord>>();
  readonly #leases: TurnLeases;
  /**
   * RUNNING turns this process holds but stopped running: a store write failed and so did ending the turn (the
   * database was away). The next recovery (every sweep) takes each over again, like a dead process's.
   */
  readonly #stranded = new Set<string>();
  /** The elicitations of each pause this process made, by the paused turn's record (for the caller's response). */
  readonly #pausedWith = new WeakMap<TurnRecord, ElicitationRecord[]>();

  constructor(private readonly options: RunnerOptions) {
    this.#store = options.store;
    this.#clock = options.clock ?? (() => new Date());
    this.#leases = new TurnLeases(this.#store, this.#clock, options.lease);
  }

  /** This process's name in turn leases. */
  get leaseOwner(): string {
    return this.#leases.owner;
  }

  #now(): string {
    return this.#clock().toISOString();
  }

  /** Appends the user message and runs the turn; with `background`, returns at once with it RUNNING. */
  async startTurn(input: {
    agentId: string;
    threadId: string | null;
    ownerId: string;
    message: string;
    background: boolean;
    /** The client's name for this request (src/domain/idempotency.ts): sent again, it returns the first turn. */
    idempotencyKey?: string;
  }): Promise<StartTurnOutcome> {
    const result = await this.#store.startTurn(
      {
        turnId: newId('trn'),
        newThreadId: newId('thr'),
        threadId: input.threadId,
        agentId: input.agentId,
        ownerId: input.ownerId,
        message: input.message,
        now: this.#now(),
        lease: this.#leases.next(),
        ...(input.idempotencyKey !== undefined && { idempotencyKey: input.idempotencyKey }),
      },
      closeStep,
    );
    if (!result.ok && result.code === 'AGENT_NOT_FOUND') {
      return { ok: false, code: 'NOT_FOUND', message: 'No agent with this id.', field: ['input', 'agentId'] };
    }
    if (!result.ok && result.code === 'IDEMPOTENCY_KEY_REUSED') {
      return {
        ok: false,
        code: 'IDEMPOTENCY_KEY_REUSED',
        message:
          'This idempotency key was already used for another request (another agent, thread or message); ' +
          'use a new key for a new message.',
        field: ['input', 'idempotencyKey'],
      };
    }
    if (result.ok && result.replayed) {
      // The request sent again: its turn as it is now. Like the first request, one that does not run in the
      // background waits for the turn to stop when this process runs it (another process's reads as it is now).
      const running = input.background ? undefined : this.#inFlight.get(result.turn.id);
      return { ok: true, thread: result.thread, turn: (await running) ?? result.turn, pausedWith: null };
    }
    if (!result.ok) {
      const message =
        result.code === 'THREAD_BUSY'
          ? 'The thread has a turn running; wait for it to stop.'
          : result.code === 'WRONG_AGENT'
            ? 'The thread belongs to another agent.'
            : 'No thread with this id.';
      return {
        ok: false,
        code: result.code === 'THREAD_BUSY' ? 'THREAD_BUSY' : 'NOT_FOUND',
        message,
        field: ['input', 'threadId'],
      };
    }
    if (result.superseded) {
      this.#emitTurn(result.superseded);
      // A paused turn past its expiry ends EXPIRED (its requests went unanswered), else CANCELLED.
      if (result.superseded.status === 'EXPIRED') await this.#observeExpired(result.superseded);
      else this.#observe({ type: 'turnEnded', turn: result.superseded });
    }
    this.#emitTurn(result.turn);
    this.#observe({ type: 'turnStarted', turn: result.turn });
    // The turn, its agent (read in the same transaction: a gating change committed before it applies) and, on a new
    // thread, the whole transcript, as just written: #run need not read them again.
    const running = this.#continue(result.turn.id, {
      turn: result.turn,
      agent: result.agent,
      transcript: input.threadId === null ? [result.message] : undefined,
    });
    if (input.background) {
      running.catch(() => {}); // #continue reports its own faults
      return { ok: true, thread: result.thread, turn: result.turn, pausedWith: null };
    }
    const turn = await running;
    return { ok: true, thread: result.thread, turn, pausedWith: this.#pausedWith.get(turn) ?? null };
  }

  /**
   * Records an answer; the last answer of a step resumes the turn and returns where it stopped next. The caller has
   * validated it (src/graphql/elicitations.ts): edited arguments against the tool's schema, remember against the gating.
   */
  async resolveElicitation(input: {
    elicitationId: string;
    ownerId: string;
    answer: ElicitationAnswer;
  }): Promise<ResolveOutcome> {
    const result = await this.#store.resolveElicitation(
      {
        ...input,
        now: this.#now(),
        lease: this.#leases.next(),
        ...(input.answer.remember && { grantId: newId('grt') }),
      },
      closeStep,
    );
    switch (result.kind) {
      case 'not_found':
        return { ok: false, code: 'NOT_FOUND', message: 'No elicitation with this id.' };
      case 'already_resolved':
        return {
          ok: false,
          code: 'ALREADY_RESOLVED',
          message: `This elicitation was already answered (${result.elicitation.status}).`,
        };
      case 'expired':
        if (result.changed) {
          this.#emitTurn(result.turn);
          await this.#observeExpired(result.turn);
        }
        return {
          ok: false,
          code: 'EXPIRED',
          message: `This elicitation expired at ${result.elicitation.expiresAt}; nothing was run.`,
        };
      case 'duplicate':
        // The same answer again: return the recorded result; if the turn is still being continued, wait for it.
        return {
          ok: true,
          elicitation: result.elicitation,
          turn: (await this.#inFlight.get(result.turn.id)) ?? result.turn,
          pausedWith: null,
        };
      case 'recorded':
      case 'cancelled':
        this.#emitTurn(result.turn);
        this.#observeAnswer(result.elicitation, input.answer);
        if (result.kind === 'cancelled') this.#observe({ type: 'turnEnded', turn: result.turn });
        return { ok: true, elicitation: result.elicitation, turn: result.turn, pausedWith: null };
      case 'resume': {
        this.#emitTurn(result.turn);
        this.#observeAnswer(result.elicitation, input.answer);
        await this.options.checkpoint?.('answerRecorded', { turnId: result.turn.id });
        const turn = await this.#continue(result.turn.id, { turn: result.turn, resumedWith: result.elicitations });
        return { ok: true, elicitation: result.elicitation, turn, pausedWith: this.#pausedWith.get(turn) ?? null };
      }
    }
  }

  /**
   * Recovery: take over the RUNNING turns no live process runs (see lease.ts) and continue each from its last
   * persisted step. Safe to call at any time and from several processes: each orphan is claimed by exactly one.
   * A turn taken over more than maxRecoveries times is FAILED instead: it may be what crashes the servers.
   * Returns the ids of the turns taken over.
   */
  async recover(): Promise<string[]> {
    const taken: string[] = [];
    // This process's own turns it stopped running on a store error come first: nobody else would take them while
    // this process renews its leases.
    const stranded = [...this.#stranded].map((turnId) => ({ turnId, owner: this.#leases.owner }));
    for (const orphan of [...stranded, ...(await this.#leases.orphans())]) {
      if (this.#inFlight.has(orphan.turnId)) continue;
      const claimed = await this.#store.claimTurn(orphan.turnId, orphan.owner, this.#leases.next(), this.#now());
      this.#stranded.delete(orphan.turnId); // a claim that threw (the store still away) leaves it for the next sweep
      if (!claimed) continue; // another process was quicker, or the turn is no longer RUNNING
      taken.push(orphan.turnId);
      const maxRecoveries = this.options.maxRecoveries ?? 3;
      const run =
        claimed.recoveries > maxRecoveries
          ? this.#track(orphan.turnId, () => this.#fail(claimed.turn, turnErrors.tooManyRecoveries(maxRecoveries)))
          : this.#continue(orphan.turnId);
      // Another process taking the turn over meanwhile is not a fault: it runs the turn now.
      run.catch((error) => {
        if (!(error instanceof LeaseLostError)) this.options.onError?.(error);
      });
    }
    return taken;
  }

  /** Expire paused turns whose time has passed. */
  async expireDue(limit = 100): Promise<TurnRecord[]> {
    const expired = await this.#store.expireDueTurns(this.#now(), limit, closeStep);
    for (const turn of expired) {
      this.#emitTurn(turn);
      await this.#observeExpired(turn);
    }
    return expired;
  }

  /** Resolves when every turn this process is running has stopped. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()]);
  }

  /** `known`: what the caller holds of the turn (KnownState), instead of reading it again. */
  #continue(turnId: string, known: KnownState = {}): Promise<TurnRecord> {
    return this.#track(turnId, () => this.#run(turnId, known));
  }

  /** Runs `work` as this process's run of the turn, renewing the turn's lease meanwhile. */
  #track(turnId: string, work: () => Promise<TurnRecord>): Promise<TurnRecord> {
    const existing = this.#inFlight.get(turnId);
    if (existing) return existing;
    this.#leases.hold();
    const run = work().finally(() => {
      this.#inFlight.delete(turnId);
      this.#leases.release();
      this.options.events?.turnLeft?.(turnId);
    });
    this.#inFlight.set(turnId, run);
    return run;
  }

  async #run(turnId: string, known: KnownState): Promise<TurnRecord> {
    const store = this.#store;
    let turn = known.turn ?? (await this.#loadTurn(turnId))!;
    let knownTranscript = known.transcript;
    try {
      const agent = known.agent ?? (await store.getAgent(turn.agentId));
      // A recovered turn may have open calls: #fail gives each its TOOL message, so the thread stays usable.
      if (!agent) return await this.#fail(turn, `The agent ${turn.agentId} no longer exists.`);
      const model = this.options.models(agent.modelId);
      if (!model) return await this.#fail(turn, `The agent's model ${agent.modelId} is not configured.`);
      const tools = await this.options.tools.toolsFor(agent);
      const names = new ToolNames(tools);
      const byId = new Map(tools.map((tool) => [tool.id, tool]));

      // A resumed turn first runs the execute phase of its step.
      if (turn.step) await this.#executeStep(turn, agent, turn.step, byId, known.resumedWith);

      for (;;) {
        const transcript = knownTranscript ?? (await store.listThreadMessages(turn.threadId));
        knownTranscript = undefined;
        const open = openToolCalls(transcript, turn.id);
        if (open.length > 0) {
          // A step whose assistant message was saved but whose gate did not finish (a crash): gate it now.
          const paused = await this.#gateAndRun(turn, agent, open, byId);
          if (paused) return paused;
          continue;
        }
        const last = transcript.at(-1);
        if (last?.role === 'ASSISTANT' && last.turnId === turn.id && last.toolCalls.length === 0) {
          // The final answer was saved, then the process died before the turn was marked COMPLETED: do not ask again.
          return await this.#finish(turn.id, 'COMPLETED', { text: last.text ?? '' });
        }
        if (turn.iterations >= agent.maxIterations) {
          return await this.#finish(turn.id, 'FAILED', { error: turnErrors.maxIterations(agent.maxIterations) });
        }
        let response;
        const modelStarted = performance.now();
        try {
          response = await model.generate({
            system: agent.systemPrompt,
            messages: toModelMessages(transcript, names),
            tools: tools.map((tool) => ({
              name: names.modelName(tool.id),
              description: tool.description,
              inputSchema: tool.inputSchema,
            })),
            onTextDelta: this.options.events?.modelText?.(turn, turn.iterations + 1),
          });
        } catch (error) {
          this.#observeModel(turn, agent.modelId, 'error', modelStarted);
          await store.setIterations(turn.id, turn.iterations + 1, this.#now(), this.#leases.owner);
          return await this.#finish(turn.id, 'FAILED', { error: turnErrors.model(errorMessage(error)) });
        }
        this.#observeModel(turn, agent.modelId, 'ok', modelStarted);
        const calls = normaliseToolCalls(response.toolCalls, {
          names,
          tools: byId,
          usedIds: transcript.flatMap((m) => m.toolCalls.map((call) => call.id)),
          maxArgumentsBytes: this.options.maxToolArgumentsBytes ?? DEFAULT_MAX_TOOL_ARGUMENTS_BYTES,
        });
        const answerText = response.text === null ? null : toStorableText(response.text);
        await this.options.checkpoint?.('modelAnswered', { turnId: turn.id });
        // The answer and the iteration count commit together: a step is saved whole or not at all. A final answer
        // (no tool calls) commits with the end of the turn, one that asks with its pause (#gateAndRun): one commit,
        // and one wait for it, fewer per step.
        turn = { ...turn, iterations: turn.iterations + 1 };
        const assistant = { role: 'ASSISTANT' as const, text: answerText, toolCalls: calls, toolCallId: null };
        if (calls.length === 0) {
          return await this.#finish(turn.id, 'COMPLETED', {
            text: answerText ?? '',
            answer: { message: assistant, iterations: turn.iterations },
          });
        }
        const paused = await this.#gateAndRun(turn, agent, calls, byId, assistant);
        if (paused) return paused;
      }
    } catch (error) {
      // Another process took the turn over (this one was frozen past its lease): it is that one's now; write nothing.
      if (error instanceof LeaseLostError) return (await this.#loadTurn(turn.id)) ?? turn;
      this.options.onError?.(error);
      try {
        if (!(await this.#leases.holds(turn.id))) return (await this.#loadTurn(turn.id)) ?? turn;
        return await this.#fail(turn, 'The turn failed because of an internal error.');
      } catch {
        // The store is not answering: the turn stays RUNNING under this process's lease; the next sweep retries it.
        this.#stranded.add(turn.id);
        return turn;
      }
    }
  }

  /** Ends a turn FAILED; every open call still gets exactly one TOOL message, so the thread stays usable. */
  async #fail(turn: TurnRecord, error: string): Promise<TurnRecord> {
    const store = this.#store;
    const open = openToolCalls(await store.listThreadMessages(turn.threadId), turn.id);
    const unfinished = new Set(await store.listUnfinishedToolCalls(turn.id));
    await store.appendToolMessages(
      turn.id,
      open.map((call) => ({
        toolCallId: call.id,
        text: unfinished.has(call.id)
          ? toolText.interrupted(calledName(call))
          : toolText.failed(calledName(call), 'the turn stopped before it ran'),
      })),
      this.#now(),
      this.#leases.owner,
    );
    return this.#finish(turn.id, 'FAILED', { error });
  }

  /**
   * Gate phase for the calls of one step, then (unless it pauses) the execute phase. Returns the turn if paused.
   * `unsaved`: the model's answer that asked for `calls`, not stored yet (a step saved before a crash has none). It
   * commits with the pause when a call asks, else before any call runs; if the gate throws, it is saved first, so that
   * #fail answers its calls.
   */
  async #gateAndRun(
    turn: TurnRecord,
    agent: Agent,
    calls: ToolCall[],
    tools: Map<string, Tool>,
    unsaved?: ChatMessage,
  ): Promise<TurnRecord | null> {
    const saveStep = async (): Promise<void> => {
      if (!unsaved) return;
      await this.#store.appendAssistantMessage(turn.id, unsaved, this.#now(), turn.iterations, this.#leases.owner);
      await this.options.checkpoint?.('stepSaved', { turnId: turn.id });
      this.#emitTurn(turn);
    };
    let gate;
    try {
      gate = await this.#gate(turn, agent, calls, tools);
    } catch (error) {
      await saveStep();
      throw error;
    }
    const { step, drafts, asked } = gate;
    if (drafts.length > 0) {
      const expiresAt = new Date(this.#clock().getTime() + agent.pauseTtlSeconds * 1000).toISOString();
      const paused = await this.#store.pauseTurn(
        turn.id,
        step,
        drafts,
        pausedQuestion(asked),
        expiresAt,
        this.#now(),
        this.#leases.owner,
        unsaved && { message: unsaved, iterations: turn.iterations },
      );
      this.#pausedWith.set(paused.turn, paused.elicitations);
      this.options.events?.elicitationsCreated(paused.elicitations);
      this.#emitTurn(paused.turn);
      this.#observe({ type: 'turnPaused', turn: paused.turn, elicitations: paused.elicitations });
      return paused.turn;
    }
    await saveStep();
    await this.#executeStep(turn, agent, step, tools);
    return null;
  }

  /** Gate phase: each call's outcome (reject, veto, ask, or run), and the confirmation requests of those that ask. */
  async #gate(
    turn: TurnRecord,
    agent: Agent,
    calls: ToolCall[],
    tools: Map<string, Tool>,
  ): Promise<{ step: PendingStep; drafts: ElicitationDraft[]; asked: Tool[] }> {
    const step: PendingStep = { version: PENDING_STEP_VERSION, calls: [] };
    const drafts: ElicitationDraft[] = [];
    const asked: Tool[] = [];
    for (const toolCall of calls) {
      if (toolCall.refusal) {
        step.calls.push({ toolCall, outcome: { kind: 'rejected', text: toolCall.refusal } });
        continue;
      }
      const tool = tools.get(toolCall.toolId);
      if (!tool) {
        step.calls.push({ toolCall, outcome: { kind: 'rejected', text: toolText.unknownTool(calledName(toolCall)) } });
        continue;
      }
      const site = { agent, threadId: turn.threadId, turnId: turn.id };
      const verdict = await preExecute(this.options.listeners, site, tool, toolCall);
      if (verdict.kind === 'vetoed') {
        step.calls.push({ toolCall, outcome: { kind: 'vetoed', reason: verdict.reason } });
        continue;
      }
      if (verdict.kind === 'run') {
        step.calls.push({ toolCall, outcome: { kind: 'run' } });
        continue;
      }
      // A call that would ask runs unasked when the user remembered an approval of this tool, as defined now.
      const hash = definitionHash(tool);
      const grant = verdict.grantable ? await this.#coveringGrant(turn, agent, tool, hash) : null;
      if (grant) {
        step.calls.push({ toolCall, outcome: { kind: 'run', grantId: grant.id } });
        continue;
      }
      const elicitationId = newId('elc');
      step.calls.push({ toolCall, outcome: { kind: 'confirm', elicitationId } });
      drafts.push({
        id: elicitationId,
        toolCallId: toolCall.id,
        request: verdict.request,
        toolCall: {
          name: toolCall.name,
          toolId: toolCall.toolId,
          arguments: toolCall.arguments,
          annotations: tool.annotations,
          definitionHash: hash,
          grantable: verdict.grantable,
        },
      });
      asked.push(tool);
    }
    return { step, drafts, asked };
  }

  /**
   * The user's remembered approval that lets this call run unasked, if any; asked only for a confirmation a grant may
   * stand in for (ToolPreExecuteEvent.isGrantable: not ALWAYS, not a listener's own reason to ask).
   */
  async #coveringGrant(turn: TurnRecord, agent: Agent, tool: Tool, hash: string) {
    const candidates = await this.#store.listGrantCandidates(turn.ownerId, agent.id, tool.id);
    if (candidates.length === 0) return null;
    const call = { ownerId: turn.ownerId, agentId: agent.id, threadId: turn.threadId, toolId: tool.id };
    return coveringGrant(candidates, { ...call, definitionHash: hash }, this.#now());
  }

  /**
   * Execute phase: the step's calls in their original order, each answered by exactly one TOOL message.
   * `resumedWith`: the step was just resumed by this process, with these elicitations: none of its calls ran yet.
   */
  async #executeStep(
    turn: TurnRecord,
    agent: Agent,
    step: PendingStep,
    tools: Map<string, Tool>,
    resumedWith?: ElicitationRecord[],
  ): Promise<void> {
    const store = this.#store;
    // Calls answered before a crash (a recovered turn) are skipped: never twice.
    const answered = new Set(
      resumedWith
        ? []
        : (await store.listTurnMessages(turn.id)).filter((m) => m.role === 'TOOL').map((m) => m.toolCallId),
    );
    const answers = new Map(
      (resumedWith ?? (await store.listTurnElicitations(turn.id))).map((e) => [e.id, e.response]),
    );
    // Started before a crash, never finished: #runTool reports each interrupted, whatever a listener says now.
    const startedBefore = new Set(resumedWith ? [] : await store.listUnfinishedToolCalls(turn.id));
    for (const { toolCall, outcome } of step.calls) {
      if (answered.has(toolCall.id)) continue; // answered before a crash: never twice
      const say = (text: string) => this.#answerCall(turn.id, toolCall.id, text);
      if (outcome.kind === 'vetoed') {
        await say(toolText.denied(calledName(toolCall), outcome.reason));
        continue;
      }
      if (outcome.kind === 'rejected') {
        await say(outcome.text);
        continue;
      }
      const tool = tools.get(toolCall.toolId);
      if (outcome.kind === 'run') {
        await this.#runTool(turn, toolCall, tool, { grantId: outcome.grantId });
        continue;
      }
      const answer = answers.get(outcome.elicitationId);
      const instructions = answerInstructions(answer);
      if (answer?.action !== 'ACCEPT') {
        // Only an ACCEPT runs a confirmed call; anything else (DECLINE, or no answer at all) does not.
        await say(
          answer?.action === 'DECLINE'
            ? toolText.declined(calledName(toolCall), instructions)
            : toolText.cancelledByUser(calledName(toolCall)),
        );
        continue;
      }
      if (!answer.arguments) {
        await this.#runTool(turn, toolCall, tool, { instructions });
        continue;
      }
      // Edited, then accepted: the user's arguments run. They pass the listeners again, so an edit cannot slip past a
      // policy: a veto still wins; a confirmation asked for counts as given, for exactly these arguments.
      const edited: ToolCall = { ...toolCall, arguments: answer.arguments };
      if (tool && !startedBefore.has(toolCall.id)) {
        const site = { agent, threadId: turn.threadId, turnId: turn.id };
        const verdict = await preExecute(this.options.listeners, site, tool, edited, { confirmed: true });
        if (verdict.kind === 'vetoed') {
          await say(toolText.denied(calledName(toolCall), verdict.reason));
          continue;
        }
      }
      await this.#runTool(turn, edited, tool, { instructions, edited: true });
    }
  }

  /**
   * At most once: journaled as started (committed) before it runs; a call started before is never run again.
   * `how`: the instructions of the ACCEPT that allowed it; `edited`: it runs with the user's arguments; `grantId`: a
   * remembered approval let it run unasked (recorded with it, and checked again as it starts).
   */
  async #runTool(
    turn: TurnRecord,
    toolCall: ToolCall,
    tool: Tool | undefined,
    how: { instructions?: string | null; edited?: boolean; grantId?: string } = {},
  ): Promise<void> {
    const store = this.#store;
    if (!tool) {
      await this.#answerCall(turn.id, toolCall.id, toolText.unknownTool(calledName(toolCall)));
      return;
    }
    await this.options.checkpoint?.('toolStarting', {
      turnId: turn.id,
      toolCallId: toolCall.id,
      toolName: toolCall.name,
    });
    let started: boolean;
    try {
      started = await store.markToolStarted(turn.id, toolCall.id, this.#now(), this.#leases.owner, how.grantId);
    } catch (error) {
      if (!(error instanceof GrantLapsedError)) throw error;
      // Revoked (or expired) between the gate and now: it does not run; the model may call it again, which asks.
      await this.#answerCall(turn.id, toolCall.id, toolText.grantLapsed(calledName(toolCall)));
      return;
    }
    if (!started) {
      await store.finishTool(
        turn.id,
        { toolCallId: toolCall.id, text: toolText.interrupted(calledName(toolCall)) },
        this.#now(),
        this.#leases.owner,
      );
      this.#emitChanged(turn);
      this.#observe({ type: 'toolFinished', turn, toolCall, outcome: 'interrupted', durationMs: 0 });
      return;
    }
    this.#observe({ type: 'toolStarted', turn, toolCall, grantId: how.grantId, edited: how.edited });
    const toolStarted = performance.now();
    let outcome: 'ok' | 'error' = 'ok';
    let text: string;
    try {
      const result = await tool.execute(toolCall.arguments, {
        agentId: turn.agentId,
        threadId: turn.threadId,
        turnId: turn.id,
        toolCallId: toolCall.id,
      });
      if (result.isError) outcome = 'error';
      text = toStorableText(result.isError ? toolText.failed(calledName(toolCall), result.text) : result.text);
    } catch (error) {
      outcome = 'error';
      text = toStorableText(toolText.failed(calledName(toolCall), errorMessage(error)));
    }
    const durationMs = performance.now() - toolStarted;
    await this.options.checkpoint?.('toolReturned', {
      turnId: turn.id,
      toolCallId: toolCall.id,
      toolName: toolCall.name,
    });
    if (how.edited) text = `${toolText.edited(calledName(toolCall), toolCall.arguments)}\n\n${text}`;
    if (how.instructions) text = `${text}\n\n${toolText.acceptedInstructions(calledName(toolCall), how.instructions)}`;
    await store.finishTool(turn.id, { toolCallId: toolCall.id, text }, this.#now(), this.#leases.owner);
    this.#emitChanged(turn);
    this.#observe({ type: 'toolFinished', turn, toolCall, outcome, durationMs });
  }

  /**
   * The TOOL message of a call that does not run (denied, declined, rejected, …), published as it is written:
   * turnUpdated follows a step call by call.
   */
  async #answerCall(turnId: string, toolCallId: string, text: string): Promise<void> {
    await this.#store.appendToolMessages(turnId, [{ toolCallId, text }], this.#now(), this.#leases.owner);
    await this.#emitLatest(turnId);
  }

  async #finish(
    turnId: string,
    status: 'COMPLETED' | 'FAILED',
    fields: { text?: string | null; error?: string | null; answer?: StepAnswer },
  ): Promise<TurnRecord> {
    const turn = await this.#store.finishTurn(turnId, status, fields, this.#now(), this.#leases.owner);
    this.#emitTurn(turn);
    this.#observe({ type: 'turnEnded', turn });
    return turn;
  }

  /** The runner acts for whoever owns the turn; ownership was checked when it was started or answered. */
  #loadTurn(turnId: string): Promise<TurnRecord | null> {
    return this.#store.loadTurn(turnId);
  }

  #emitTurn(turn: TurnRecord): void {
    this.options.events?.turnChanged(turn);
  }

  /**
   * The turn changed in what it holds (a TOOL message), not in its own fields: published as a new record, so that
   * subscribers read its messages anew (reads are shared per record, src/graphql/shared-reads.ts).
   */
  #emitChanged(turn: TurnRecord): void {
    this.#emitTurn({ ...turn });
  }

  /** Tells the observer; one that throws is reported and ignored (it never changes what the turn does). */
  #observe(event: LifecycleEvent): void {
    if (!this.options.observer) return;
    try {
      this.options.observer.onLifecycle(event);
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  #observeAnswer(elicitation: ElicitationRecord, answer: ElicitationAnswer): void {
    const waitedMs = Math.max(0, Date.parse(elicitation.resolvedAt ?? this.#now()) - Date.parse(elicitation.createdAt));
    this.#observe({ type: 'elicitationAnswered', elicitation, action: answer.action, waitedMs });
  }

  #observeModel(turn: TurnRecord, modelId: string, outcome: 'ok' | 'error', startedAt: number): void {
    this.#observe({ type: 'modelCalled', turn, modelId, outcome, durationMs: performance.now() - startedAt });
  }

  /** A turn this process just expired: how many requests went unanswered (read only when someone observes). */
  async #observeExpired(turn: TurnRecord): Promise<void> {
    if (!this.options.observer) return;
    try {
      const count = (await this.#store.listTurnElicitations(turn.id)).filter((e) => e.status === 'EXPIRED').length;
      this.#observe({ type: 'elicitationsExpired', turn, count });
    } catch (error) {
      this.options.onError?.(error);
    }
    this.#observe({ type: 'turnEnded', turn });
  }

  async #emitLatest(turnId: string): Promise<void> {
    const turn = await this.#loadTurn(turnId);
    if (turn) this.#emitTurn(turn);
  }
}

/** Tool calls of the last ASSISTANT message that have no TOOL message yet. */
function openToolCalls(transcript: MessageRecord[], turnId: string): ToolCall[] {
  const lastAssistant = transcript.findLastIndex((m) => m.role === 'ASSISTANT');
  if (lastAssistant < 0 || transcript[lastAssistant]!.turnId !== turnId) return [];
  const answered = new Set(
    transcript
      .slice(lastAssistant + 1)
      .filter((m) => m.role === 'TOOL')
      .map((m) => m.toolCallId),
  );
  return transcript[lastAssistant]!.toolCalls.filter((call) => !answered.has(call.id));
}

function toModelMessages(transcript: MessageRecord[], names: ToolNames): ModelMessage[] {
  return transcript
    .filter((m) => m.role !== 'SYSTEM')
    .map((m) => ({
      role: m.role as ModelMessage['role'],
      text: m.text,
      toolCalls: m.toolCalls.map((call) => ({
        id: call.id,
        name: names.modelName(call.toolId),
        arguments: call.arguments,
      })),
      toolCallId: m.toolCallId,
    }));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
