// `npm run build` (tsc -p tsconfig.build.json) and the compiled entry point run with plain node, as one deploys it:
// the server starts from dist/src/, finds its migrations at the package's root (drizzle/), and serves the demo, on
// SQLite and on PostgreSQL. The build goes to a folder of its own under .scratch/, inside the package, so that the
// compiled modules resolve node_modules as dist/ would.
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/harness.js';
import { freshPostgresDatabase } from './support/postgres.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = join(ROOT, '.scratch', `build-test-${process.pid}`);
const temp = tempDir();

beforeAll(() => {
  const build = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', OUT],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`the build failed:\n${build.stdout}${build.stderr}`);
}, 120_000);
afterAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  temp.cleanup();
});

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function post<T>(url: string, query: string, variables?: unknown): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return ((await response.json()) as { data: T }).data;
}

/** Runs the compiled CLI on `database` (from another working directory), one HITL round trip, then SIGTERM. */
async function roundTripOnBuild(database: string): Promise<void> {
  const child = spawn(process.execPath, [join(OUT, 'src', 'cli.js')], {
    cwd: temp.dir,
    env: { ...process.env, TOOLGATE_DB: database, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await until(() => out.stdout.includes('"serving ') || child.exitCode !== null, 'the compiled CLI to listen');
    expect(out.stderr).toBe('');
    const url = /"url":"([^"]+)"/.exec(out.stdout)?.[1];
    expect(url, out.stdout).toBeDefined();
    const started = await post<{ startTurn: { turn: { status: string; pendingElicitations: { id: string }[] } } }>(
      url!,
      'mutation { startTurn(input: {agentId: "demo", message: "delete entities 1"}) { turn { status pendingElicitations { id } } } }',
    );
    expect(started.startTurn.turn.status).toBe('PAUSED');
    const resolved = await post<{ resolveElicitation: { turn: { status: string; text: string } } }>(
      url!,
      'mutation R($id: ID!) { resolveElicitation(input: {elicitationId: $id, action: ACCEPT}) { turn { status text } } }',
      { id: started.startTurn.turn.pendingElicitations[0]!.id },
    );
    expect(resolved.resolveElicitation.turn.status).toBe('COMPLETED');
    expect(resolved.resolveElicitation.turn.text).toMatch(/deleted/i);
    child.kill('SIGTERM');
    expect(await done).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
}

describe('npm run build', { timeout: 120_000 }, () => {
  it('compiles a server that starts with plain node and runs the demo round trip on SQLite', async () => {
    await roundTripOnBuild(join(temp.dir, 'built.db'));
  });

  it('compiles a server that migrates and runs the demo round trip on PostgreSQL', async () => {
    const database = await freshPostgresDatabase();
    try {
      await roundTripOnBuild(database.url);
    } finally {
      await database.drop();
    }
  });
});
