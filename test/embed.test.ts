// The package's createServer (src/embed.ts), imported through the entry point as an embedder does: where it keeps its
// state, mounted in a node:http server of the embedder's (routing, WebSocket upgrades, the local mode's loopback
// rule), and close().
import { existsSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, createServer, parseConfig, type Toolgate } from '../src/index.js';
import { dataOf, RESOLVE, START_TURN, tempDir, TEST_BACKEND } from './support/harness.js';
import { connectWs, subscribeWs } from './support/live.js';
import { migratedPostgresDatabase } from './support/postgres.js';

const temp = tempDir();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => temp.cleanup());

/** Where the test's state lives: a fresh SQLite file, or a fresh PostgreSQL database under test:postgres. */
async function database(name: string): Promise<string> {
  if (TEST_BACKEND !== 'postgres') return join(temp.dir, `${name}-${Math.random()}.db`);
  const fresh = await migratedPostgresDatabase();
  cleanups.push(() => fresh.drop());
  return fresh.url;
}

async function start(options: Parameters<typeof createServer>[0]): Promise<Toolgate> {
  const toolgate = await createServer(options);
  cleanups.push(() => toolgate.close());
  return toolgate;
}

/** An app of the embedder's on 127.0.0.1 that routes toolgate's paths to it; `rewrite` may alter a request first. */
async function mount(toolgate: Toolgate, rewrite: (request: IncomingMessage) => void = () => {}): Promise<string> {
  const app: Server = createHttpServer((request, response) => {
    rewrite(request);
    if (toolgate.handles(request)) return toolgate.handleRequest(request, response);
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(`the app's own ${request.url}`);
  });
  app.on('upgrade', (request, socket, head) => {
    rewrite(request);
    if (toolgate.handles(request)) toolgate.handleUpgrade(request, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => app.close(() => resolve())));
  return `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
}

async function gql(base: string, query: string, variables?: object, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const DEMO_DELETE = { input: { agentId: 'demo', message: 'delete entities 1' } };

describe('createServer from the package', () => {
  it('keeps its state where the config says when no database is given, and where `database` says otherwise', async () => {
    const fromConfig = join(temp.dir, 'config-says', 'state.db');
    const demo = {
      models: { demo: { provider: 'scripted' } },
      toolSources: { demo: { type: 'builtin' } },
      agents: [{ id: 'demo', name: 'Demo', model: 'demo', tools: ['demo:*'] }],
    };
    await (await createServer({ config: parseConfig({ ...demo, database: { url: fromConfig } }) })).close();
    expect(existsSync(fromConfig)).toBe(true);

    const given = join(temp.dir, 'option-says.db');
    const elsewhere = join(temp.dir, 'not-here.db');
    await (
      await createServer({ config: parseConfig({ ...demo, database: { url: elsewhere } }), database: given })
    ).close();
    expect([existsSync(given), existsSync(elsewhere)]).toEqual([true, false]);
  });

  it('refuses a config that fails its checks before it creates the database', async () => {
    const file = join(temp.dir, 'refused.db');
    const config = parseConfig({
      models: { demo: { provider: 'scripted' } },
      toolSources: { demo: { type: 'builtin' } },
      agents: [{ id: 'demo', name: 'Demo', model: 'demo', tools: ['demo:no_such_tool'] }],
    });
    await expect(createServer({ config, database: file })).rejects.toThrow(ConfigError);
    expect(existsSync(file)).toBe(false);
  });

  it('mounted in an app: its paths go to toolgate (GraphQL, WebSocket, health), the rest stays the app’s', async () => {
    const toolgate = await start({ database: await database('mounted') });
    const base = await mount(toolgate);

    expect(await (await fetch(`${base}/`)).text()).toBe("the app's own /");
    expect(await (await fetch(`${base}/api/things?x=1`)).text()).toBe("the app's own /api/things?x=1");
    expect(await (await fetch(`${base}/graphqlx`)).text()).toBe("the app's own /graphqlx");
    expect(await (await fetch(`${base}/readyz`)).text()).toBe('ready\n');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    const started = dataOf<any>((await gql(base, START_TURN, DEMO_DELETE)).body).startTurn;
    expect(started.turn.status).toBe('PAUSED');
    // A live client through the app's upgrade handler.
    const client = connectWs(`${base}/graphql`);
    cleanups.push(() => client.dispose());
    const updates = subscribeWs(client, 'subscription($id: ID!) { turnUpdated(turnId: $id) { status } }', {
      id: started.turn.id,
    });
    await updates.waitFor((event) => event.data?.turnUpdated.status === 'PAUSED');
    const resolved = dataOf<any>(
      (await gql(base, RESOLVE, { input: { elicitationId: started.turn.pendingElicitations[0].id, action: 'ACCEPT' } }))
        .body,
    ).resolveElicitation;
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toMatch(/Deleted 1 entity \(1\)/);
    await updates.waitFor((event) => event.data?.turnUpdated.status === 'COMPLETED');

    // close(): the mounted WebSocket is closed by toolgate, /readyz drains; a second close() (the cleanup's) waits.
    await toolgate.close();
    await updates.done;
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
  });

  it('without an auth section, mounted, it answers only what reached a loopback address; the app decides the rest', async () => {
    const toolgate = await start({ database: await database('local-mode') });
    // As if the app's server listened on a network address too: the connection's local address says where it arrived.
    const base = await mount(toolgate, (request) => {
      if (request.headers['x-arrived-at'])
        Object.defineProperty(request.socket, 'localAddress', {
          value: request.headers['x-arrived-at'],
          configurable: true,
        });
    });
    const remote = await fetch(`${base}/graphql?query=%7B__typename%7D`, { headers: { 'x-arrived-at': '192.0.2.7' } });
    expect(remote.status).toBe(403);
    expect(await remote.text()).toBe(
      'toolgate has no "auth" section in its config (everyone is the admin user "local"): it answers on loopback addresses only\n',
    );
    for (const loopback of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const response = await fetch(`${base}/graphql?query=%7B__typename%7D`, { headers: { 'x-arrived-at': loopback } });
      expect(response.status).toBe(200);
    }
    // A WebSocket upgrade alike: refused before the handshake.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${base}/graphql`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-protocol': 'graphql-transport-ws',
          'x-arrived-at': '192.0.2.7',
        },
      });
      req.on('response', (response) => resolve(response.statusCode!));
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('with an auth section, mounted, it serves any address and asks for a token', async () => {
    const toolgate = await start({
      database: await database('with-auth'),
      config: parseConfig({
        models: { demo: { provider: 'scripted' } },
        toolSources: { demo: { type: 'builtin' } },
        agents: [{ id: 'demo', name: 'Demo', model: 'demo', tools: ['demo:*'] }],
        auth: { tokens: [{ token: 'embedder-secret-1', user: 'ada' }] },
      }),
    });
    const base = await mount(toolgate, (request) =>
      Object.defineProperty(request.socket, 'localAddress', { value: '192.0.2.7', configurable: true }),
    );
    expect((await gql(base, '{ viewer { id } }')).status).toBe(401);
    const viewer = await gql(base, '{ viewer { id } }', undefined, { authorization: 'Bearer embedder-secret-1' });
    expect(viewer).toEqual({ status: 200, body: { data: { viewer: { id: 'ada' } } } });
  });
});
