// MCP tasks through the gateway, with the SDK's Client over real HTTP: a tools/call sent with `task` is its call's
// turn, started in the background; it waits (input_required, naming its confirmation), is answered through GraphQL,
// and tasks/result gives the call's result, the tool having run once. The task outlives the client's session and the
// server; it is listed, cancelled while it waits (the tool never runs), and belongs to its user alone.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, startHarness, type Harness } from '../support/harness.js';
import { CountingToolSource } from '../support/tools.js';
import {
  ALICE_TOKEN,
  bearer,
  BOB_TOKEN,
  connectClient,
  elicitation,
  GATEWAY_ID,
  gatewayConfig,
  mcpUrl,
  pendingElicitations,
  countingTools,
  answerAsAlice,
  onlyPending,
} from './support.js';

const KEY_META = 'dev.toolgate/idempotency-key';
const POLL_MS = 50;

/** The gateway's tools: `look` reads, `drop` destroys (asks first), `wait` reads and runs until released. */
function taskTools(): { tools: CountingToolSource; release: () => void; started: Promise<void> } {
  let release!: () => void;
  let markStarted!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const tools = countingTools([
    {
      name: 'wait',
      annotations: { title: 'Wait', readOnlyHint: true },
      run: async () => {
        markStarted();
        await released;
        return 'waited';
      },
    },
  ]);
  return { tools, release, started };
}

async function startTaskGateway(database?: string, tools = taskTools().tools): Promise<Harness> {
  return startHarness({
    config: gatewayConfig(),
    toolSources: [tools],
    mcpTaskPollIntervalMs: POLL_MS,
    ...(database !== undefined && { database }),
  });
}

/** tools/call with `task`: the CreateTaskResult's task. */
async function callAsTask(client: Client, params: CallToolRequest['params'], ttl = 60_000): Promise<Task> {
  const created = await client.request(
    { method: 'tools/call', params: { ...params, task: { ttl } } },
    CreateTaskResultSchema,
  );
  return created.task;
}

/** Polls tasks/get until the task's status is `status`. */
async function taskReaching(client: Client, taskId: string, status: Task['status']): Promise<Task> {
  for (let tries = 0; ; tries++) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status === status || tries > 400) return task;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const resultOf = (client: Client, taskId: string) =>
  client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);

async function errorOf(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('MCP tasks through the gateway', () => {
  let h: Harness;
  let tools: CountingToolSource;
  let releaseWait: () => void;
  let waitStarted: Promise<void>;
  beforeAll(async () => {
    const made = taskTools();
    ({ tools, release: releaseWait, started: waitStarted } = made);
    h = await startTaskGateway(undefined, tools);
  });
  afterAll(() => h?.close());

  const gateway = () => mcpUrl(h, `/mcp/${GATEWAY_ID}`);
  const answer = (elicitationId: string, action: 'ACCEPT' | 'DECLINE') => answerAsAlice(h, elicitationId, action);

  it('advertises tasks (list, cancel, tools/call) and every tool as optionally a task', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => [tool.name, tool.execution])).toEqual([
      ['look', { taskSupport: 'optional' }],
      ['drop', { taskSupport: 'optional' }],
      ['wait', { taskSupport: 'optional' }],
    ]);
    await client.close();
  });

  it('a destructive call as a task: working, input_required naming its confirmation; answered in GraphQL, tasks/result gives the result; the tool ran once', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const created = await callAsTask(client, { name: 'drop', arguments: { ids: [1, 2] } });
    expect(created).toMatchObject({ status: 'working', ttl: null, pollInterval: POLL_MS });
    expect(created.taskId).toMatch(/^trn_/);

    const waiting = await taskReaching(client, created.taskId, 'input_required');
    const pending = await onlyPending(h);
    expect(waiting).toMatchObject({
      taskId: created.taskId,
      status: 'input_required',
      statusMessage: `Waiting for confirmation ${pending.id}: ${pending.message}`,
      createdAt: created.createdAt,
      ttl: null,
    });
    expect(pending.toolCall).toEqual({ name: 'drop', arguments: { ids: [1, 2] } });
    expect(tools.count('drop')).toBe(before);

    expect((await answer(pending.id, 'ACCEPT')).userErrors).toEqual([]);
    expect(await resultOf(client, created.taskId)).toEqual({
      content: [{ type: 'text', text: 'dropped [1,2]' }],
      isError: false,
      _meta: {
        [RELATED_TASK_META_KEY]: { taskId: created.taskId },
        // The signed ACCEPTED record that let it run (docs/receipts.md), beside the SDK's own key.
        'dev.toolgate/receipt': expect.objectContaining({ kind: 'ACCEPTED', turnId: created.taskId }),
      },
    });
    expect(await client.experimental.tasks.getTask(created.taskId)).toMatchObject({ status: 'completed' });
    // Read again: the kept result; nothing runs again.
    expect(await resultOf(client, created.taskId)).toMatchObject({ content: [{ text: 'dropped [1,2]' }] });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it("the SDK's callToolStream: the task, its wait, and the result once answered (tasks/result waits for it)", async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    let answered: Promise<unknown> | null = null;
    const seen: string[] = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'drop', arguments: { ids: [3] } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') {
        expect(message.result).toMatchObject({ content: [{ type: 'text', text: 'dropped [3]' }], isError: false });
      }
      // Answered in GraphQL once the client saw the wait: the stream then waits in tasks/result.
      if (message.type === 'taskStatus' && message.task.status === 'input_required') {
        answered ??= onlyPending(h).then((pending) => answer(pending.id, 'ACCEPT'));
      }
      seen.push(message.type === 'taskStatus' ? message.task.status : message.type);
    }
    await answered;
    expect(seen[0]).toBe('taskCreated');
    expect(seen.slice(-2)).toEqual(['input_required', 'result']);
    expect(seen.slice(1, -2).every((status) => status === 'working')).toBe(true);
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it('a declined task completes with the reason as an error result; the tool does not run', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const { taskId } = await callAsTask(client, { name: 'drop', arguments: { ids: [4] } });
    await answer((await onlyPending(h)).id, 'DECLINE');
    expect(await resultOf(client, taskId)).toMatchObject({
      content: [{ type: 'text', text: 'User declined execution of drop.' }],
      isError: true,
    });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'completed' });
    expect(tools.count('drop')).toBe(before);
    await client.close();
  });

  it('a read-only call as a task runs in the background; its result is kept', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('look');
    const { taskId } = await callAsTask(client, { name: 'look', arguments: { q: 1 } });
    expect(await resultOf(client, taskId)).toMatchObject({
      content: [{ type: 'text', text: 'look ran with {"q":1}' }],
      isError: false,
    });
    expect(tools.count('look')).toBe(before + 1);
    await client.close();
  });

  it('the client goes away; a new session with the same token polls the task id and gets the result', async () => {
    const first = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const { taskId } = await callAsTask(first.client, { name: 'drop', arguments: { ids: [5] } });
    await taskReaching(first.client, taskId, 'input_required');
    await first.transport.terminateSession();
    await first.client.close();

    const second = await connectClient(gateway(), { token: ALICE_TOKEN });
    expect(second.transport.sessionId).not.toBe(first.transport.sessionId);
    expect(await second.client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'input_required' });
    await answer((await onlyPending(h)).id, 'ACCEPT');
    expect(await resultOf(second.client, taskId)).toMatchObject({
      content: [{ type: 'text', text: 'dropped [5]' }],
      isError: false,
    });
    expect(tools.count('drop')).toBe(before + 1);
    await second.client.close();
  });

  it("tasks/list: the user's calls on this gateway, newest first, with their status; another user sees none of them", async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const { taskId } = await callAsTask(client, { name: 'drop', arguments: { ids: [6] } });
    await taskReaching(client, taskId, 'input_required');
    const { tasks, nextCursor } = await client.experimental.tasks.listTasks();
    expect(nextCursor).toBeUndefined();
    expect(tasks[0]).toMatchObject({ taskId, status: 'input_required' });
    // Every call is listed, a task or not, each once; the earlier ones have stopped.
    expect(new Set(tasks.map((task) => task.taskId)).size).toBe(tasks.length);
    expect(tasks.slice(1).every((task) => task.status === 'completed')).toBe(true);
    expect(tasks.map((task) => task.createdAt)).toEqual(
      tasks
        .map((task) => task.createdAt)
        .sort()
        .reverse(),
    );

    const bob = await connectClient(gateway(), { token: BOB_TOKEN });
    expect((await bob.client.experimental.tasks.listTasks()).tasks).toEqual([]);
    const notFound = await errorOf(bob.client.experimental.tasks.getTask(taskId));
    expect(notFound.code).toBe(-32602);
    expect(notFound.message).toContain('Task not found');
    expect((await errorOf(bob.client.experimental.tasks.cancelTask(taskId))).code).toBe(-32602);
    expect((await errorOf(resultOf(bob.client, taskId))).code).toBe(-32602);
    await bob.client.close();

    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'input_required' });
    await answer((await onlyPending(h)).id, 'DECLINE');
    await taskReaching(client, taskId, 'completed');
    const invalid = await errorOf(client.experimental.tasks.listTasks('not-a-cursor'));
    expect(invalid.code).toBe(-32602);
    await client.close();
  });

  it('tasks/cancel of a waiting task: cancelled, its confirmation closed, and the tool never runs', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const { taskId } = await callAsTask(client, { name: 'drop', arguments: { ids: [7] } });
    await taskReaching(client, taskId, 'input_required');
    const pending = await onlyPending(h);

    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled', statusMessage: 'Cancelled before the tool ran.' });
    expect(await elicitation(h, ALICE_TOKEN, pending.id)).toMatchObject({ status: 'CANCELLED', resolvedBy: 'alice' });
    expect(await pendingElicitations(h, ALICE_TOKEN, 0)).toEqual([]);
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'cancelled' });
    expect(await resultOf(client, taskId)).toMatchObject({
      content: [{ type: 'text', text: 'Execution of drop was cancelled by the user.' }],
      isError: true,
    });

    // An answer that comes after it changes nothing.
    expect((await answer(pending.id, 'ACCEPT')).userErrors).toMatchObject([{ code: 'ALREADY_RESOLVED' }]);
    const again = await errorOf(client.experimental.tasks.cancelTask(taskId));
    expect(again.code).toBe(-32602);
    expect(again.message).toContain('Cannot cancel task in terminal status: cancelled');
    expect(tools.count('drop')).toBe(before);
    await client.close();
  });

  it('tasks/cancel of a task whose tool runs: refused, saying why; the call ends with its result', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const { taskId } = await callAsTask(client, { name: 'wait', arguments: {} });
    await waitStarted;
    const refused = await errorOf(client.experimental.tasks.cancelTask(taskId));
    expect(refused.code).toBe(-32600);
    expect(refused.message).toContain(
      `Failed to cancel task: task ${taskId} no longer waits for confirmation: its tool runs or is about to, and a running tool is not stopped`,
    );
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'working' });
    releaseWait();
    expect(await resultOf(client, taskId)).toMatchObject({ content: [{ type: 'text', text: 'waited' }] });
    expect(tools.count('wait')).toBe(1);
    await client.close();
  });

  it('the same idempotency key gets the same task back; nothing runs twice', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('look');
    const params = { name: 'look', arguments: {}, _meta: { [KEY_META]: 'look-task-1' } };
    const first = await callAsTask(client, params);
    await resultOf(client, first.taskId);
    const again = await callAsTask(client, params);
    expect(again).toMatchObject({ taskId: first.taskId, status: 'completed' });
    expect(tools.count('look')).toBe(before + 1);
    await client.close();
  });
});

describe('MCP tasks across a restart of the server', () => {
  it('a waiting task survives it: a new session on the restarted server polls it; answered, it gives the result', async () => {
    const { tools } = taskTools();
    const first = await startTaskGateway(undefined, tools);
    const before = await connectClient(mcpUrl(first, `/mcp/${GATEWAY_ID}`), { token: ALICE_TOKEN });
    const { taskId } = await callAsTask(before.client, { name: 'drop', arguments: { ids: [9] } });
    await taskReaching(before.client, taskId, 'input_required');
    await first.close();
    await before.client.close();

    const second = await startTaskGateway(first.database, tools);
    try {
      const { client } = await connectClient(mcpUrl(second, `/mcp/${GATEWAY_ID}`), { token: ALICE_TOKEN });
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'input_required' });
      const [pending] = await pendingElicitations(second, ALICE_TOKEN);
      const answered = dataOf(
        await second.gql(RESOLVE, { input: { elicitationId: pending.id, action: 'ACCEPT' } }, bearer(ALICE_TOKEN)),
      ).resolveElicitation;
      expect(answered.userErrors).toEqual([]);
      expect(await resultOf(client, taskId)).toMatchObject({ content: [{ type: 'text', text: 'dropped [9]' }] });
      expect(tools.count('drop')).toBe(1);
      await client.close();
    } finally {
      await second.close();
    }
  });
});

describe('tasks/list pages', () => {
  it('50 tasks a page, newest first, with a cursor to the next page', async () => {
    const h = await startTaskGateway();
    try {
      const { client } = await connectClient(mcpUrl(h, `/mcp/${GATEWAY_ID}`), { token: ALICE_TOKEN });
      const made: string[] = [];
      for (let i = 0; i < 51; i++) made.push((await callAsTask(client, { name: 'look', arguments: { i } })).taskId);
      const first = await client.experimental.tasks.listTasks();
      expect(first.tasks).toHaveLength(50);
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await client.experimental.tasks.listTasks(first.nextCursor);
      expect(second.nextCursor).toBeUndefined();
      expect([...first.tasks, ...second.tasks].map((task) => task.taskId)).toEqual(made.reverse());
      await client.close();
    } finally {
      await h.close();
    }
  });
});
