// toolgate end to end with real parts: the openai-compatible provider against a fake Chat Completions server,
// tools from a real MCP server process, a plugin loaded relative to the config file, over GraphQL on HTTP.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ElicitRequestFormParamsSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import { startFakeOpenAi, type FakeOpenAi, type RecordedRequest } from '../support/fake-openai.js';
import { dataOf, RESOLVE, START_TURN, startHarness, tempDir, type Harness } from '../support/harness.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url));
const API_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The tool message the model received for a call, from a recorded request body. */
function toolMessage(request: RecordedRequest | undefined, toolCallId: string): string | undefined {
  return request?.body.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === toolCallId)?.content;
}

describe('a real model protocol and real MCP tools, end to end', () => {
  let fake: FakeOpenAi;
  let h: Harness;
  const { dir, cleanup } = tempDir();

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    // A plugin next to the config file, named by a relative path.
    writeFileSync(
      join(dir, 'protect.mjs'),
      `export default {
      name: 'protect-notes',
      listeners: [{ priority: 100, onToolPreExecute(event) {
        if (event.toolCall.arguments.id === 'protected') event.setVeto('protected notes are read-only');
      } }],
    };\n`,
    );
    const file = join(dir, 'toolgate.json');
    writeFileSync(
      file,
      JSON.stringify({
        models: {
          main: {
            provider: 'openai-compatible',
            baseURL: fake.baseURL,
            model: 'fake-model',
            apiKey: 'env:TOOLGATE_TEST_OPENAI_KEY',
            maxRetries: 1,
            timeoutMs: 3000,
          },
          streamed: {
            provider: 'openai-compatible',
            baseURL: fake.baseURL,
            model: 'fake-streamed',
            stream: true,
            maxRetries: 0,
          },
        },
        toolSources: {
          notes: { type: 'mcp', command: process.execPath, args: [FIXTURE] },
          // A second server with the same tool names: the model must see distinct, API-valid names.
          'notes.mirror': { type: 'mcp', command: process.execPath, args: [FIXTURE] },
        },
        agents: [
          {
            id: 'notes',
            name: 'Notes',
            model: 'main',
            systemPrompt: 'You manage notes.',
            tools: ['notes:*'],
            requireToolConfirmation: true,
          },
          {
            id: 'both',
            name: 'Both',
            model: 'main',
            tools: ['notes:echo', 'notes.mirror:echo', 'notes:call_log', 'notes.mirror:call_log'],
          },
          { id: 'streamed', name: 'Streamed', model: 'streamed', tools: ['notes:*'], requireToolConfirmation: true },
        ],
        plugins: ['./protect.mjs'],
      }),
    );
    process.env.TOOLGATE_TEST_OPENAI_KEY = 'sk-test';
    const loaded = loadConfigFile(file);
    h = await startHarness({ config: loaded.config, configFile: loaded.file });
  });
  afterEach(() => {
    fake.reset();
    fake.fallback = { text: 'ok' };
  });
  afterAll(async () => {
    await h?.close();
    await fake.close();
    cleanup();
    delete process.env.TOOLGATE_TEST_OPENAI_KEY;
  });

  const start = async (agentId: string, message: string, threadId?: string) =>
    dataOf(await h.gql(START_TURN, { input: { agentId, message, threadId } })).startTurn;
  const resolve = async (elicitationId: string, action: string, content?: unknown) =>
    dataOf(await h.gql(RESOLVE, { input: { elicitationId, action, content } })).resolveElicitation;

  it('pauses before a destructive MCP tool with an mcpRequest that validates as MCP elicitation/create (form)', async () => {
    fake.reply({ toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'a' } }] });
    const started = await start('notes', 'delete note a');
    expect(started.turn.status).toBe('PAUSED');
    const [elicitation] = started.turn.pendingElicitations;
    expect(elicitation.toolCall).toMatchObject({
      name: 'delete_note',
      toolId: 'notes:delete_note',
      arguments: { id: 'a' },
      annotations: { readOnlyHint: false, destructiveHint: true },
    });
    const parsed = ElicitRequestFormParamsSchema.safeParse(elicitation.mcpRequest);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(elicitation.mcpRequest).toMatchObject({ mode: 'form', message: elicitation.message });
    expect(elicitation.message).toContain('Delete a note');
    // What reached the model: the system prompt, the key, and API-valid tool names.
    const request = fake.requests[0]!;
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(request.body.messages[0]).toEqual({ role: 'system', content: 'You manage notes.' });
    expect(request.body.tools.map((t: any) => t.function.name)).toEqual(
      expect.arrayContaining(['read_note', 'delete_note', 'echo']),
    );
    await resolve(elicitation.id, 'CANCEL');
  });

  it('feeds the decline text, with the instructions, back to the model', async () => {
    fake.reply(
      { toolCalls: [{ id: 'call_d1', name: 'delete_note', arguments: { id: 'b' } }] },
      { text: 'All right, I kept it.' },
    );
    const started = await start('notes', 'delete note b');
    const resolved = await resolve(started.turn.pendingElicitations[0].id, 'DECLINE', {
      instructions: 'keep b, it matters',
    });
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe('All right, I kept it.');
    expect(fake.requests).toHaveLength(2);
    expect(toolMessage(fake.requests[1], 'call_d1')).toBe('User declined execution of delete_note: keep b, it matters');
    // Nothing ran: the note is still there.
    fake.reply({ toolCalls: [{ id: 'call_r', name: 'read_note', arguments: { id: 'b' } }] }, { text: 'read' });
    await start('notes', 'read b');
    expect(toolMessage(fake.requests[3], 'call_r')).toBe('b: second note');
  });

  it('runs an accepted call once and feeds its output with the user instructions to the model', async () => {
    fake.reply(
      { toolCalls: [{ id: 'call_w', name: 'write_note', arguments: { id: 'c', text: 'third' } }] },
      { text: 'Written.' },
    );
    const started = await start('notes', 'write note c');
    expect(started.turn.status).toBe('PAUSED');
    const resolved = await resolve(started.turn.pendingElicitations[0].id, 'ACCEPT', {
      instructions: 'tell me when done',
    });
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(toolMessage(fake.requests[1], 'call_w')).toBe(
      'wrote c\n\nUser instructions for write_note: tell me when done',
    );
    fake.reply({ toolCalls: [{ id: 'call_log', name: 'call_log', arguments: {} }] }, { text: 'log' });
    await start('notes', 'show the call log');
    expect(
      JSON.parse(toolMessage(fake.requests[3], 'call_log')!).filter((name: string) => name === 'write_note'),
    ).toHaveLength(1);
  });

  it('feeds the veto of a plugin (loaded relative to the config file) to the model, without asking', async () => {
    fake.reply(
      { toolCalls: [{ id: 'call_v', name: 'delete_note', arguments: { id: 'protected' } }] },
      { text: 'I may not.' },
    );
    const started = await start('notes', 'delete the protected note');
    expect(started.turn.status).toBe('COMPLETED');
    expect(started.turn.pendingElicitations).toEqual([]);
    expect(toolMessage(fake.requests[1], 'call_v')).toBe(
      'Execution of delete_note was denied: protected notes are read-only',
    );
  });

  it('feeds failures to the model as tool messages: bad arguments (never sent to the server) and isError results', async () => {
    fake.reply(
      {
        toolCalls: [
          { id: 'call_bad', name: 'read_note', arguments: { id: 5 } },
          { id: 'call_fail', name: 'fail', arguments: {} },
        ],
      },
      { text: 'Both failed.' },
    );
    const started = await start('notes', 'read note 5 and fail');
    expect(started.turn.status).toBe('COMPLETED');
    expect(toolMessage(fake.requests[1], 'call_bad')).toBe(
      'Execution of read_note failed: invalid arguments: id must be string',
    );
    expect(toolMessage(fake.requests[1], 'call_fail')).toBe('Execution of fail failed: the disk is full');
  });

  it('refuses a call whose arguments are over 256 KiB (the default) without asking; the model reads why and gets its call back without them', async () => {
    const text = 'x'.repeat(300_000);
    fake.reply(
      { toolCalls: [{ id: 'call_huge', name: 'write_note', arguments: { id: 'h', text } }] },
      { text: 'Too big, sorry.' },
    );
    const started = await start('notes', 'write a huge note');
    expect(started.turn.status).toBe('COMPLETED');
    expect(started.turn.pendingElicitations).toEqual([]);
    expect(toolMessage(fake.requests[1], 'call_huge')).toBe(
      'Execution of write_note was refused: its arguments are 300020 bytes, over the limit of 262144 bytes.',
    );
    const assistant = fake.requests[1]!.body.messages.find((m: any) => m.tool_calls?.[0]?.id === 'call_huge');
    expect(assistant.tool_calls[0].function.arguments).toBe('{}');
    expect(JSON.stringify(fake.requests[1]!.body)).not.toContain(text);
  });

  it('sends API-valid, distinct names for same-named tools of two servers and maps each call back to its server', async () => {
    fake.reply(
      { toolCalls: [{ id: 'call_m', name: 'notes_mirror_echo', arguments: { text: 'to the mirror' } }] },
      { text: 'echoed' },
    );
    const started = await start('both', 'echo on the mirror');
    expect(started.turn.status).toBe('COMPLETED');
    const names = fake.requests[0]!.body.tools.map((t: any) => t.function.name) as string[];
    expect(names).toHaveLength(4);
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name).toMatch(API_NAME);
    expect(names).toContain('notes_mirror_echo');
    expect(toolMessage(fake.requests[1], 'call_m')).toBe('to the mirror');
    const messages = started.turn.messages;
    expect(messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length).toolCalls[0]).toMatchObject({
      name: 'echo',
      toolId: 'notes.mirror:echo',
    });
    // The mirror's server ran it; the other did not.
    fake.reply(
      {
        toolCalls: [
          { id: 'l1', name: 'notes_call_log', arguments: {} },
          { id: 'l2', name: 'notes_mirror_call_log', arguments: {} },
        ],
      },
      { text: 'logs' },
    );
    await start('both', 'logs');
    expect(JSON.parse(toolMessage(fake.requests[3], 'l1')!)).not.toContain('echo');
    expect(JSON.parse(toolMessage(fake.requests[3], 'l2')!)).toContain('echo');
  });

  it('ends the turn FAILED with a readable error when the model keeps failing, and the thread stays usable', async () => {
    fake.reply(
      { status: 500, error: 'upstream exploded', headers: { 'retry-after-ms': '5' } },
      { status: 500, error: 'upstream exploded', headers: { 'retry-after-ms': '5' } },
    );
    const failed = await start('notes', 'hello?');
    expect(failed.turn.status).toBe('FAILED');
    expect(failed.turn.error).toBe(
      `The model call failed: fake-model at ${fake.baseURL} answered HTTP 500: upstream exploded (after 2 attempts)`,
    );
    fake.reply({ text: 'Back again.' });
    const next = await start('notes', 'hello again', failed.thread.id);
    expect(next.turn.status).toBe('COMPLETED');
    expect(next.turn.text).toBe('Back again.');
    expect(
      fake.requests
        .at(-1)!
        .body.messages.filter((m: any) => m.role === 'user')
        .map((m: any) => m.content),
    ).toEqual(['hello?', 'hello again']);
  });

  it('retries a 429 and completes the turn', async () => {
    fake.reply(
      { status: 429, error: 'rate limited', headers: { 'retry-after-ms': '5' } },
      { text: 'after the rate limit' },
    );
    const started = await start('notes', 'hi');
    expect(started.turn).toMatchObject({ status: 'COMPLETED', text: 'after the rate limit' });
    expect(fake.requests).toHaveLength(2);
  });

  it('ends the turn FAILED when the model does not answer in time', async () => {
    fake.reply({ hang: true });
    const started = await start('notes', 'are you there?');
    expect(started.turn.status).toBe('FAILED');
    expect(started.turn.error).toBe(
      `The model call failed: fake-model at ${fake.baseURL} did not answer within 3000 ms`,
    );
  });

  it('works with a streaming model: a paused tool call and the decline text', async () => {
    fake.reply(
      { toolCalls: [{ id: 'call_s', name: 'delete_note', arguments: { id: 'a' } }] },
      { text: 'Streamed and declined.' },
    );
    const started = await start('streamed', 'delete a');
    expect(fake.requests[0]!.body.stream).toBe(true);
    expect(started.turn.status).toBe('PAUSED');
    expect(started.turn.pendingElicitations[0].toolCall.arguments).toEqual({ id: 'a' });
    const resolved = await resolve(started.turn.pendingElicitations[0].id, 'DECLINE');
    expect(resolved.turn).toMatchObject({ status: 'COMPLETED', text: 'Streamed and declined.' });
    expect(toolMessage(fake.requests[1], 'call_s')).toBe('User declined execution of delete_note.');
  });
});
