// The runner: what the API asks of the agent loop. It starts a turn, records an answer and resumes the turn, and
// hands turns to the loop (loop.ts) through their supervision (supervision.ts: who runs a turn, recovery, expiry);
// reporting.ts tells subscribers and observers what happened.
import { newId } from '../domain/ids.js';
import type {
  Agent,
  AnswerIdentity,
  CallerWithdrawal,
  ElicitationAnswer,
  ElicitationRecord,
  JsonObject,
  ThreadRecord,
  ToolCall,
  TurnRecord,
} from '../domain/records.js';
import type { AnswerRefusal, StartRefusal } from '../domain/refusals.js';
import type { AnswerInput, TurnMaintenance } from '../domain/store.js';
import type { Model } from '../models/model.js';
import type { ToolCatalog } from '../tools/tool.js';
import { DEFAULT_MAX_TOOL_ARGUMENTS_BYTES, DEFAULT_MAX_TOOL_ARGUMENTS_DEPTH } from '../domain/gate/argument-size.js';
import type { ListenerRegistry } from '../domain/gate/listeners.js';
import type { LifecycleObserver } from './lifecycle.js';
import { TurnLeases, type LeaseOptions } from './lease.js';
import { TurnLoop, type CheckpointHook, type KnownState, type LoopStore } from './loop.js';
import { TurnReporter, type RunnerEvents } from './reporting.js';
import { TurnSupervisor } from './supervision.js';

export type { Checkpoint } from './loop.js';
export type { RunnerEvents } from './reporting.js';

export interface RunnerOptions {
  /** What the loop uses, and the expiry and leases its supervision does. */
  store: LoopStore & TurnMaintenance;
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
  /** Deepest arguments of a model's tool call, in levels of objects and arrays; a deeper call is refused. Default 64. */
  maxToolArgumentsDepth?: number;
  /**
   * Fault injection for tests: awaited at each named moment of a turn (loop.ts Checkpoint), so a test can kill the
   * process exactly there (test/fixtures/durability-server.ts). Not for production use.
   */
  checkpoint?: CheckpointHook;
}

export type StartTurnOutcome =
  | {
      ok: true;
      thread: ThreadRecord;
      turn: TurnRecord;
      /** When `turn` is the pause this call stopped at: its elicitations as created (no need to read them back). */
      pausedWith: ElicitationRecord[] | null;
      /** A gateway's call that ran at once (TurnLoop.callAtOnce): its result as kept, not to be read back. */
      result?: JsonObject;
    }
  /** Refused, nothing written: the store's refusal, as it gave it. */
  | ({ ok: false } & StartRefusal);

export type ResolveOutcome =
  | { ok: true; elicitation: ElicitationRecord; turn: TurnRecord; pausedWith: ElicitationRecord[] | null }
  /** Not recorded, nothing ran: the store's refusal, as it gave it. */
  | ({ ok: false } & AnswerRefusal);

export class AgentRunner {
  readonly #store: RunnerOptions['store'];
  readonly #clock: () => Date;
  readonly #leases: TurnLeases;
  readonly #reporter: TurnReporter;
  readonly #supervisor: TurnSupervisor;

  constructor(private readonly options: RunnerOptions) {
    this.#store = options.store;
    this.#clock = options.clock ?? (() => new Date());
    this.#leases = new TurnLeases(this.#store, this.#clock, options.lease);
    this.#reporter = new TurnReporter({
      store: this.#store,
      events: options.events,
      observer: options.observer,
      onError: options.onError,
      now: () => this.#now(),
    });
    const loop = new TurnLoop({
      store: this.#store,
      models: options.models,
      tools: options.tools,
      listeners: options.listeners,
      leases: this.#leases,
      reporter: this.#reporter,
      clock: this.#clock,
      maxToolArgumentsBytes: options.maxToolArgumentsBytes ?? DEFAULT_MAX_TOOL_ARGUMENTS_BYTES,
      maxToolArgumentsDepth: options.maxToolArgumentsDepth ?? DEFAULT_MAX_TOOL_ARGUMENTS_DEPTH,
      checkpoint: options.checkpoint,
    });
    this.#supervisor = new TurnSupervisor({
      store: this.#store,
      loop,
      leases: this.#leases,
      reporter: this.#reporter,
      clock: this.#clock,
      maxRecoveries: options.maxRecoveries ?? 3,
      onError: options.onError,
    });
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
    /** A gateway's call, the turn's one step (src/domain/gateway.ts). */
    call?: ToolCall;
    /** The gateway agent as the caller just read it: a call that may run at once is gated with it. */
    agent?: Agent;
  }): Promise<StartTurnOutcome> {
    const turnId = newId('trn');
    const newThreadId = newId('thr');
    let gated: KnownState['gated'];
    // A gateway's call its client waits for, without a key to find it again by: a read-only one may run at once.
    if (input.call && input.idempotencyKey === undefined && !input.background) {
      const { call, agentId, ownerId, message } = input;
      const start = {
        turnId,
        threadId: newThreadId,
        agentId,
        ownerId,
        message,
        call,
        now: this.#now(),
        agent: input.agent,
      };
      const atOnce = await this.#supervisor.callAtOnce(start);
      if (atOnce.kind === 'refused') return { ok: false, ...atOnce.refusal };
      if (atOnce.kind === 'ran') {
        const { thread, turn, result } = atOnce;
        return { ok: true, thread, turn, pausedWith: null, result };
      }
      if (atOnce.kind === 'gated') gated = atOnce.gated;
    }
    const result = await this.#store.startTurn({
      turnId,
      newThreadId,
      threadId: input.threadId,
      agentId: input.agentId,
      ownerId: input.ownerId,
      message: input.message,
      now: this.#now(),
      lease: this.#leases.next(),
      ...(input.idempotencyKey !== undefined && { idempotencyKey: input.idempotencyKey }),
      ...(input.call && { call: input.call }),
    });
    if (result.ok && result.replayed) {
      // The request sent again: its turn as it is now. Like the first request, one that does not run in the
      // background waits for the turn to stop when this process runs it (another process's reads as it is now).
      const running = input.background ? undefined : this.#supervisor.running(result.turn.id);
      return { ok: true, thread: result.thread, turn: (await running)?.turn ?? result.turn, pausedWith: null };
    }
    if (!result.ok) return result;
    if (result.superseded) {
      // A paused turn past its expiry ends EXPIRED (its requests went unanswered), else CANCELLED.
      this.#reporter.turn(result.superseded);
      await this.#reporter.closed(result.superseded);
    }
    this.#reporter.turn(result.turn);
    this.#reporter.observe({ type: 'turnStarted', turn: result.turn });
    // The turn, its agent (read in the same transaction: a gating change committed before it applies) and, on a new
    // thread, the whole transcript, as just written: the loop need not read them again.
    const running = this.#supervisor.run(result.turn.id, {
      turn: result.turn,
      agent: result.agent,
      transcript: input.threadId === null && !input.call ? [result.message] : undefined,
      gated,
    });
    if (input.background) {
      running.catch(() => {}); // the supervisor reports its own faults
      return { ok: true, thread: result.thread, turn: result.turn, pausedWith: null };
    }
    const { turn, pausedWith } = await running;
    return { ok: true, thread: result.thread, turn, pausedWith };
  }

  /**
   * Records an answer; the last answer of a step resumes the turn and returns where it stopped next. Its one caller,
   * src/app/answer-elicitation.ts, checks the answer first: who may give it (the requester: `ownerId`; an approver of
   * the request's policy: `ownerId` null), content against the request, edited arguments against the tool's schema
   * and allowEdit, remember against the gating. Under a policy an approver's answer may only count towards it.
   */
  async resolveElicitation(input: {
    elicitationId: string;
    ownerId: string | null;
    answeredBy: string;
    answeredAs?: AnswerIdentity;
    answer: ElicitationAnswer;
    withdrawn?: CallerWithdrawal;
    assertion?: AnswerInput['assertion'];
  }): Promise<ResolveOutcome> {
    const result = await this.#store.resolveElicitation({
      ...input,
      now: this.#now(),
      lease: this.#leases.next(),
      ...(input.answer.remember && { grantId: newId('grt') }),
    });
    if (!result.ok) {
      if (result.code !== 'EXPIRED') return result;
      // Too late: the answer expired the turn, when nobody had yet; its closing is reported like the sweeper's.
      const { closed, ...refusal } = result;
      if (closed) {
        this.#reporter.turn(closed);
        await this.#reporter.closed(closed);
      }
      return refusal;
    }
    switch (result.kind) {
      case 'duplicate':
        // The same answer again: return the recorded result; if the turn is still being continued, wait for it.
        return {
          ok: true,
          elicitation: result.elicitation,
          turn: (await this.#supervisor.running(result.turn.id))?.turn ?? result.turn,
          pausedWith: null,
        };
      case 'counted':
        // The request still waits for other approvers. The turn's own fields did not change, but what it holds did
        // (its request's answers): its subscribers see who answered so far, as do the request's.
        this.#reporter.changed(result.turn);
        this.#reporter.elicitationsChanged([result.elicitation]);
        return { ok: true, elicitation: result.elicitation, turn: result.turn, pausedWith: null };
      case 'recorded':
        this.#reporter.turn(result.turn);
        this.#reporter.elicitationsChanged([result.elicitation]);
        this.#reporter.answered(result.elicitation, result.elicitation.response ?? input.answer);
        return { ok: true, elicitation: result.elicitation, turn: result.turn, pausedWith: null };
      case 'cancelled':
        this.#reporter.turn(result.turn);
        this.#reporter.answered(result.elicitation, result.elicitation.response ?? input.answer);
        // The step's other requests closed with the turn: all of them reach their subscribers.
        await this.#reporter.closed(result.turn);
        return { ok: true, elicitation: result.elicitation, turn: result.turn, pausedWith: null };
      case 'resume': {
        this.#reporter.turn(result.turn);
        this.#reporter.elicitationsChanged([result.elicitation]);
        this.#reporter.answered(result.elicitation, result.elicitation.response ?? input.answer);
        await this.options.checkpoint?.('answerRecorded', { turnId: result.turn.id });
        const { turn, pausedWith } = await this.#supervisor.run(result.turn.id, {
          turn: result.turn,
          resumedWith: result.elicitations,
        });
        return { ok: true, elicitation: result.elicitation, turn, pausedWith };
      }
    }
  }

  /**
   * Recovery: take over the RUNNING turns no live process runs (see lease.ts) and continue each from its last
   * persisted step. Safe to call at any time and from several processes: each orphan is claimed by exactly one.
   * A turn taken over more than maxRecoveries times is FAILED instead: it may be what crashes the servers.
   * Returns the ids of the turns taken over.
   */
  recover(): Promise<string[]> {
    return this.#supervisor.recover();
  }

  /** Expire paused turns whose time has passed. */
  expireDue(limit = 100): Promise<TurnRecord[]> {
    return this.#supervisor.expireDue(limit);
  }

  /**
   * Escalate the waiting requests whose escalation time has passed and whose expiry has not (docs/approvers.md): each
   * is marked once, whichever process gets to it, and only that process tells the escalation roles, after the commit.
   */
  async escalateDue(limit = 100): Promise<ElicitationRecord[]> {
    const escalated = await this.#store.escalateDueElicitations(this.#now(), limit);
    for (const elicitation of escalated) this.#reporter.escalated(elicitation);
    return escalated;
  }

  /** Resolves when every turn this process is running has stopped. */
  idle(): Promise<void> {
    return this.#supervisor.idle();
  }
}
