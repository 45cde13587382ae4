// The real entry point (`npx tsx src/cli.ts`): a bad config is one line on stderr, a non-zero exit, and no
// MCP server process left behind; a good one serves and ends its MCP servers when stopped.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../support/harness.js';
import { nodeArgsFor } from '../support/entries.js';
import { alive, until } from '../support/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url));
const { dir, cleanup } = tempDir();
afterAll(cleanup);
// Each run starts node, npx and tsx: seconds on a busy two-core machine.
vi.setConfig({ testTimeout: 120_000 });

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const started = new Set<number>();
// A run that did not stop by itself: end its whole process group (npx does not pass signals on to tsx).
afterEach(() => {
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  started.clear();
});

/**
 * `toolgate` with a config file: one node process on the run's bundle of src/cli.ts (test/support/entries.ts), or
 * `npx tsx src/cli.ts` as a user runs the sources.
 */
function startCli(configFile: string, env: Record<string, string> = {}, via: 'npx' | 'node' = 'node') {
  const database = env.TOOLGATE_DB ?? join(dir, `${Math.random()}.db`);
  const [command, args] =
    via === 'npx'
      ? (['npx', ['tsx', 'src/cli.ts']] as const)
      : ([process.execPath, nodeArgsFor('src/cli.ts')] as const);
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      TOOLGATE_CONFIG: configFile,
      TOOLGATE_DB: database,
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    out.stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    out.stderr += chunk.toString();
  });
  started.add(child.pid!);
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code, signal) => {
      started.delete(child.pid!);
      resolve({ code, signal, ...out });
    }),
  );
  return { child, out, done, database };
}

function writeConfig(name: string, config: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** The JSON log lines of the CLI's stdout (a last, incomplete line is left out). */
function logLines(stdout: string): { msg: string; [field: string]: unknown }[] {
  return stdout
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as { msg: string });
}

const scripted = { models: { m: { provider: 'scripted' } } };
const notesSource = (pidFile: string) => ({
  type: 'mcp',
  command: process.execPath,
  args: [FIXTURE],
  env: { FIXTURE_PIDFILE: pidFile },
});

describe('toolgate CLI with a bad config', () => {
  it('prints one line naming file, path and problem for a schema error, and exits 1', async () => {
    const file = writeConfig('bad-type.json', {
      ...scripted,
      agents: [{ id: 'a', name: 'A', model: 'm', pauseTtlSeconds: -5 }],
    });
    // As a user runs the sources.
    const cli = startCli(file, {}, 'npx');
    const run = await cli.done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`toolgate: ${file}: agents[0].pauseTtlSeconds: Too small: expected number to be >=1\n`);
    expect(run.stdout).toBe('');
    expect(existsSync(cli.database)).toBe(false);
  });

  it('names a token that no Authorization header can carry, and exits 1 without creating the database', async () => {
    const file = writeConfig('spaced-token.json', {
      ...scripted,
      agents: [{ id: 'a', name: 'A', model: 'm' }],
      auth: { tokens: [{ token: 'a b', user: 'alice' }] },
    });
    const cli = startCli(file);
    const run = await cli.done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `toolgate: ${file}: auth.tokens[0].token: expected a bearer token, one or more visible ASCII characters ("!" to "~"; no spaces), or "env:NAME"\n`,
    );
    expect(run.stdout).toBe('');
    expect(existsSync(cli.database)).toBe(false);
  });

  it('names a missing env: secret of a model, before any MCP server starts', async () => {
    const pidFile = join(dir, 'pids-secret');
    const file = writeConfig('secret.json', {
      models: {
        m: {
          provider: 'openai-compatible',
          baseURL: 'http://127.0.0.1:9/v1',
          model: 'x',
          apiKey: 'env:TOOLGATE_TEST_UNSET_KEY',
        },
      },
      toolSources: { notes: notesSource(pidFile) },
      agents: [{ id: 'a', name: 'A', model: 'm', tools: ['notes:*'] }],
    });
    const cli = startCli(file);
    const run = await cli.done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `toolgate: ${file}: models.m.apiKey: the environment variable TOOLGATE_TEST_UNSET_KEY is not set\n`,
    );
    expect(existsSync(pidFile)).toBe(false);
    expect(existsSync(cli.database)).toBe(false);
  });

  it('names a tool id that the MCP server does not list, ends the MCP server it started, creates no database', async () => {
    const pidFile = join(dir, 'pids-tool');
    const file = writeConfig('unknown-tool.json', {
      ...scripted,
      toolSources: { notes: notesSource(pidFile) },
      agents: [{ id: 'a', name: 'A', model: 'm', tools: ['notes:read_note', 'notes:read_notes'] }],
    });
    const cli = startCli(file);
    const run = await cli.done;
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^toolgate: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: agents\\[0\\]\\.tools\\[1\\]: no tool source lists "notes:read_notes" \\("notes" lists: read_note, delete_note, .*\\)\\n$`,
      ),
    );
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    await until(() => !alive(pid), 'the MCP server to end');
    // Checked before the database opens: a refused start leaves no file behind, and migrates nothing.
    expect(existsSync(cli.database)).toBe(false);
  });

  it('an invalid LOG_LEVEL: one line naming it and the allowed levels, exit 1', async () => {
    const file = writeConfig('fine.json', { ...scripted, agents: [{ id: 'a', name: 'A', model: 'm' }] });
    const run = await startCli(file, { LOG_LEVEL: 'chatty' }).done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'toolgate: LOG_LEVEL: "chatty" is not a log level (one of trace, debug, info, warn, error, fatal, silent)\n',
    );
    expect(run.stdout).toBe('');
  });

  it('names an MCP server that cannot start', async () => {
    const file = writeConfig('no-command.json', {
      ...scripted,
      toolSources: { fs: { type: 'mcp', command: 'toolgate-no-such-mcp-server' } },
      agents: [{ id: 'a', name: 'A', model: 'm', tools: ['fs:*'] }],
    });
    const cli = startCli(file);
    const run = await cli.done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `toolgate: ${file}: toolSources.fs: cannot start the MCP server (toolgate-no-such-mcp-server): spawn toolgate-no-such-mcp-server ENOENT\n`,
    );
    expect(existsSync(cli.database)).toBe(false);
  });
});

describe('toolgate CLI where it cannot open its database or listen', () => {
  const fine = () => writeConfig('fine-start.json', { ...scripted, agents: [{ id: 'a', name: 'A', model: 'm' }] });

  it('TOOLGATE_DB naming a file that is not a database: one line naming it, exit 1, the file untouched', async () => {
    const notADatabase = join(dir, 'notes.txt');
    writeFileSync(notADatabase, 'not a database, and long enough to be read as one: '.repeat(20));
    const before = readFileSync(notADatabase);
    const run = await startCli(fine(), { TOOLGATE_DB: notADatabase }).done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `toolgate: TOOLGATE_DB: the SQLite database ${notADatabase} cannot be opened (file is not a database)\n`,
    );
    expect(run.stdout).toBe('');
    expect(readFileSync(notADatabase)).toEqual(before);
  });

  it('a PORT in use: one line naming it, exit 1, nothing else on stderr, no database created', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const cli = startCli(fine(), { PORT: String(port) });
      const run = await cli.done;
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`toolgate: PORT: ${port} is already in use on 127.0.0.1\n`);
      // Checked before the database opens: nothing is created or migrated for a start that cannot listen.
      expect(existsSync(cli.database)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe('toolgate CLI with a good config', () => {
  it('serves, and ends its MCP server process on SIGTERM', async () => {
    const pidFile = join(dir, 'pids-good');
    const file = writeConfig('good.json', {
      ...scripted,
      toolSources: { notes: notesSource(pidFile) },
      agents: [{ id: 'a', name: 'A', model: 'm', tools: ['notes:*'], requireToolConfirmation: true }],
    });
    const { child, out, done } = startCli(file, {}, 'node');
    await until(
      () => logLines(out.stdout).some((line) => line.msg.startsWith('serving ')) || child.exitCode !== null,
      'the server to listen',
      60_000,
      () => JSON.stringify(out),
    );
    expect(out.stderr).toBe('');
    // The start line is a JSON log line (stdout is not a terminal) with the URL as a field.
    const startLine = logLines(out.stdout).find((line) => line.msg.startsWith('serving '))!;
    expect(startLine).toMatchObject({ level: 30, name: 'toolgate', config: file, url: expect.any(String) });
    const url = startLine.url as string;
    // It names the approval inbox too, a page this server answers.
    const inbox = url.replace(/\/graphql$/, '/inbox');
    expect(startLine).toMatchObject({ inbox, msg: expect.stringContaining(`the approval inbox at ${inbox}`) });
    expect((await fetch(inbox)).headers.get('content-type')).toMatch(/^text\/html/);
    // No agent is a gateway: the line names no MCP endpoint.
    expect(startLine).toMatchObject({ mcp: null, msg: expect.not.stringContaining('MCP') });
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ agent(id: "a") { tools { toolId requiresConfirmation } } }' }),
    });
    const { data } = (await answer.json()) as {
      data: { agent: { tools: { toolId: string; requiresConfirmation: boolean }[] } };
    };
    expect(data.agent.tools).toContainEqual({ toolId: 'notes:read_note', requiresConfirmation: false });
    expect(data.agent.tools).toContainEqual({ toolId: 'notes:delete_note', requiresConfirmation: true });
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(alive(pid)).toBe(true);
    child.kill('SIGTERM');
    const run = await done;
    expect(run.code).toBe(0);
    expect(alive(pid)).toBe(false);
    // What the CLI logged in between: the request (its line, not its document) and the shutdown.
    const lines = logLines(run.stdout);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'graphql request', operationType: 'query', viewerId: 'local', status: 200 }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'SIGTERM, shutting down', signal: 'SIGTERM' }));
    expect(run.stdout).not.toContain('requiresConfirmation');
  });
});

describe('toolgate CLI with no config', () => {
  it('serves the built-in demo, and its start line names the MCP gateway at /mcp, which lists the demo tools', async () => {
    const { child, out, done } = startCli('', {}, 'node');
    await until(
      () => logLines(out.stdout).some((line) => line.msg.startsWith('serving ')) || child.exitCode !== null,
      'the server to listen',
      60_000,
      () => JSON.stringify(out),
    );
    const startLine = logLines(out.stdout).find((line) => line.msg.startsWith('serving '))!;
    const mcp = (startLine.url as string).replace(/\/graphql$/, '/mcp');
    expect(startLine).toMatchObject({
      config: null,
      mcp,
      msg: expect.stringMatching(new RegExp(`^serving the built-in demo at .*, the MCP gateway at ${mcp} `)),
    });
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp)));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['create_entity', 'delete_entities', 'list_entities']);
    await client.close();
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });
});
