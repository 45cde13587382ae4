// MCP tasks (the SDK's experimental tasks) on the ledger: a tools/call sent with `task` starts the call in the
// background and answers with the task at once; the task is the call, its id the call's turn id. The TaskStore is
// bound to the session's viewer and gateway, never to the MCP session: after a restart, or on another instance, the
// client has a new session and its tasks are the same. Each status and result is read from the ledger when asked;
// nothing about a task is held in memory. What may be done with a call (start it, cancel it) is decided in src/app/.
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { ErrorCode, McpError, type CreateTaskResult, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { cancelGatewayCall, type CancelCallRefusal } from '../app/cancel-call.js';
import { callTool, gatewayCall, listGatewayCalls, type GatewayCallStatus } from '../app/call-tool.js';
import type { TurnStatus } from '../domain/records.js';
import { onDisk } from './on-disk.js';
import { callToolError, GatewayError, hidingFaults } from './refusals.js';
import { callToolInput, type GatewaySession, type ToolCallRequest } from './tool-call.js';

/** Milliseconds a client is asked to wait between two polls of a task; the SDK's tasks/result waits as long. */
export const DEFAULT_TASK_POLL_INTERVAL_MS = 1_000;

/**
 * A call's turn status as a task's. A call that stopped is completed whether its tool ran or not: its
 * CallToolResult's isError says how it went (declined, vetoed, expired, interrupted), and a client reads that result
 * (the SDK's client does not read the result of a failed task). A call cancelled before its tool ran is cancelled.
 */
const TASK_STATUS: Record<TurnStatus, Task['status']> = {
  RUNNING: 'working',
  PAUSED: 'input_required',
  COMPLETED: 'completed',
  FAILED: 'completed',
  EXPIRED: 'completed',
  CANCELLED: 'cancelled',
};

/** tools/call with `task`: the call starts in the background, and the client gets its task at once. */
export async function startGatewayTask(session: GatewaySession, request: ToolCallRequest): Promise<CreateTaskResult> {
  const outcome = await callTool(session.app, session.viewer, { ...callToolInput(session, request), background: true });
  if (!outcome.ok) throw callToolError(outcome, { name: request.params.name, agentId: session.agentId });
  // The requested ttl is met whatever it is: a call is kept as long as its turn, which is never deleted.
  return { task: taskOf(outcome.call, pollIntervalOf(session)) };
}

export function createTaskStore(session: GatewaySession): TaskStore {
  const { app, viewer, agentId } = session;
  const pollInterval = pollIntervalOf(session);
  const guarded = <T>(run: () => Promise<T>) => hidingFaults(run, session);
  const notMadeHere = (): never => {
    throw new Error('A gateway task is started by its tools/call, and its result is the call’s own');
  };
  return {
    createTask: notMadeHere,
    storeTaskResult: notMadeHere,
    getTask: (taskId) =>
      guarded(async () => {
        const call = await gatewayCall(app, viewer, taskId, agentId);
        return call && taskOf(call, pollInterval);
      }),
    getTaskResult: (taskId) =>
      guarded(async () => {
        const call = await gatewayCall(app, viewer, taskId, agentId);
        if (!call) throw new GatewayError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
        // The SDK asks only once the task is terminal, that is once the call stopped with its result.
        if (!call.result) throw new GatewayError(ErrorCode.InvalidRequest, `Task ${taskId} has no result yet`);
        return call.result as unknown as Result;
      }),
    updateTaskStatus: (taskId, status) =>
      guarded(async () => {
        // A task's status is its call's, read from the ledger: the one change a client may ask for is a cancel.
        if (status !== 'cancelled') return;
        const outcome = await onDisk(session, cancelGatewayCall(app, viewer, { agentId, turnId: taskId }));
        if (!outcome.ok) throw cancelRefused(taskId, outcome);
      }),
    listTasks: (cursor) =>
      guarded(async () => {
        const outcome = await listGatewayCalls(app, viewer, { agentId, after: cursor ?? null });
        // The SDK answers InvalidParams "Failed to list tasks: <this message>".
        if (!outcome.ok) throw new GatewayError(ErrorCode.InvalidParams, 'invalid cursor');
        const tasks = outcome.calls.map((call) => taskOf(call, pollInterval));
        return outcome.hasNextPage && outcome.endCursor ? { tasks, nextCursor: outcome.endCursor } : { tasks };
      }),
  };
}

/** A call as a task: its turn's id, status and times; kept as long as the turn (ttl null: no limit). */
export function taskOf(call: GatewayCallStatus, pollInterval: number): Task {
  const { turn, waitingOn } = call;
  const statusMessage =
    turn.status === 'PAUSED' && waitingOn.length > 0
      ? waitingOn.map((e) => `Waiting for confirmation ${e.id}: ${e.request.message}`).join('\n')
      : turn.status === 'CANCELLED'
        ? 'Cancelled before the tool ran.'
        : undefined;
  return {
    taskId: turn.id,
    status: TASK_STATUS[turn.status],
    ...(statusMessage !== undefined && { statusMessage }),
    createdAt: turn.createdAt,
    lastUpdatedAt: turn.updatedAt,
    ttl: null,
    pollInterval,
  };
}

function pollIntervalOf(session: GatewaySession): number {
  return session.taskPollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS;
}

/**
 * tasks/cancel refused. The SDK passes an McpError as it is (InvalidParams, the spec's code for an unknown task and
 * for one that ended), and answers any other error InvalidRequest "Failed to cancel task: <its message>".
 */
function cancelRefused(taskId: string, refusal: CancelCallRefusal): Error {
  if (refusal.code === 'NOT_FOUND') return new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
  if (refusal.status === 'RUNNING') {
    return new GatewayError(
      ErrorCode.InvalidRequest,
      `task ${taskId} no longer waits for confirmation: its tool runs or is about to, and a running tool is not ` +
        'stopped; tasks/result gives its result',
    );
  }
  return new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${TASK_STATUS[refusal.status]}`);
}
