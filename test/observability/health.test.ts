// /healthz (liveness) and /readyz (readiness) over real HTTP: no token needed, nothing sensitive shown; 503 naming
// what is not ready: an MCP server process that died (a real one, killed), the database (closed, or a migration
// missing), and a server whose close() has begun.
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import type { SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import type { McpToolSource } from '../../src/tools/mcp.js';
import { startHarness, tempDir, type Harness } from '../support/harness.js';
import { GatedModel } from '../support/live.js';
import { alive, until } from '../support/wait.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url));
const TOKEN = 'health-check-token-9f8e7d6c5b4a';

const probe = async (h: Harness, path: '/healthz' | '/readyz', headers: Record<string, string> = {}) => {
  const response = await fetch(h.url.replace('/graphql', path), { headers });
  return { status: response.status, body: await response.text(), type: response.headers.get('content-type') };
};

/** The demo agent plus an MCP source `notes` on the fixture server (a real child process). */
function mcpConfig(env: Record<string, string> = {}): ToolgateConfig {
  return {
    ...demoConfig,
    toolSources: {
      ...demoConfig.toolSources,
      notes: { type: 'mcp', command: process.execPath, args: [FIXTURE], env },
    },
    auth: { tokens: [{ token: TOKEN, user: 'ops', admin: true }] },
  };
}

const notesSource = (h: Harness) => h.server.services.tools.sources.get('notes') as McpToolSource;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('/healthz and /readyz', () => {
  it('/healthz: 200 without a token even with an auth section, and says nothing', async () => {
    h = await startHarness({ config: mcpConfig() });
    const health = await probe(h, '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toBe('');
    // The API itself still wants a token.
    const api = await fetch(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ viewer { id } }"}',
    });
    expect(api.status).toBe(401);
  });

  it('/readyz: 200 "ready" without a token when the database and every source (builtin and MCP) are up', async () => {
    h = await startHarness({ config: mcpConfig() });
    const ready = await probe(h, '/readyz');
    expect(ready).toEqual({ status: 200, body: 'ready\n', type: 'text/plain; charset=utf-8' });
  });

  it('neither is subject to the body limit: a huge body is not read', async () => {
    h = await startHarness({ config: mcpConfig(), maxBodyBytes: 1024 });
    for (const path of ['/healthz', '/readyz']) {
      const response = await fetch(h.url.replace('/graphql', path), { method: 'POST', body: 'x'.repeat(100_000) });
      expect(response.status, path).toBe(200);
    }
    const api = await fetch(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(100_000),
    });
    expect(api.status).toBe(413);
  });
});

describe('/readyz when an MCP server dies', () => {
  const { dir, cleanup } = tempDir();
  afterAll(cleanup);

  it('a killed server that cannot start again: 503 naming the source, and it stays so; /healthz stays 200', async () => {
    // FIXTURE_ONCE: the fixture refuses a second start, so the restart readiness attempts fails (deterministic).
    h = await startHarness({ config: mcpConfig({ FIXTURE_ONCE: join(dir, 'once') }) });
    expect((await probe(h, '/readyz')).status).toBe(200);
    const pid = notesSource(h).pid!;
    process.kill(pid, 'SIGKILL');
    await until(async () => (notesSource(h!).pid === null ? true : undefined), 'the client to notice');
    const notReady = await probe(h, '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.type).toBe('text/plain; charset=utf-8');
    expect(notReady.body).toMatch(/^not ready\ntool source "notes": the MCP server is not running/);
    // Only what is not ready is named, and nothing of the server's output (its last words name a license).
    expect(notReady.body).not.toContain('database');
    expect(notReady.body).not.toContain('demo');
    expect(notReady.body).not.toContain('license');
    expect(notReady.body).not.toContain(FIXTURE);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await probe(h, '/readyz')).status).toBe(503);
    expect((await probe(h, '/healthz')).status).toBe(200);
  });

  it('a killed server that can start again: 503 naming it, then ready again without any tool call', async () => {
    h = await startHarness({ config: mcpConfig() });
    const pid = notesSource(h).pid!;
    process.kill(pid, 'SIGKILL');
    await until(async () => (notesSource(h!).pid === null ? true : undefined), 'the client to notice');
    const notReady = await probe(h, '/readyz');
    expect(notReady).toMatchObject({
      status: 503,
      body: 'not ready\ntool source "notes": the MCP server is not running (restarting it)\n',
    });
    expect(alive(pid)).toBe(false);
    await until(async () => ((await probe(h!, '/readyz')).status === 200 ? true : undefined), 'readiness again');
    expect(notesSource(h).pid).not.toBe(pid);
    expect(alive(notesSource(h).pid!)).toBe(true);
  });
});

describe('/readyz and the database', () => {
  it('a closed database: 503 "database: does not answer"', async () => {
    h = await startHarness({ config: demoConfig });
    expect((await probe(h, '/readyz')).status).toBe(200);
    await h.server.services.store.close();
    const result = await probe(h, '/readyz');
    expect(result.status).toBe(503);
    expect(result.body).toBe('not ready\ndatabase: does not answer\n');
    expect(result.body).not.toContain(h.database);
  });

  it('a migration missing from the database: 503 "database: migrations not applied"', async () => {
    h = await startHarness({ config: demoConfig });
    // drizzle's journal of applied migrations: forget the newest, as if this build's last migration never ran.
    const store = h.server.services.store;
    if (store instanceof PostgresStore) {
      const forgotten = await store.pool.query(
        'DELETE FROM drizzle.__drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM drizzle.__drizzle_migrations)',
      );
      expect(forgotten.rowCount).toBe(1);
    } else {
      const forgotten = (store as SqliteStore).sqlite
        .prepare(
          'DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)',
        )
        .run();
      expect(forgotten.changes).toBe(1);
    }
    const result = await probe(h, '/readyz');
    expect(result).toMatchObject({ status: 503, body: 'not ready\ndatabase: migrations not applied\n' });
  });
});

describe('/readyz during shutdown', () => {
  let model: GatedModel;
  beforeAll(() => {
    model = new GatedModel();
  });

  it('answers 503 "shutting down" once close() has begun (on a connection still serving a request)', async () => {
    h = await startHarness({ models: { demo: model } });
    const closing = h;
    h = undefined;
    expect((await probe(closing, '/readyz')).status).toBe(200);
    // One keep-alive connection: a request in flight (its model call waits), then /readyz on it after close().
    const { port } = new URL(closing.url);
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
    });
    const body = JSON.stringify({
      query: 'mutation { startTurn(input: {agentId: "demo", message: "list entities"}) { turn { status } } }',
    });
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await model.started(1);
    const closed = closing.close();
    socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The turn lists the entities (two model calls), then the responses go out in order and the server stops.
    model.release();
    model.release();
    await closed;
    await until(async () => (received.includes('shutting down') ? true : undefined), 'the /readyz response');
    socket.destroy();
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toContain('"status":"COMPLETED"');
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/\r\n\r\nnot ready\nshutting down\n$/);
  });
});
