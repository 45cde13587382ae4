// The mcp tool source against a real MCP server process (test/fixtures/mcp-server.mjs), over stdio and HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { McpToolSource } from '../../src/tools/mcp.js';
import type { Tool } from '../../src/tools/tool.js';
import { tempDir } from '../support/harness.js';
import { alive, until } from '../support/wait.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url));
const context = { agentId: 'a', threadId: 't', turnId: 'u', toolCallId: 'c' };
const options = { where: 'test.json: toolSources.notes', baseDir: process.cwd(), forwardStderr: false };

function byName(tools: Tool[], name: string): Tool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(', ')}`);
  return tool;
}

/** What the loop reads of a call: its text and whether it failed (the server's own result is checked apart). */
async function run(source: McpToolSource, name: string, args: Record<string, unknown> = {}) {
  const { text, isError } = await byName(await source.listTools(), name).execute(args, context);
  return { text, isError };
}

describe('McpToolSource over stdio', () => {
  let source: McpToolSource;
  beforeAll(async () => {
    source = await McpToolSource.start('notes', { type: 'mcp', command: process.execPath, args: [FIXTURE] }, options);
  });
  afterAll(async () => {
    await source.close();
  });

  it("keeps the server's own result for a gateway's client, and sends each call's stable idempotency key", async () => {
    const result = await byName(await source.listTools(), 'meta').execute({}, context);
    expect(result).toEqual({
      isError: false,
      text: 'with a picture\n[image image/png]',
      callResult: {
        content: [
          { type: 'text', text: 'with a picture' },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        ],
        structuredContent: { meta: { 'dev.toolgate/idempotency-key': 'u/c' } },
      },
    });
  });

  it('lists the tools with ids <source>:<name>, labels and annotations exactly as declared', async () => {
    const tools = await source.listTools();
    expect(tools.map((t) => t.id)).toEqual(
      expect.arrayContaining(['notes:read_note', 'notes:delete_note', 'notes:write_note', 'notes:echo', 'notes:fail']),
    );
    const read = byName(tools, 'read_note');
    expect(read).toMatchObject({ source: 'notes', label: 'Read note', description: 'Reads one note by id.' });
    expect(read.annotations).toEqual({ title: 'Ignored because title is set', readOnlyHint: true });
    // label from annotations.title when there is no title; absent hints stay absent
    const remove = byName(tools, 'delete_note');
    expect(remove.label).toBe('Delete a note');
    expect(remove.annotations).toEqual({ title: 'Delete a note', readOnlyHint: false, destructiveHint: true });
    expect(byName(tools, 'write_note').annotations).toEqual({ destructiveHint: false });
    // unannotated: label is the name, annotations empty
    const echo = byName(tools, 'echo');
    expect(echo.label).toBe('echo');
    expect(echo.annotations).toEqual({});
    expect(echo.inputSchema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
  });

  it('runs a tool and returns its text', async () => {
    expect(await run(source, 'echo', { text: 'hi', times: 2 })).toEqual({ isError: false, text: 'hi hi' });
    expect(await run(source, 'read_note', { id: 'a' })).toEqual({ isError: false, text: 'a: first note' });
  });

  it('turns isError results and handler exceptions into failed results', async () => {
    expect(await run(source, 'fail')).toEqual({ isError: true, text: 'the disk is full' });
    const thrown = await run(source, 'throw');
    expect(thrown.isError).toBe(true);
    expect(thrown.text).toContain('kaboom');
  });

  it('validates arguments against inputSchema before calling: a bad call never reaches the server', async () => {
    const before = JSON.parse((await run(source, 'call_log')).text) as string[];
    expect(await run(source, 'echo', { text: 5 })).toEqual({
      isError: true,
      text: 'invalid arguments: text must be string',
    });
    expect(await run(source, 'echo', {})).toEqual({
      isError: true,
      text: "invalid arguments: arguments must have required property 'text'",
    });
    expect((await run(source, 'echo', { text: 'x', times: 9 })).text).toBe('invalid arguments: times must be <= 5');
    const after = JSON.parse((await run(source, 'call_log')).text) as string[];
    expect(after.slice(before.length)).toEqual(['call_log']);
  });

  it('lists again on notifications/tools/list_changed', async () => {
    expect((await source.listTools()).some((t) => t.name === 'extra_tool')).toBe(false);
    expect((await run(source, 'toggle_extra')).text).toBe('added extra_tool');
    const extra = await until(
      async () => (await source.listTools()).find((t) => t.name === 'extra_tool'),
      'extra_tool to be listed',
    );
    expect(extra).toMatchObject({ id: 'notes:extra_tool', label: 'Extra tool', annotations: { readOnlyHint: true } });
    const { text, isError } = await extra.execute({}, context);
    expect({ text, isError }).toEqual({ isError: false, text: 'extra ran' });
    await run(source, 'toggle_extra');
    await until(async () => !(await source.listTools()).some((t) => t.name === 'extra_tool'), 'extra_tool to go away');
    // A tool object held from before the change says clearly that it is gone.
    expect(await extra.execute({}, context)).toEqual({
      isError: true,
      text: 'the MCP server "notes" no longer offers the tool extra_tool',
    });
  });
});

describe("McpToolSource and the patterns of a server's schemas", () => {
  let source: McpToolSource;
  beforeAll(async () => {
    const config = { type: 'mcp' as const, command: process.execPath, args: [FIXTURE], env: { FIXTURE_PATTERNS: '1' } };
    source = await McpToolSource.start('notes', config, options);
  });
  afterAll(async () => {
    await source.close();
  });

  it('matches an input schema\'s pattern in linear time: ^(a+)+$ refuses 30 "a"s and a "!" at once', async () => {
    const before = JSON.parse((await run(source, 'call_log')).text) as string[];
    const started = performance.now();
    // V8's backtracking engine takes minutes on this string.
    expect(await run(source, 'tag', { tag: `${'a'.repeat(30)}!` })).toEqual({
      isError: true,
      text: 'invalid arguments: tag must match pattern "^(a+)+$"',
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await run(source, 'tag', { tag: 'aaa' })).toEqual({ isError: false, text: 'tagged aaa' });
    const after = JSON.parse((await run(source, 'call_log')).text) as string[];
    expect(after.slice(before.length)).toEqual(['tag', 'call_log']); // the refused call never reached it
  });

  it('a tool whose output schema cannot be matched in linear time (a lookahead) is listed and runs, the rest too', async () => {
    expect((await source.listTools()).map((t) => t.name)).toEqual(expect.arrayContaining(['tag', 'not_x', 'echo']));
    expect(await run(source, 'not_x')).toEqual({ isError: false, text: 'word' });
  });
});

describe('McpToolSource when the server dies', () => {
  it('fails the call it died in (outcome unknown, not repeated) and restarts the server on next use', async () => {
    const source = await McpToolSource.start(
      'notes',
      { type: 'mcp', command: process.execPath, args: [FIXTURE] },
      options,
    );
    try {
      const firstPid = Number((await run(source, 'pid')).text);
      expect(firstPid).toBe(source.pid);
      const crashed = await run(source, 'crash');
      expect(crashed.isError).toBe(true);
      expect(crashed.text).toMatch(/^the MCP server "notes" stopped during the call, so its outcome is unknown/);
      await until(() => !alive(firstPid), 'the crashed server to be gone');

      const secondPid = Number((await run(source, 'pid')).text);
      expect(secondPid).not.toBe(firstPid);
      expect(alive(secondPid)).toBe(true);
      // The restarted server received only the new calls: the crashed call was not repeated.
      expect(JSON.parse((await run(source, 'call_log')).text)).toEqual(['pid', 'call_log']);
    } finally {
      await source.close();
    }
  });

  it('restarts a killed server on the next listing; after close() nothing restarts and calls say so', async () => {
    const source = await McpToolSource.start(
      'notes',
      { type: 'mcp', command: process.execPath, args: [FIXTURE] },
      options,
    );
    const pid = source.pid!;
    process.kill(pid, 'SIGKILL');
    await until(() => source.pid === null, 'the client to notice');
    const tools = await source.listTools();
    expect(tools.length).toBeGreaterThan(5);
    expect(source.pid).not.toBeNull();
    expect(source.pid).not.toBe(pid);
    await source.close();
    expect(await byName(tools, 'echo').execute({ text: 'x' }, context)).toEqual({
      isError: true,
      text: 'the MCP server "notes" is not running and could not be restarted: toolgate is shutting down',
    });
    expect(source.pid).toBeNull();
  });

  it('keeps the last known tools when a dead server cannot come back, and each call says why', async () => {
    const { dir, cleanup } = tempDir();
    const source = await McpToolSource.start(
      'notes',
      {
        type: 'mcp',
        command: process.execPath,
        args: [FIXTURE],
        env: { FIXTURE_ONCE: join(dir, 'once') },
      },
      options,
    );
    try {
      process.kill(source.pid!, 'SIGKILL');
      await until(() => source.pid === null, 'the client to notice');
      const tools = await source.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      const result = await byName(tools, 'echo').execute({ text: 'x' }, context);
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(
        /^the MCP server "notes" is not running and could not be restarted: .*the license is used up/,
      );
    } finally {
      await source.close();
      cleanup();
    }
  });

  it('ends its child process on close()', async () => {
    const source = await McpToolSource.start(
      'notes',
      { type: 'mcp', command: process.execPath, args: [FIXTURE] },
      options,
    );
    const pid = source.pid!;
    expect(alive(pid)).toBe(true);
    await source.close();
    await until(() => !alive(pid), 'the child process to end');
  });

  it('reports a server that cannot start as a config error naming the source and the command', async () => {
    const start = McpToolSource.start(
      'fs',
      { type: 'mcp', command: 'toolgate-no-such-command', args: ['--x'] },
      { ...options, where: 'test.json: toolSources.fs' },
    );
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow(
      'test.json: toolSources.fs: cannot start the MCP server (toolgate-no-such-command --x): spawn toolgate-no-such-command ENOENT',
    );
  });

  it('names an env: value whose variable is not set, without starting anything', async () => {
    const start = McpToolSource.start(
      'fs',
      { type: 'mcp', command: process.execPath, args: [FIXTURE], env: { TOKEN: 'env:TOOLGATE_TEST_UNSET_MCP_TOKEN' } },
      { ...options, where: 'test.json: toolSources.fs' },
    );
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow(
      /^test\.json: toolSources\.fs\.env\.TOKEN: the environment variable TOOLGATE_TEST_UNSET_MCP_TOKEN is not set$/,
    );
  });

  it('reports a server that exits during the handshake with its last stderr line', async () => {
    const start = McpToolSource.start(
      'bad',
      { type: 'mcp', command: process.execPath, args: ['-e', 'console.error("missing API token"); process.exit(2)'] },
      { ...options, where: 'test.json: toolSources.bad' },
    );
    await expect(start).rejects.toThrow(
      /^test\.json: toolSources\.bad: cannot start the MCP server \(.*\): .*missing API token/,
    );
  });
});

describe('McpToolSource over Streamable HTTP', () => {
  let server: ChildProcess;
  let url: string;
  beforeAll(async () => {
    server = spawn(process.execPath, [FIXTURE, '--http'], {
      env: { ...process.env, FIXTURE_TOKEN: 'secret-token' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(server.stdout!, 'data')) as [Buffer];
    url = /listening (\S+)/.exec(line.toString())![1]!;
  });
  afterAll(() => {
    server.kill();
  });

  it('lists and calls tools with the configured headers (env: indirection)', async () => {
    process.env.TOOLGATE_TEST_MCP_TOKEN = 'Bearer secret-token';
    const source = await McpToolSource.start(
      'remote',
      { type: 'mcp', url, headers: { authorization: 'env:TOOLGATE_TEST_MCP_TOKEN' } },
      options,
    );
    try {
      const tools = await source.listTools();
      expect(byName(tools, 'delete_note')).toMatchObject({
        id: 'remote:delete_note',
        label: 'Delete a note',
        annotations: { destructiveHint: true },
      });
      expect(await run(source, 'echo', { text: 'over http' })).toEqual({ isError: false, text: 'over http' });
      expect(await run(source, 'fail')).toEqual({ isError: true, text: 'the disk is full' });
      await run(source, 'toggle_extra');
      await until(async () => (await source.listTools()).some((t) => t.name === 'extra_tool'), 'extra_tool over HTTP');
    } finally {
      await source.close();
      delete process.env.TOOLGATE_TEST_MCP_TOKEN;
    }
  });

  it('reports a refused token at start as a config error', async () => {
    await expect(
      McpToolSource.start(
        'remote',
        { type: 'mcp', url, headers: { authorization: 'Bearer wrong' } },
        { ...options, where: 'test.json: toolSources.remote' },
      ),
    ).rejects.toThrow(`test.json: toolSources.remote: cannot start the MCP server (${url})`);
  });
});
