// Crash tests of the MCP gateway's tasks: a gateway call made as a task is its turn, so it survives a SIGKILL of the
// server like any turn. An MCP client (the SDK's, over HTTP) calls the fixture's `append` through its gateway; the
// process is killed while the call waits, or while its tool runs; a new process starts on the same database and a
// new MCP session reads the task by its id. The journal tool's runs file counts the runs across processes.
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/agent/runner.js';
import { dataOf, RESOLVE } from '../support/harness.js';
import { connectClient } from '../mcp/support.js';
import { readRuns, runsOf, startFixture, waitFor, type ServerProcess } from './processes.js';
import { gatewayCrashScene } from './gateway-scene.js';

const PENDING = `query { pendingElicitations { edges { node { id toolCall { arguments } } } } }`;
const INTERRUPTED = 'Execution of append was interrupted; its outcome is unknown.';

const scene = gatewayCrashScene('toolgate-mcp-crash-');

/** A new MCP session on the server's gateway (the fixture has no auth section: the local user). */
async function mcpClient(server: ServerProcess): Promise<Client> {
  const { client } = await connectClient(new URL('/mcp/gateway', server.url));
  return scene.track(client);
}

/** `append <line>` through the gateway as a task: its task id. */
async function appendAsTask(client: Client, line: string): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'append', arguments: { line }, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

function taskReaching(client: Client, taskId: string, status: Task['status']): Promise<Task> {
  return waitFor(`task ${taskId} to be ${status}`, async () => {
    const task = await client.experimental.tasks.getTask(taskId);
    return task.status === status ? task : null;
  });
}

async function onlyPendingId(server: ServerProcess, line: string): Promise<string> {
  const pending = dataOf(await server.gql(PENDING)).pendingElicitations.edges.map((e: any) => e.node);
  expect(pending.map((e: any) => e.toolCall.arguments)).toEqual([{ line }]);
  return pending[0].id;
}

/** A task that waits on `server`, for `append <line>`: its task id and its confirmation's id. */
async function waitingTask(server: ServerProcess, line: string): Promise<{ taskId: string; elicitationId: string }> {
  const client = await mcpClient(server);
  const taskId = await appendAsTask(client, line);
  await taskReaching(client, taskId, 'input_required');
  return { taskId, elicitationId: await onlyPendingId(server, line) };
}

/** An answer whose HTTP request dies with the process (it waits for the run the process is killed in). */
function acceptDuringCrash(server: ServerProcess, elicitationId: string) {
  return server.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }).then(
    () => 'answered' as const,
    () => 'connection lost' as const,
  );
}

/** Which process started and ended the journal tool's runs for `line`. */
function runsIn(line: string): string[] {
  return readRuns(scene.base.runsFile)
    .filter((run) => run.kind !== 'crash' && run.line === line)
    .map((run) => `${run.kind} ${run.pid}`);
}

describe('SIGKILL while a gateway call waits as a task', { timeout: 180_000 }, () => {
  it('after the restart the task still waits; answered in GraphQL, a new MCP session gets its result; the tool ran once', async () => {
    const first = await startFixture(scene.base);
    const { taskId, elicitationId } = await waitingTask(first, 'kappa');
    await first.kill();

    const second = await startFixture(scene.base);
    const client = await mcpClient(second);
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'input_required' });
    expect(await onlyPendingId(second, 'kappa')).toBe(elicitationId);
    expect(runsOf(scene.base.runsFile, 'kappa')).toBe(0);

    const answered = dataOf(await second.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }));
    expect(answered.resolveElicitation.userErrors).toEqual([]);
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'Appended kappa.' }],
      isError: false,
    });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'completed' });
    expect(runsIn('kappa')).toEqual([`start ${second.pid}`, `end ${second.pid}`]);
  });
});

describe("SIGKILL while a gateway task's tool runs", { timeout: 180_000 }, () => {
  it('killed inside the tool: after the restart the call is reported interrupted, and never runs again', async () => {
    const first = await startFixture({ ...scene.base, releaseFile: join(scene.dir, 'never') });
    const { taskId, elicitationId } = await waitingTask(first, 'lambda');
    const answered = acceptDuringCrash(first, elicitationId);
    await waitFor('the tool to start', () => runsOf(scene.base.runsFile, 'lambda') === 1);
    await first.kill();
    expect(await answered).toBe('connection lost');

    const second = await startFixture(scene.base);
    const client = await mcpClient(second);
    await taskReaching(client, taskId, 'completed');
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: INTERRUPTED }],
      isError: true,
    });
    expect(runsIn('lambda')).toEqual([`start ${first.pid}`]);
  });

  it('killed after the tool returned, before its result was saved: reported interrupted; the effect happened once', async () => {
    const first = await startFixture({ ...scene.base, crashAt: { point: 'toolReturned' } });
    const { taskId, elicitationId } = await waitingTask(first, 'mu');
    expect(await acceptDuringCrash(first, elicitationId)).toBe('connection lost');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startFixture(scene.base);
    const client = await mcpClient(second);
    await taskReaching(client, taskId, 'completed');
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: INTERRUPTED }],
      isError: true,
    });
    expect(runsIn('mu')).toEqual([`start ${first.pid}`, `end ${first.pid}`]);
  });

  it.each(['answerRecorded', 'toolStarting'] as Checkpoint[])(
    'killed at %s, before the tool started (nothing journaled): after the restart the call runs once, and the task has its result',
    async (point) => {
      const first = await startFixture({ ...scene.base, crashAt: { point } });
      const { taskId, elicitationId } = await waitingTask(first, 'nu');
      expect(await acceptDuringCrash(first, elicitationId)).toBe('connection lost');
      expect((await first.exited).signal).toBe('SIGKILL');

      const second = await startFixture(scene.base);
      const client = await mcpClient(second);
      await taskReaching(client, taskId, 'completed');
      expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toMatchObject({
        content: [{ type: 'text', text: 'Appended nu.' }],
        isError: false,
      });
      expect(runsIn('nu')).toEqual([`start ${second.pid}`, `end ${second.pid}`]);
    },
  );
});
