// `npm run build` (tsc -p tsconfig.build.json) and the compiled entry point run with plain node, as one deploys it:
// the server starts from dist/src/, finds its migrations at the package's root (drizzle/), and serves the demo, on
// SQLite and on PostgreSQL. The build goes to a folder of its own under .scratch/, inside the package, so that the
// compiled modules resolve node_modules as dist/ would.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startBuiltCli } from './durability/processes.js';
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
afterEach(killAll);
afterAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  temp.cleanup();
});

/** Runs the compiled CLI on `database` (from another working directory), one HITL round trip, then SIGTERM. */
async function roundTripOnBuild(database: string): Promise<void> {
  const server = await startBuiltCli(join(OUT, 'src', 'cli.js'), database, temp.dir);
  expect(server.stderr()).toBe('');
  const started = await server.gql<{ startTurn: { turn: { status: string; pendingElicitations: { id: string }[] } } }>(
    'mutation { startTurn(input: {agentId: "demo", message: "delete entities 1"}) { turn { status pendingElicitations { id } } } }',
  );
  expect(started.data!.startTurn.turn.status).toBe('PAUSED');
  const resolved = await server.gql<{ resolveElicitation: { turn: { status: string; text: string } } }>(
    'mutation R($id: ID!) { resolveElicitation(input: {elicitationId: $id, action: ACCEPT}) { turn { status text } } }',
    { id: started.data!.startTurn.turn.pendingElicitations[0]!.id },
  );
  expect(resolved.data!.resolveElicitation.turn.status).toBe('COMPLETED');
  expect(resolved.data!.resolveElicitation.turn.text).toMatch(/deleted/i);
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
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
