// The real CLI (src/cli.ts) in its own process: SIGTERM while a WebSocket client is connected and a turn is
// paused, then a restart on the same database file; and `npm start` stopped by its own pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, tempDir } from './support/harness.js';
import { connectWs, subscribeWs } from './support/live.js';
import { nodeArgsFor } from './support/entries.js';

const ROOT = resolve(import.meta.dirname, '..');

interface Cli {
  process: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const NODE_CLI = [process.execPath, ...nodeArgsFor('src/cli.ts')];

async function startCli(env: Record<string, string>, [command, ...args] = NODE_CLI): Promise<Cli> {
  const child = spawn(command!, args, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const url = await new Promise<string>((found, failed) => {
    const look = () => {
      const match = / at (http:\/\/\S+\/graphql)/.exec(output);
      if (match) {
        child.stdout!.off('data', look);
        found(match[1]!);
      }
    };
    child.stdout!.on('data', look);
    void exited.then((code) => failed(new Error(`the CLI exited (${code}) before listening:\n${output}`)));
  });
  return { process: child, url, output: () => output, exited };
}

async function gql(url: string, query: string, variables?: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return response.json() as Promise<{ data?: any; errors?: unknown[] }>;
}

/** Child processes of `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((candidate) => {
      try {
        const stat = readFileSync(`/proc/${candidate}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

/** Every process below `pid`: its children, theirs, and so on. */
function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** Running (a zombie, exited but not yet reaped by its new parent, is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The ones of `pids` still running after up to `ms`: an MCP server told to stop may end a moment after the CLI. */
async function stillAlive(pids: number[], ms = 2_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return pids.filter(alive);
}

describe('the CLI on SIGTERM', () => {
  const temp = tempDir();
  afterAll(() => temp.cleanup());

  it('signalled the moment it says it serves, it shuts down cleanly (six processes at once): exit 0, not killed', async () => {
    // A supervisor may send SIGTERM as soon as it reads the "serving" line; the handler must be in place by then.
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        startCli({ TOOLGATE_DB: join(temp.dir, `early-${i}.db`) }).then(async (cli) => {
          cli.process.kill('SIGTERM');
          return { code: await cli.exited, shutdown: cli.output().includes('SIGTERM, shutting down') };
        }),
      ),
    );
    expect(runs).toEqual(Array.from({ length: 6 }, () => ({ code: 0, shutdown: true })));
  }, 60_000);

  it('`npm start` stopped by its pid (as systemd, a container runtime or `kill $!` do): the server shuts down cleanly, nothing is left', async () => {
    // npm runs the script through sh: the signal reaches npm, which passes it on to its child only.
    const cli = await startCli({ TOOLGATE_DB: join(temp.dir, 'npm-start.db') }, ['npm', 'start']);
    const below = descendantsOf(cli.process.pid!);
    try {
      expect(below.length).toBeGreaterThan(0);
      cli.process.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      expect(cli.output()).toContain('SIGTERM, shutting down');
      await expect(fetch(cli.url)).rejects.toThrow(); // nothing listens on its port any more
      expect(await stillAlive(below)).toEqual([]);
    } finally {
      for (const pid of below.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 180_000); // the prestart script builds the inbox when its build is stale

  it(
    'closes WebSockets with 1001, ends its MCP servers, exits 0, and the paused turn is still PAUSED after a restart',
    { timeout: 120_000 },
    async () => {
      const database = join(temp.dir, 'toolgate.db');
      // The demo, plus an MCP server over stdio: a child process that must end with the server.
      const config = join(temp.dir, 'toolgate.json');
      writeFileSync(
        config,
        JSON.stringify({
          models: { demo: { provider: 'scripted' } },
          toolSources: {
            demo: { type: 'builtin' },
            notes: { type: 'mcp', command: process.execPath, args: [join(ROOT, 'test/fixtures/mcp-server.mjs')] },
          },
          agents: [
            {
              id: 'demo',
              name: 'Demo agent',
              model: 'demo',
              systemPrompt: 'You manage entities.',
              tools: ['demo:*', 'notes:read_note'],
              requireToolConfirmation: true,
            },
          ],
        }),
      );
      const cli = await startCli({ TOOLGATE_DB: database, TOOLGATE_CONFIG: config });
      const mcpChildren = childrenOf(cli.process.pid!);
      expect(mcpChildren.length).toBeGreaterThan(0);

      const started = (
        await gql(cli.url, START_TURN, { input: { agentId: 'demo', message: 'delete entities 1, 2 and 3' } })
      ).data.startTurn;
      expect(started.turn.status).toBe('PAUSED');
      const elicitationId = started.turn.pendingElicitations[0].id;

      let closeCode: number | undefined;
      const client = connectWs(cli.url, undefined, {
        on: {
          closed: (event) => {
            closeCode = (event as { code: number }).code;
          },
        },
      });
      const updates = subscribeWs(client, 'subscription($id: ID!) { turnUpdated(turnId: $id) { status } }', {
        id: started.turn.id,
      });
      await updates.waitFor((e) => e.data?.turnUpdated.status === 'PAUSED');

      cli.process.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      await updates.done;
      expect(closeCode).toBe(1001);
      expect(cli.output()).toContain('SIGTERM, shutting down');
      expect(await stillAlive(mcpChildren)).toEqual([]);
      await client.dispose();

      // Same database, new process: the turn waits as it did, and the answer runs the tool once.
      const again = await startCli({ TOOLGATE_DB: database, TOOLGATE_CONFIG: config });
      try {
        const turn = (
          await gql(again.url, 'query($id: ID!) { turn(id: $id) { status pendingElicitations { id status } } }', {
            id: started.turn.id,
          })
        ).data.turn;
        expect(turn).toEqual({ status: 'PAUSED', pendingElicitations: [{ id: elicitationId, status: 'PENDING' }] });
        const resolved = dataOf(
          (await gql(again.url, RESOLVE, { input: { elicitationId, action: 'ACCEPT' } })) as never,
        ) as any;
        expect(resolved.resolveElicitation.turn.status).toBe('COMPLETED');
        expect(resolved.resolveElicitation.turn.text).toContain('Deleted 3 entities (1, 2, 3)');
      } finally {
        again.process.kill('SIGTERM');
        expect(await again.exited).toBe(0);
      }
    },
  );
});
