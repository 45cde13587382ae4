// Call a tool through a gateway: an MCP client's tools/call, on the same ledger as an agent's turn. A gateway is an
// agent without a model (src/domain/gateway.ts): the client chose the call, so its turn starts with that call as its
// one step, which passes the same gate (listeners, modes, rules, remembered approvals), may pause for an answer, runs
// at most once, and ends with the call's result.
import { gatewayCallText } from '../domain/gate/messages.js';
import { normaliseToolCalls } from '../domain/gate/tool-calls.js';
import { ToolNames } from '../domain/gate/tool-names.js';
import { isGateway, unranCallResult, withReceiptMeta, type CallResult } from '../domain/gateway.js';
import { idempotencyKeyProblem } from '../domain/idempotency.js';
import { isCursor } from '../domain/pagination.js';
import type { NotFound, StartRefusal } from '../domain/refusals.js';
import { isFinalTurn } from '../domain/expiry.js';
import type { Agent, ElicitationRecord, JsonObject, TurnRecord } from '../domain/records.js';
import type { TextProblem } from '../domain/text-problem.js';
import { toStorableText } from '../domain/text.js';
import type { Tool } from '../tools/tool.js';
import type { AppDeps } from './deps.js';
import type { Outcome } from './outcome.js';
import { pageSize, type PageRequest } from './reads.js';
import type { Viewer } from './viewer.js';

export type { CallResult };

export interface CallToolInput {
  /** The gateway agent. */
  agentId: string;
  /** The tool's name as listGatewayTools gives it. */
  name: string;
  arguments: JsonObject;
  /** The client's name for this call (`_meta` IDEMPOTENCY_META_KEY): sent again, it gets this call back. */
  idempotencyKey?: string | null;
  /** The client's own name (MCP clientInfo), shown with the call. */
  clientName?: string | null;
  /**
   * Return at once with the call RUNNING, and run it in the background (an MCP task): its result is read later by
   * its turn id, by this client or another, from this instance or another.
   */
  background?: boolean;
}

export type CallToolRefusal =
  /** No gateway agent with this id. */
  | (NotFound<'agent'> & { field: 'agentId' })
  /** The gateway has no tool of this name. */
  | (NotFound<'tool'> & { field: 'name' })
  | ({ code: 'INVALID_INPUT'; field: 'idempotencyKey' } & TextProblem)
  /** The key was used before for another call. */
  | (Extract<StartRefusal, { code: 'IDEMPOTENCY_KEY_REUSED' }> & { field: 'idempotencyKey' });

/** Where a call stands. */
export interface GatewayCall {
  /** The call's turn; its id names the call (a task id, the answer to wait for). */
  turn: TurnRecord;
  /** PAUSED: the confirmation requests it waits on. */
  waitingOn: ElicitationRecord[];
  /** Set once the turn stopped: what the client gets. */
  result: CallResult | null;
}

export type CallToolOutcome = Outcome<{ call: GatewayCall }, CallToolRefusal>;

/**
 * Starts the call (or finds the one its key names) and runs it until it stops: a result, or a pause. In the
 * background, returns the call as it is once started (RUNNING), or as it is now when its key named an earlier call.
 */
export async function callTool(app: AppDeps, viewer: Viewer, input: CallToolInput): Promise<CallToolOutcome> {
  const key = input.idempotencyKey ?? undefined;
  if (key !== undefined) {
    const keyProblem = idempotencyKeyProblem(key);
    if (keyProblem) return { ok: false, code: 'INVALID_INPUT', field: 'idempotencyKey', ...keyProblem };
  }
  const gateway = await gatewayTools(app, input.agentId);
  if (!gateway) return { ok: false, code: 'NOT_FOUND', of: 'agent', field: 'agentId' };
  const { names, tools } = gateway;
  if (names.toolId(input.name) === undefined) return { ok: false, code: 'NOT_FOUND', of: 'tool', field: 'name' };
  // The client's call as a model's would be kept: its id ours, its arguments within the size and depth limits (a call
  // over one is refused by the gate, and the client reads why).
  const [call] = normaliseToolCalls([{ id: '', name: input.name, arguments: input.arguments }], {
    names,
    tools: new Map(tools.map((tool) => [tool.id, tool])),
    usedIds: [],
    maxArgumentsBytes: app.limits.maxToolArgumentsBytes,
    maxArgumentsDepth: app.limits.maxToolArgumentsDepth,
  });
  const started = await app.runner.startTurn({
    agentId: input.agentId,
    agent: gateway.agent,
    ownerId: viewer.id,
    threadId: null,
    message: gatewayCallText(input.clientName ? toStorableText(input.clientName) : null, input.name),
    background: input.background === true,
    ...(key !== undefined && { idempotencyKey: key }),
    call: call!,
  });
  if (!started.ok) {
    if (started.code === 'IDEMPOTENCY_KEY_REUSED') return { ...started, field: 'idempotencyKey' };
    // The agent went, or is no longer a gateway, since the read above.
    if (started.code === 'NOT_FOUND' && started.of === 'agent') return { ...started, field: 'agentId' };
    // A call starts a new thread, never busy or missing, and it is a call, never a message to a gateway.
    throw new Error(`a gateway's call was refused as only a message to a thread can be: ${started.code}`);
  }
  // Ran at once: its result as just recorded, with no receipt to add (it ran unasked).
  if (started.result)
    return { ok: true, call: { turn: started.turn, waitingOn: [], result: started.result as unknown as CallResult } };
  return { ok: true, call: await callOf(app, started.turn, started.pausedWith) };
}

/**
 * The call of this turn as it stands now; null when the viewer has no such gateway call (with `agentId`: of that
 * gateway).
 */
export async function gatewayCall(
  app: AppDeps,
  viewer: Viewer,
  turnId: string,
  agentId?: string,
): Promise<GatewayCall | null> {
  const turn = await app.store.getTurn(turnId, viewer.id);
  if (!turn || (agentId !== undefined && turn.agentId !== agentId)) return null;
  const agent = await app.store.getAgent(turn.agentId);
  if (!agent || !isGateway(agent)) return null;
  return callOf(app, turn, null);
}

/** A call as a list shows it: where it stands, without its result (read the one call for that). */
export type GatewayCallStatus = Omit<GatewayCall, 'result'>;

export type ListGatewayCallsOutcome = Outcome<
  { calls: GatewayCallStatus[]; hasNextPage: boolean; endCursor: string | null },
  /** Not a cursor of this list. */
  { code: 'INVALID_INPUT'; field: 'after' }
>;

/** The viewer's calls through one gateway, newest first: one thread per call. 50 by default, at most 100. */
export async function listGatewayCalls(
  app: AppDeps,
  viewer: Viewer,
  request: PageRequest & { agentId: string },
): Promise<ListGatewayCallsOutcome> {
  if (request.after != null && !isCursor(request.after)) return { ok: false, code: 'INVALID_INPUT', field: 'after' };
  const threads = await app.store.listThreads(
    viewer.id,
    request.agentId,
    pageSize(request.first, 50, 100),
    request.after ?? null,
    true,
  );
  const turns = await app.store.listTurnsOfThreads(threads.items.map((thread) => thread.id));
  const paused = turns.filter((turn) => turn.status === 'PAUSED').map((turn) => turn.id);
  const pending = paused.length > 0 ? await app.store.listElicitationsOfTurns(paused) : [];
  const calls = threads.items.flatMap((thread) =>
    turns
      .filter((turn) => turn.threadId === thread.id)
      .map((turn) => ({
        turn,
        waitingOn: pending.filter((e) => e.turnId === turn.id && e.status === 'PENDING'),
      })),
  );
  return { ok: true, calls, hasNextPage: threads.hasNextPage, endCursor: threads.endCursor };
}

/**
 * Waits until the call's turn stops (its result is known), on this instance or any other sharing the database and
 * pub/sub; resolves null when `signal` aborts first, or when the viewer has no such call. `onWait` is called every
 * `tickMs` while it waits (the MCP entrance sends progress notifications from it); at each tick the turn is read
 * again too, so that a change whose event was lost (a pub/sub reconnect) is seen within a tick.
 */
export async function awaitCallResult(
  app: AppDeps,
  viewer: Viewer,
  turnId: string,
  options: { signal?: AbortSignal; tickMs?: number; onWait?: (waitedMs: number) => void } = {},
): Promise<GatewayCall | null> {
  const { signal, onWait } = options;
  const tickMs = options.tickMs ?? 5_000;
  if (signal?.aborted) return null;
  // Listening first, then reading: a change committed in between is in the subscription.
  const changes = app.pubsub.subscribe('turn', turnId);
  const waitStarted = Date.now();
  let aborted = false;
  const abort = () => {
    aborted = true;
    void changes.return();
  };
  signal?.addEventListener('abort', abort, { once: true });
  try {
    await changes.listening;
    for (let read = true; ;) {
      if (read) {
        const call = await gatewayCall(app, viewer, turnId);
        if (!call || call.result || aborted) return aborted ? null : call;
      }
      // The next change, or the tick, whichever comes first.
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((resolve) => (timer = setTimeout(() => resolve('tick'), tickMs)));
      const next = await Promise.race([changes.next(), tick]);
      clearTimeout(timer);
      if (aborted) return null;
      if (next === 'tick') onWait?.(Date.now() - waitStarted);
      else if (next.done) return null;
      // A change of a turn still under way (running, or paused again) holds no result: the call is read again once
      // it stopped, or at the tick.
      read = next === 'tick' || isFinalTurn(next.value);
    }
  } finally {
    signal?.removeEventListener('abort', abort);
    void changes.return();
  }
}

/** A tool as a gateway lists it to MCP clients. */
export interface GatewayTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations: JsonObject;
}

/** The gateway's tools as their sources list them now; null when there is no gateway agent with this id. */
export async function listGatewayTools(app: AppDeps, agentId: string): Promise<GatewayTool[] | null> {
  const gateway = await gatewayTools(app, agentId);
  if (!gateway) return null;
  return gateway.tools.map((tool) => ({
    // The names an agent's model sees: unique among the gateway's tools, valid MCP tool names.
    name: gateway.names.modelName(tool.id),
    ...(tool.label !== tool.name && { title: tool.label }),
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema && { outputSchema: tool.outputSchema }),
    annotations: { ...tool.annotations },
  }));
}

/** The ids of the agents that are gateways, in the config's order: /mcp serves the first. */
export async function gatewayAgentIds(app: AppDeps): Promise<string[]> {
  return (await app.store.listAgents()).filter(isGateway).map((agent) => agent.id);
}

async function gatewayTools(
  app: AppDeps,
  agentId: string,
): Promise<{ agent: Agent; tools: Tool[]; names: ToolNames } | null> {
  const agent = await app.store.getAgent(agentId);
  if (!agent || !isGateway(agent)) return null;
  const tools = await app.tools.toolsFor(agent);
  return { agent, tools, names: new ToolNames(tools) };
}

/**
 * A ran call's result with the signed ACCEPTED record that let it run (docs/receipts.md): read, like
 * `Elicitation.receipt`, from the chain, where it was appended with the answer. A call that ran unasked (not gated, or
 * under a remembered approval) has none, and gets its result as it was.
 */
async function withReceipt(app: AppDeps, turnId: string, callId: string, result: CallResult): Promise<CallResult> {
  const accepted = (await app.store.listAcceptedDecisions([turnId])).filter((d) => d.toolCallId === callId).at(-1);
  return accepted ? withReceiptMeta(result, accepted as unknown as JsonObject) : result;
}

/** A gateway's turn as its client sees it: waiting on its requests, running, or stopped with a result. */
async function callOf(app: AppDeps, turn: TurnRecord, pausedWith: ElicitationRecord[] | null): Promise<GatewayCall> {
  if (turn.status === 'PAUSED') {
    const waitingOn =
      pausedWith ?? (await app.store.listTurnElicitations(turn.id)).filter((e) => e.status === 'PENDING');
    return { turn, waitingOn, result: null };
  }
  if (!isFinalTurn(turn)) return { turn, waitingOn: [], result: null };
  const messages = await app.store.listTurnMessages(turn.id);
  const callId = messages.find((m) => m.role === 'ASSISTANT' && m.toolCalls.length > 0)?.toolCalls[0]?.id;
  const kept = callId ? await app.store.getToolResult(turn.id, callId) : null;
  if (kept)
    return { turn, waitingOn: [], result: await withReceipt(app, turn.id, callId!, kept as unknown as CallResult) };
  // It did not run to a result of its own: the client reads what an agent's model would.
  const answer = messages.find((m) => m.role === 'TOOL' && m.toolCallId === callId)?.text;
  return { turn, waitingOn: [], result: unranCallResult(answer ?? turn.error ?? turn.text ?? turn.status) };
}
