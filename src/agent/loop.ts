// The agent loop: model call, gate phase, execute phase, until the turn answers, pauses or stops. Its state is what
// the store holds (the transcript and a paused turn's PendingStep), so any process can continue a turn from where
// the last one stopped. Who runs a turn, and what happens after a fault, is supervision.ts's.
import { approvalAt, approversKey } from '../domain/approvers.js';
import { toolDefinitionDigest } from '../domain/decision-records.js';
import { coveringGrant, definitionHash } from '../domain/grants.js';
import { newId } from '../domain/ids.js';
import { PENDING_STEP_VERSION } from '../domain/pending-step.js';
import { isGateway, ranCallResult, runsAtOnce } from '../domain/gateway.js';
import { sameJson } from '../domain/canonical-json.js';
import { startedTurn } from '../domain/turn-rules.js';
import type { StartRefusal } from '../domain/refusals.js';
import { toStorableJson, toStorableText } from '../domain/text.js';
import type {
  Agent,
  ChatMessage,
  ElicitationDraft,
  ElicitationRecord,
  JsonObject,
  MessageRecord,
  PendingStep,
  ThreadRecord,
  ToolCall,
  ToolMessageDecision,
  ToolResult,
  TurnRecord,
} from '../domain/records.js';
import {
  AcceptanceUnverifiedError,
  GrantLapsedError,
  type Agents,
  type Grants,
  type Reads,
  type StepAnswer,
  type TurnLog,
  type TurnWriter,
  type TurnMaintenance,
} from '../domain/store.js';
import type { Model } from '../models/model.js';
import type { Tool, ToolCatalog } from '../tools/tool.js';
import type { ListenerRegistry } from '../domain/gate/listeners.js';
import type { TurnLeases } from './lease.js';
import { approversFor, gateDecision } from '../domain/gate/gating.js';
import { answerInstructions, calledName, pausedQuestion, toolText, turnErrors } from '../domain/gate/messages.js';
import { preExecute } from './pre-execute.js';
import type { TurnReporter } from './reporting.js';
import { normaliseToolCalls } from '../domain/gate/tool-calls.js';
import { ToolNames } from '../domain/gate/tool-names.js';
import { openToolCalls, toModelMessages } from './transcript.js';

/**
 * The moments between a turn's persisted steps: `modelAnswered` (model replied, ASSISTANT not saved yet),
 * `stepSaved` (a step whose calls run unasked: ASSISTANT saved, no call started; a step that asks is saved with its
 * pause, in one commit, and has no such moment), `answerRecorded` (last answer and RUNNING committed, nothing run),
 * `toolStarting` (before the call is journaled started), `toolReturned` (tool returned, result not saved yet).
 */
export type Checkpoint = 'modelAnswered' | 'stepSaved' | 'answerRecorded' | 'toolStarting' | 'toolReturned';

/** Awaited at each Checkpoint, so a test can kill the process exactly there. */
export type CheckpointHook = (
  point: Checkpoint,
  at: { turnId: string; toolCallId?: string; toolName?: string },
) => void | Promise<void>;

/** What the loop does to the store: reads, its turn's writes, the grant a call may run under, a recovered turn's calls. */
export type LoopStore = TurnLog &
  Reads &
  Pick<Agents, 'getAgent'> &
  Pick<Grants, 'listGrantCandidates'> &
  Pick<TurnMaintenance, 'listUnfinishedToolCalls'>;

export interface LoopOptions {
  store: LoopStore;
  models: (modelId: string) => Model | undefined;
  tools: ToolCatalog;
  listeners: ListenerRegistry;
  leases: TurnLeases;
  reporter: TurnReporter;
  clock: () => Date;
  /** Largest arguments of a model's tool call, in UTF-8 bytes of JSON; a larger call is refused. */
  maxToolArgumentsBytes: number;
  /** Deepest arguments of a model's tool call, in levels of objects and arrays; a deeper call is refused. */
  maxToolArgumentsDepth: number;
  checkpoint?: CheckpointHook;
}

/** What a caller already holds of a turn it hands to the loop, so that the loop need not read it again. */
export interface KnownState {
  /** The turn as this process just committed it RUNNING. */
  turn?: TurnRecord;
  /** The agent as read in the same transaction. */
  agent?: Agent;
  /** The whole transcript (a new thread's: its first message). */
  transcript?: MessageRecord[];
  /** Just resumed by this process: the step's elicitations with their answers; none of its calls has run. */
  resumedWith?: ElicitationRecord[];
  /** A gateway's call gated before its turn started (callAtOnce), with this agent: not gated again. */
  gated?: { gate: Gate; agent: Agent };
}

/** The gate phase's outcome for the calls of one step (TurnLoop.#gate). */
export interface Gate {
  step: PendingStep;
  drafts: ElicitationDraft[];
  asked: Tool[];
}

/** A gateway's call about to start (TurnLoop.callAtOnce): its turn's ids, and what startTurn would be given. */
export interface CallStart {
  turnId: string;
  threadId: string;
  agentId: string;
  ownerId: string;
  message: string;
  call: ToolCall;
  now: string;
  /** The gateway agent, when the caller just read it; else it is read here. */
  agent?: Agent;
}

/**
 * What callAtOnce did: `ran`, recorded whole (the call's thread, its COMPLETED turn, the result its client gets);
 * `refused` as startTurn refuses; else `gated` (the start of its turn takes the gate over, KnownState.gated), or
 * `unknown` (no gateway or tool of that id, or a gate that threw: startTurn and its loop say what becomes of it).
 */
export type AtOnce =
  | { kind: 'ran'; thread: ThreadRecord; turn: TurnRecord; result: JsonObject }
  | { kind: 'refused'; refusal: StartRefusal }
  | { kind: 'gated'; gated: NonNullable<KnownState['gated']> }
  | { kind: 'unknown' };

/** Where a turn stopped: paused (with the elicitations this run created) or ended, or left to another process. */
export interface TurnStop {
  turn: TurnRecord;
  pausedWith: ElicitationRecord[] | null;
}

/** How a run of the loop ended: the turn stopped, or a fault (a throw) stopped the loop with the turn as it stood. */
export type LoopEnd = ({ kind: 'stopped' } & TurnStop) | { kind: 'faulted'; turn: TurnRecord; error: unknown };

/** What one step led to. */
type StepResult =
  /** Its calls ran, each answered by its TOOL message: the model is called again. */
  | { kind: 'ran' }
  /** A call asks: the turn is PAUSED with these new elicitations. */
  | { kind: 'paused'; turn: TurnRecord; elicitations: ElicitationRecord[] }
  /** The model's final answer: the turn ends COMPLETED with `text`; `answer`: not saved yet, it commits with the end. */
  | { kind: 'completed'; text: string; answer?: StepAnswer }
  /** The turn ends FAILED. */
  | { kind: 'failed'; error: string };

/** One run of a turn by this process: what it works with, and the turn as this run last wrote it. */
interface TurnRun {
  turn: TurnRecord;
  agent: Agent;
  /** null: a gateway's turn, whose one step its client chose. */
  model: Model | null;
  tools: Tool[];
  names: ToolNames;
  byId: Map<string, Tool>;
}

export class TurnLoop {
  readonly #store: LoopStore;
  readonly #reporter: TurnReporter;

  constructor(private readonly options: LoopOptions) {
    this.#store = options.store;
    this.#reporter = options.reporter;
  }

  #now(): string {
    return this.options.clock().toISOString();
  }

  /** The turn's writes, made under this process's lease. */
  #writer(turnId: string): TurnWriter {
    return this.#store.turnWriter({ turnId, lease: { owner: this.options.leases.owner } });
  }

  /** Runs the turn from its last persisted step until it stops; `known`: what the caller holds of it (KnownState). */
  async run(turnId: string, known: KnownState = {}): Promise<LoopEnd> {
    const turn = known.turn ?? (await this.#store.loadTurn(turnId))!;
    let run: TurnRun | undefined;
    try {
      const agent = known.agent ?? (await this.#store.getAgent(turn.agentId));
      // A recovered turn may have open calls: fail() gives each its TOOL message, so the thread stays usable.
      if (!agent) return stopped(await this.fail(turn, `The agent ${turn.agentId} no longer exists.`));
      // A gateway has no model: its client chose the call, saved with the turn's start.
      const model = isGateway(agent) ? null : this.options.models(agent.modelId);
      if (model === undefined)
        return stopped(await this.fail(turn, `The agent's model ${agent.modelId} is not configured.`));
      const tools = await this.options.tools.toolsFor(agent);
      run = { turn, agent, model, tools, names: new ToolNames(tools), byId: new Map(tools.map((t) => [t.id, t])) };

      // A resumed turn first runs the execute phase of its step.
      if (turn.step) await this.#executeStep(run, turn.step, known.resumedWith);

      let transcript = known.transcript;
      // Gated with the agent as it was then: a gating change committed since, before the start, gates it again.
      let gated = known.gated && sameJson(known.gated.agent, agent) ? known.gated.gate : undefined;
      for (;;) {
        const messages = transcript ?? (await this.#store.listThreadMessages(turn.threadId));
        const result = await this.#step(run, messages, gated);
        transcript = undefined;
        gated = undefined;
        switch (result.kind) {
          case 'ran':
            continue;
          case 'paused':
            return { kind: 'stopped', turn: result.turn, pausedWith: result.elicitations };
          case 'completed':
            return stopped(await this.#finish(turn.id, 'COMPLETED', { text: result.text, answer: result.answer }));
          case 'failed':
            return stopped(await this.#finish(turn.id, 'FAILED', { error: result.error }));
        }
      }
    } catch (error) {
      return { kind: 'faulted', turn: run?.turn ?? turn, error };
    }
  }

  /** Ends a turn FAILED; every open call still gets exactly one TOOL message, so the thread stays usable. */
  async fail(turn: TurnRecord, error: string): Promise<TurnRecord> {
    const store = this.#store;
    const open = openToolCalls(await store.listThreadMessages(turn.threadId), turn.id);
    const unfinished = new Set(await store.listUnfinishedToolCalls(turn.id));
    await this.#writer(turn.id).appendToolMessages({
      messages: open.map((call) =>
        unfinished.has(call.id)
          ? { toolCallId: call.id, text: toolText.interrupted(calledName(call)), decision: { kind: 'INTERRUPTED' } }
          : { toolCallId: call.id, text: toolText.failed(calledName(call), 'the turn stopped before it ran') },
      ),
      now: this.#now(),
    });
    return this.#finish(turn.id, 'FAILED', { error });
  }

  /**
   * One step from the transcript as stored: the open calls of a step a crash interrupted, or the model's next answer
   * with its calls gated and run.
   */
  async #step(run: TurnRun, transcript: MessageRecord[], gated?: Gate): Promise<StepResult> {
    const { turn, agent } = run;
    const open = openToolCalls(transcript, turn.id);
    // A step whose assistant message was saved but whose gate did not finish (a crash), or a gateway's call: gate it
    // now, unless `gated` (its gate, computed before the turn started).
    if (open.length > 0) return this.#gateAndRun(run, open, undefined, gated);
    const last = transcript.at(-1);
    // A gateway's call has its answer: the turn ends with it, as the client gets it (Reads.getToolResult).
    if (!run.model) return { kind: 'completed', text: last?.role === 'TOOL' ? (last.text ?? '') : '' };
    if (last?.role === 'ASSISTANT' && last.turnId === turn.id && last.toolCalls.length === 0) {
      // The final answer was saved, then the process died before the turn was marked COMPLETED: do not ask again.
      return { kind: 'completed', text: last.text ?? '' };
    }
    if (turn.iterations >= agent.maxIterations) {
      return { kind: 'failed', error: turnErrors.maxIterations(agent.maxIterations) };
    }
    let response;
    const modelStarted = performance.now();
    try {
      response = await run.model.generate({
        system: agent.systemPrompt,
        messages: toModelMessages(transcript, run.names),
        tools: run.tools.map((tool) => ({
          name: run.names.modelName(tool.id),
          description: tool.description,
          inputSchema: tool.inputSchema,
        })),
        onTextDelta: this.#reporter.modelText(turn, turn.iterations + 1),
      });
    } catch (error) {
      this.#reporter.modelCalled(turn, agent.modelId, 'error', modelStarted);
      await this.#writer(turn.id).setIterations({ iterations: turn.iterations + 1, now: this.#now() });
      return { kind: 'failed', error: turnErrors.model(errorMessage(error)) };
    }
    this.#reporter.modelCalled(turn, agent.modelId, 'ok', modelStarted);
    const calls = normaliseToolCalls(response.toolCalls, {
      names: run.names,
      tools: run.byId,
      usedIds: transcript.flatMap((m) => m.toolCalls.map((call) => call.id)),
      maxArgumentsBytes: this.options.maxToolArgumentsBytes,
      maxArgumentsDepth: this.options.maxToolArgumentsDepth,
    });
    const answerText = response.text === null ? null : toStorableText(response.text);
    await this.options.checkpoint?.('modelAnswered', { turnId: turn.id });
    // The answer and the iteration count commit together: a step is saved whole or not at all. A final answer
    // (no tool calls) commits with the end of the turn, one that asks with its pause (#gateAndRun): one commit,
    // and one wait for it, fewer per step.
    run.turn = { ...turn, iterations: turn.iterations + 1 };
    const assistant = { role: 'ASSISTANT' as const, text: answerText, toolCalls: calls, toolCallId: null };
    if (calls.length === 0) {
      return {
        kind: 'completed',
        text: answerText ?? '',
        answer: { message: assistant, iterations: run.turn.iterations },
      };
    }
    return this.#gateAndRun(run, calls, assistant);
  }

  /**
   * A gateway's call that may run before anything is written (docs/durability.md): a read-only tool the gate lets run
   * unasked (no remembered approval needed) runs now, and is recorded whole after it returns, in one commit; nothing
   * of it is written before, so a crash leaves no trace, and a read-only tool no effect to lose. Any other call is
   * gated here once, and its turn's start takes the gate over.
   */
  async callAtOnce(start: CallStart): Promise<AtOnce> {
    const agent = start.agent ?? (await this.#store.getAgent(start.agentId));
    if (!agent || !isGateway(agent)) return { kind: 'unknown' };
    const tools = await this.options.tools.toolsFor(agent);
    const byId = new Map(tools.map((t) => [t.id, t]));
    const tool = byId.get(start.call.toolId);
    if (!tool) return { kind: 'unknown' };
    // The turn as its start would write it, once the call is recorded.
    const turn = startedTurn(
      { id: start.turnId, threadId: start.threadId, agentId: agent.id, ownerId: start.ownerId },
      start.now,
    );
    const run: TurnRun = { turn, agent, model: null, tools, names: new ToolNames(tools), byId };
    let gate: Gate;
    try {
      gate = await this.#gate(run, [start.call]);
    } catch {
      // A listener that throws: the turn's start gates it again and, as for any turn, records it FAILED.
      return { kind: 'unknown' };
    }
    const [only] = gate.step.calls;
    if (!runsAtOnce(tool.annotations, only!.outcome)) return { kind: 'gated', gated: { gate, agent } };
    const call = start.call;
    const ran = await this.#execute(run, call, tool);
    const result = toStorableJson(ranCallResult(ran.result, ran.text, []) as unknown as JsonObject);
    await this.options.checkpoint?.('toolReturned', { turnId: turn.id, toolCallId: call.id, toolName: call.name });
    const recorded = await this.#store.recordCallRan({
      turnId: turn.id,
      newThreadId: turn.threadId,
      threadId: null,
      agentId: agent.id,
      ownerId: start.ownerId,
      message: start.message,
      now: start.now,
      finishedAt: this.#now(),
      lease: this.options.leases.next(),
      call,
      running: {
        toolId: call.toolId,
        arguments: call.arguments,
        toolDefinitionDigest: toolDefinitionDigest(tool),
        unasked: { agentId: agent.id },
      },
      text: ran.text,
      result,
    });
    if (!recorded.ok) return { kind: 'refused', refusal: recorded };
    // Told after the commit, in the order they happened, as for any other turn.
    this.#reporter.observe({ type: 'turnStarted', turn });
    this.#reporter.observe({ type: 'toolStarted', turn, toolCall: call });
    this.#reporter.observe({ type: 'toolFinished', turn, toolCall: call, outcome: ran.outcome, durationMs: ran.ms });
    this.#reporter.turn(recorded.turn);
    this.#reporter.observe({ type: 'turnEnded', turn: recorded.turn });
    return { kind: 'ran', thread: recorded.thread, turn: recorded.turn, result };
  }

  /**
   * Gate phase for the calls of one step, then (unless it pauses) the execute phase.
   * `unsaved`: the model's answer that asked for `calls`, not stored yet (a step saved before a crash has none). It
   * commits with the pause when a call asks, else before any call runs; if the gate throws, it is saved first, so that
   * fail() answers its calls. `gated`: the calls' gate, computed before the turn started (callAtOnce).
   */
  async #gateAndRun(run: TurnRun, calls: ToolCall[], unsaved?: ChatMessage, gated?: Gate): Promise<StepResult> {
    const { turn, agent } = run;
    const saveStep = async (): Promise<void> => {
      if (!unsaved) return;
      await this.#writer(turn.id).appendAssistantMessage({
        message: unsaved,
        iterations: turn.iterations,
        now: this.#now(),
      });
      await this.options.checkpoint?.('stepSaved', { turnId: turn.id });
      this.#reporter.turn(turn);
    };
    let gate = gated;
    try {
      gate ??= await this.#gate(run, calls);
    } catch (error) {
      await saveStep();
      throw error;
    }
    const { step, drafts, asked } = gate;
    if (drafts.length > 0) {
      const expiresAt = new Date(this.options.clock().getTime() + agent.pauseTtlSeconds * 1000).toISOString();
      const paused = await this.#writer(turn.id).pauseTurn({
        step,
        elicitations: drafts,
        text: pausedQuestion(asked),
        expiresAt,
        answer: unsaved && { message: unsaved, iterations: turn.iterations },
        now: this.#now(),
      });
      this.#reporter.elicitationsCreated(paused.elicitations);
      this.#reporter.turn(paused.turn);
      this.#reporter.observe({ type: 'turnPaused', turn: paused.turn, elicitations: paused.elicitations });
      return { kind: 'paused', turn: paused.turn, elicitations: paused.elicitations };
    }
    await saveStep();
    await this.#executeStep(run, step);
    return { kind: 'ran' };
  }

  /** Gate phase: each call's outcome (reject, veto, ask, or run), and the confirmation requests of those that ask. */
  async #gate(run: TurnRun, calls: ToolCall[]): Promise<Gate> {
    const { turn, agent } = run;
    const step: PendingStep = { version: PENDING_STEP_VERSION, calls: [] };
    const drafts: ElicitationDraft[] = [];
    const asked: Tool[] = [];
    for (const toolCall of calls) {
      if (toolCall.refusal) {
        step.calls.push({ toolCall, outcome: { kind: 'rejected', text: toolCall.refusal } });
        continue;
      }
      const tool = run.byId.get(toolCall.toolId);
      if (!tool) {
        step.calls.push({ toolCall, outcome: { kind: 'rejected', text: toolText.unknownTool(calledName(toolCall)) } });
        continue;
      }
      const site = { agent, threadId: turn.threadId, turnId: turn.id };
      const verdict = await preExecute(this.options.listeners, site, tool, toolCall);
      if (verdict.kind === 'vetoed') {
        const byRule = refusedByRule(agent, tool, toolCall, verdict.reason);
        step.calls.push({ toolCall, outcome: { kind: 'vetoed', reason: verdict.reason, ...(byRule && { byRule }) } });
        continue;
      }
      if (verdict.kind === 'run') {
        step.calls.push({ toolCall, outcome: { kind: 'run' } });
        continue;
      }
      // Who may answer is decided now and kept with the request: a later change of the policy applies to later ones.
      const approval = approvalAt(approversFor(agent, tool.id, toolCall.arguments), this.#now());
      // A call that would ask runs unasked when the user remembered an approval of this tool, as defined now, given
      // under the same approvers policy.
      const hash = definitionHash(tool);
      const grant = verdict.grantable
        ? await this.#coveringGrant(turn, agent, tool, hash, approversKey(approval))
        : null;
      if (grant) {
        step.calls.push({ toolCall, outcome: { kind: 'run', grantId: grant.id } });
        continue;
      }
      const elicitationId = newId('elc');
      step.calls.push({ toolCall, outcome: { kind: 'confirm', elicitationId } });
      drafts.push({
        id: elicitationId,
        toolCallId: toolCall.id,
        ...(approval && { approval }),
        request: verdict.request,
        toolCall: {
          name: toolCall.name,
          toolId: toolCall.toolId,
          arguments: toolCall.arguments,
          annotations: tool.annotations,
          definitionHash: hash,
          toolDefinitionDigest: toolDefinitionDigest(tool),
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
  async #coveringGrant(turn: TurnRecord, agent: Agent, tool: Tool, hash: string, approvers: string | null) {
    const candidates = await this.#store.listGrantCandidates(turn.ownerId, agent.id, tool.id);
    if (candidates.length === 0) return null;
    const call = { ownerId: turn.ownerId, agentId: agent.id, threadId: turn.threadId, toolId: tool.id };
    return coveringGrant(candidates, { ...call, definitionHash: hash, approvers }, this.#now());
  }

  /**
   * Execute phase: the step's calls in their original order, each answered by exactly one TOOL message.
   * `resumedWith`: the step was just resumed by this process, with these elicitations: none of its calls ran yet.
   */
  async #executeStep(run: TurnRun, step: PendingStep, resumedWith?: ElicitationRecord[]): Promise<void> {
    const { turn, agent } = run;
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
      const say = (text: string, decision?: ToolMessageDecision) =>
        this.#answerCall(turn.id, toolCall.id, text, decision);
      const tool = run.byId.get(toolCall.toolId);
      const refusal = (reason: string, byRule: boolean, args: JsonObject, elicitationId: string | null) =>
        ({
          kind: byRule ? 'REFUSED' : 'VETOED',
          toolId: toolCall.toolId,
          arguments: args,
          elicitationId,
          toolDefinitionDigest: tool ? toolDefinitionDigest(tool) : null,
          reason,
        }) as const;
      if (outcome.kind === 'vetoed') {
        const decision = refusal(outcome.reason, outcome.byRule === true, toolCall.arguments, null);
        await say(toolText.denied(calledName(toolCall), outcome.reason), decision);
        continue;
      }
      if (outcome.kind === 'rejected') {
        await say(outcome.text);
        continue;
      }
      if (outcome.kind === 'run') {
        await this.#runTool(run, toolCall, tool, { grantId: outcome.grantId, unasked: true });
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
        await this.#runTool(run, toolCall, tool, { instructions });
        continue;
      }
      // Edited, then accepted: the user's arguments run. They pass the listeners again, so an edit cannot slip past a
      // policy: a veto still wins; a confirmation asked for counts as given, for exactly these arguments.
      const edited: ToolCall = { ...toolCall, arguments: answer.arguments };
      if (tool && !startedBefore.has(toolCall.id)) {
        const site = { agent, threadId: turn.threadId, turnId: turn.id };
        const verdict = await preExecute(this.options.listeners, site, tool, edited, { confirmed: true });
        if (verdict.kind === 'vetoed') {
          const byRule = refusedByRule(agent, tool, edited, verdict.reason);
          const decision = refusal(verdict.reason, byRule, edited.arguments, outcome.elicitationId);
          await say(toolText.denied(calledName(toolCall), verdict.reason), decision);
          continue;
        }
      }
      await this.#runTool(run, edited, tool, { instructions, edited: true });
    }
  }

  /**
   * At most once: journaled as started (committed) before it runs; a call started before is never run again.
   * `how`: the instructions of the ACCEPT that allowed it; `edited`: it runs with the user's arguments; `grantId`: a
   * remembered approval let it run unasked (recorded with it, and checked again as it starts); `unasked`: no request
   * was made for it (its RAN record then reads none).
   */
  async #runTool(
    run: TurnRun,
    toolCall: ToolCall,
    tool: Tool | undefined,
    how: { instructions?: string | null; edited?: boolean; grantId?: string; unasked?: boolean } = {},
  ): Promise<void> {
    const { turn } = run;
    const writer = this.#writer(turn.id);
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
      started = await writer.markToolStarted({
        toolCallId: toolCall.id,
        grantId: how.grantId,
        now: this.#now(),
        running: {
          toolId: toolCall.toolId,
          arguments: toolCall.arguments,
          toolDefinitionDigest: toolDefinitionDigest(tool),
          ...(how.unasked && { unasked: { agentId: turn.agentId } }),
        },
      });
    } catch (error) {
      if (error instanceof AcceptanceUnverifiedError) {
        // The record that allowed it is not what was signed, or allows other arguments: it does not run.
        this.#reporter.observe({ type: 'toolRefused', turn, toolCall, problem: error.message });
        await this.#answerCall(turn.id, toolCall.id, toolText.acceptanceUnverified(calledName(toolCall)));
        return;
      }
      if (!(error instanceof GrantLapsedError)) throw error;
      // Revoked (or expired) between the gate and now: it does not run; the model may call it again, which asks.
      await this.#answerCall(turn.id, toolCall.id, toolText.grantLapsed(calledName(toolCall)));
      return;
    }
    if (!started) {
      await writer.finishTool({
        message: { toolCallId: toolCall.id, text: toolText.interrupted(calledName(toolCall)) },
        interrupted: true,
        now: this.#now(),
      });
      this.#reporter.changed(turn);
      this.#reporter.observe({ type: 'toolFinished', turn, toolCall, outcome: 'interrupted', durationMs: 0 });
      return;
    }
    this.#reporter.observe({ type: 'toolStarted', turn, toolCall, grantId: how.grantId, edited: how.edited });
    const { result, outcome, ms: durationMs, ...ran } = await this.#execute(run, toolCall, tool);
    let { text } = ran;
    await this.options.checkpoint?.('toolReturned', {
      turnId: turn.id,
      toolCallId: toolCall.id,
      toolName: toolCall.name,
    });
    const notes = [
      ...(how.edited ? [toolText.edited(calledName(toolCall), toolCall.arguments)] : []),
      ...(how.instructions ? [toolText.acceptedInstructions(calledName(toolCall), how.instructions)] : []),
    ];
    // The client of a gateway gets the tool's own result (an MCP server's blocks), kept with the journal.
    const callResult = run.model ? undefined : ranCallResult(result, text, notes.map(toStorableText));
    if (how.edited) text = `${notes[0]}\n\n${text}`;
    if (how.instructions) text = `${text}\n\n${notes.at(-1)}`;
    await writer.finishTool({
      message: { toolCallId: toolCall.id, text },
      ...(callResult && { result: toStorableJson(callResult as unknown as JsonObject) }),
      now: this.#now(),
    });
    this.#reporter.changed(turn);
    this.#reporter.observe({ type: 'toolFinished', turn, toolCall, outcome, durationMs });
  }

  /** Runs the tool: its result, the TOOL message's text (a failure worded as one), and how long it took. */
  async #execute(
    run: TurnRun,
    toolCall: ToolCall,
    tool: Tool,
  ): Promise<{ result: ToolResult; text: string; outcome: 'ok' | 'error'; ms: number }> {
    const { turn } = run;
    const started = performance.now();
    try {
      const result = await tool.execute(toolCall.arguments, {
        agentId: turn.agentId,
        threadId: turn.threadId,
        turnId: turn.id,
        toolCallId: toolCall.id,
      });
      const text = toStorableText(result.isError ? toolText.failed(calledName(toolCall), result.text) : result.text);
      return { result, text, outcome: result.isError ? 'error' : 'ok', ms: performance.now() - started };
    } catch (error) {
      const text = toStorableText(toolText.failed(calledName(toolCall), errorMessage(error)));
      return { result: { text, isError: true }, text, outcome: 'error', ms: performance.now() - started };
    }
  }

  /**
   * The TOOL message of a call that does not run (denied, declined, rejected, …), published as it is written:
   * turnUpdated follows a step call by call.
   */
  async #answerCall(turnId: string, toolCallId: string, text: string, decision?: ToolMessageDecision): Promise<void> {
    const message = { toolCallId, text, ...(decision && { decision }) };
    await this.#writer(turnId).appendToolMessages({ messages: [message], now: this.#now() });
    await this.#reporter.latest(turnId);
  }

  async #finish(
    turnId: string,
    status: 'COMPLETED' | 'FAILED',
    fields: { text?: string | null; error?: string | null; answer?: StepAnswer },
  ): Promise<TurnRecord> {
    const turn = await this.#writer(turnId).finishTurn({ status, ...fields, now: this.#now() });
    this.#reporter.turn(turn);
    this.#reporter.observe({ type: 'turnEnded', turn });
    return turn;
  }
}

/** Whether a veto is the gating rules' own (an argument rule's DENY), not another listener's: the same reason. */
function refusedByRule(agent: Agent, tool: Tool, call: ToolCall, reason: string): boolean {
  const decision = gateDecision(agent, tool, call.arguments);
  return decision.action === 'deny' && decision.reason === reason;
}

function stopped(turn: TurnRecord): LoopEnd {
  return { kind: 'stopped', turn, pausedWith: null };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
