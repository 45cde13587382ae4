// Call a tool through a gateway: an MCP client's tools/call, on the same ledger as an agent's turn. A gateway is an
// agent without a model (src/domain/gateway.ts): the client chose the call, so its turn starts with that call as its
// one step, which passes the same gate (listeners, modes, rules, remembered approvals), may pause for an answer, runs
// at most once, and ends with the call's result.
import type { ElicitationRecord, JsonObject, TurnRecord } from '../domain/records.js';
import type { AppDeps } from './deps.js';
import type { Outcome, TextProblem } from './outcome.js';
import type { Viewer } from './viewer.js';

export interface CallToolInput {
  /** The gateway agent. */
  agentId: string;
  /** The tool's name as listGatewayTools gives it. */
  name: string;
  arguments: JsonObject;
  /** The client's name for this call (`_meta` "dev.toolgate/idempotency-key"): sent again, it gets this call back. */
  idempotencyKey?: string | null;
  /** The client's own name (MCP clientInfo), shown with the call. */
  clientName?: string | null;
}

export type CallToolRefusal =
  /** No gateway agent with this id. */
  | { code: 'NOT_FOUND'; field: 'agentId' }
  /** The gateway has no tool of this name. */
  | { code: 'NOT_FOUND'; field: 'name' }
  | ({ code: 'INVALID_INPUT'; field: 'idempotencyKey' } & TextProblem)
  /** The key was used before for another call. */
  | { code: 'IDEMPOTENCY_KEY_REUSED'; field: 'idempotencyKey' };

/** A tool's result as MCP's CallToolResult has it. */
export interface CallResult {
  content: JsonObject[];
  structuredContent?: JsonObject;
  isError: boolean;
}

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

/** Starts the call (or finds the one its key names) and runs it until it stops: a result, or a pause. */
export async function callTool(app: AppDeps, viewer: Viewer, input: CallToolInput): Promise<CallToolOutcome> {
  void app;
  void viewer;
  void input;
  throw new Error('callTool: being built on branch gateway-core');
}

/** The call of this turn as it stands now; null when the viewer has no such gateway call. */
export async function gatewayCall(app: AppDeps, viewer: Viewer, turnId: string): Promise<GatewayCall | null> {
  void app;
  void viewer;
  void turnId;
  throw new Error('gatewayCall: being built on branch gateway-core');
}

/**
 * Waits until the call's turn stops waiting (its result is known), on this instance or any other sharing the
 * database and pub/sub; resolves null when `signal` aborts first. `onWait` is called every `tickMs` while it waits
 * (the MCP entrance sends progress notifications from it).
 */
export async function awaitCallResult(
  app: AppDeps,
  viewer: Viewer,
  turnId: string,
  options: { signal?: AbortSignal; tickMs?: number; onWait?: (waitedMs: number) => void } = {},
): Promise<GatewayCall | null> {
  void app;
  void viewer;
  void turnId;
  void options;
  throw new Error('awaitCallResult: being built on branch gateway-core');
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
  void app;
  void agentId;
  throw new Error('listGatewayTools: being built on branch gateway-core');
}

/** The ids of the agents that are gateways, in the config's order: /mcp serves the first. */
export async function gatewayAgentIds(app: AppDeps): Promise<string[]> {
  void app;
  throw new Error('gatewayAgentIds: being built on branch gateway-core');
}
