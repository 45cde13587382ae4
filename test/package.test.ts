// The npm package as a user gets it: `npm pack` (its prepack runs `npm run build`), the tarball installed into an empty
// folder with nothing beside it (`npm install <tarball>`, from the registry, with the Dockerfile's own install
// command), then the installed `toolgate` command from that folder: --help, the demo's round trip with no setup
// (migrations, the inbox and GraphiQL found inside the package), `toolgate init`, the stdio bridge, and the embedding
// and client examples compiled against the package's own types (`toolgate`, `toolgate/client`) and run on it. Then
// the container recipe's steps outside a container: the image's environment, start command and HEALTHCHECK, and
// compose.yaml's two instances on PostgreSQL and Redis.
import { execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  argsOf,
  composeServices,
  composeToolgateEnvironment,
  envOf,
  execForm,
  readDockerfile,
} from './support/dockerfile.js';
import { betterSqlitePrebuilds, withoutNpmVariables } from '../scripts/packed-install.js';
import { startServing, type Serving } from './support/cli.js';
import { RESOLVE, START_TURN, tempDir } from './support/harness.js';
import { connectWs, subscribeWs } from './support/live.js';
import { freshPostgresDatabase } from './support/postgres.js';
import { REDIS_URL } from './support/redis.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const temp = tempDir();
/** The empty folder the package is installed into, and where its command runs. */
const APP = join(temp.dir, 'app');
const TOOLGATE = join(APP, 'node_modules', '.bin', 'toolgate');
const timings: Record<string, number> = {};

// The container recipe: its install stage's command is the one this test installs with.
const STAGES = readDockerfile(ROOT);
const INSTALL_STAGE = STAGES.find((stage) => stage.name === 'install')!;
const INSTALL_STEP = argsOf(INSTALL_STAGE, 'RUN').find((args) => args.startsWith('npm install '))!;
const IMAGE_TARBALL = '/tmp/toolgate.tgz';
const RUNTIME = STAGES.at(-1)!;
let installLog = '';

async function timed<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    timings[name] = Math.round(performance.now() - started);
  }
}

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  try {
    return await promisify(execFile)(command, args, {
      cwd,
      env: withoutNpmVariables(env),
      maxBuffer: 32 * 1024 * 1024,
    });
  } catch (error) {
    const failed = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout}\n${failed.stderr}`, {
      cause: error,
    });
  }
}

beforeAll(async () => {
  await timed('npm pack (with the build)', () => run('npm', ['pack', '--pack-destination', temp.dir], ROOT));
  const tarball = readdirSync(temp.dir).find((name) => name.endsWith('.tgz'))!;
  mkdirSync(APP);
  // The image's install step (`RUN npm install … /tmp/toolgate.tgz` in /opt/toolgate), on this tarball in APP;
  // --prefer-offline only lets npm trust its cache's metadata.
  const [, ...install] = INSTALL_STEP.split(/\s+/);
  const args = [...install.map((arg) => (arg === IMAGE_TARBALL ? join(temp.dir, tarball) : arg)), '--prefer-offline'];
  const installed = await timed('npm install <tarball>', () =>
    run('npm', args, APP, betterSqlitePrebuilds(ROOT, join(temp.dir, 'prebuilds'))),
  );
  installLog = installed.stdout + installed.stderr;
  examplesCompiled = compileExamples();
  // Awaited by its test; a failure here is reported there, not as an unhandled rejection.
  examplesCompiled.catch(() => {});
}, 300_000);

/** The examples compiled against the package: embedding (`toolgate`) and a frontend's (`toolgate/client`). */
const EXAMPLES = ['embed-http.ts', 'embed-tools.ts', 'client-polling.ts', 'client-subscription.ts'];

/**
 * The examples compiled with tsc in APP/out, where `import … from 'toolgate'` and `'toolgate/client'` resolve to the
 * installed package and their types come from its exports. Started once the package is installed, beside the tests
 * that run servers (tsc takes seconds), and awaited by the tests that run an example.
 */
let examplesCompiled: Promise<unknown>;
function compileExamples(): Promise<unknown> {
  const examples = join(APP, 'examples');
  mkdirSync(examples);
  // ES modules, as in the repository (top-level await, import.meta).
  writeFileSync(join(examples, 'package.json'), '{"type": "module"}\n');
  for (const name of EXAMPLES) writeFileSync(join(examples, name), readFileSync(join(ROOT, 'examples', name)));
  // client-subscription.ts imports `ws` (Node 20 has no WebSocket), whose types a project of its own installs as a
  // devDependency: the checkout's @types/ws, beside the examples, so APP/node_modules stays what npm installed.
  mkdirSync(join(examples, 'node_modules', '@types'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', '@types', 'ws'), join(examples, 'node_modules', '@types', 'ws'), 'dir');
  return timed('examples: tsc against the package', () =>
    run(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        ...['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023', '--strict'],
        ...['--typeRoots', join(ROOT, 'node_modules', '@types'), '--types', 'node', '--outDir', 'out'],
        ...EXAMPLES.map((name) => join('examples', name)),
      ],
      APP,
    ),
  );
}

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});
// The installed app holds thousands of files: removing them under a busy disk has taken longer than a hook's 30 s.
afterAll(async () => {
  console.log(`test/package.test.ts timings (ms): ${JSON.stringify(timings)}`);
  await rm(temp.dir, { recursive: true, force: true });
}, 180_000);

/** `command` from `cwd` until it prints a URL (the server's "serving … at <url>" line, an example's first URL). */
function startProcess(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  return startServing(command, args, { cwd, env: withoutNpmVariables(env), running });
}

/** The installed `toolgate` on a port the system picks on 127.0.0.1. */
function startToolgate(env: Record<string, string> = {}): Promise<Serving> {
  return startProcess(TOOLGATE, [], APP, { HOST: '127.0.0.1', PORT: '0', ...env });
}

async function gql(url: URL, query: string, variables?: object, token?: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function stop(started: Serving): Promise<void> {
  started.child.kill('SIGTERM');
  expect(await started.exited).toBe(0);
  expect(started.output()).toContain('SIGTERM, shutting down');
}

describe('the packed package, installed into an empty folder', { timeout: 60_000 }, () => {
  it('installs from the registry without an engine warning on this Node, with the command in node_modules/.bin', () => {
    expect(installLog).not.toContain('EBADENGINE');
    expect(existsSync(TOOLGATE)).toBe(true);
    // Only what runs: no build or test tool came along.
    for (const tool of ['typescript', 'tsx', 'vite', 'vitest', 'eslint', 'drizzle-kit'])
      expect(existsSync(join(APP, 'node_modules', tool)), tool).toBe(false);
  });

  it('toolgate --help and --version', async () => {
    const help = await run(TOOLGATE, ['--help'], APP);
    expect(help.stdout).toMatch(new RegExp(`^toolgate ${VERSION.replaceAll('.', '\\.')}: `));
    expect(help.stdout).toContain('toolgate init [file]');
    expect((await run(TOOLGATE, ['--version'], APP)).stdout).toBe(`${VERSION}\n`);
  });

  it("carries its docs: the README's relative links and --help's pointers lead to files in the package", async () => {
    const pkg = join(APP, 'node_modules', 'toolgate');
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(20);
    expect(links.filter((link) => !existsSync(join(pkg, link)))).toEqual([]);
    const help = (await run(TOOLGATE, ['--help'], APP)).stdout;
    expect(help).toContain(`The docs come with the package, in ${realpathSync(pkg)}: `);
    for (const file of help.match(/\b(README\.md|docs\/[\w./-]+\.md)/g)!)
      expect(existsSync(join(pkg, file)), file).toBe(true);
  });

  it('toolgate with no setup: the demo on SQLite, its round trip, the inbox and GraphiQL from the package', async () => {
    const server = await timed('start, demo round trip, SIGTERM', async () => {
      const server = await startToolgate();
      const started = (await gql(server.url, START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } }))
        .startTurn.turn;
      expect(started.status).toBe('PAUSED');
      const resolved = (
        await gql(server.url, RESOLVE, {
          input: { elicitationId: started.pendingElicitations[0].id, action: 'ACCEPT' },
        })
      ).resolveElicitation.turn;
      expect(resolved).toMatchObject({ status: 'COMPLETED', text: expect.stringContaining('Deleted 1 entity (1)') });
      return server;
    });
    // The state in the working directory; the migrations, the inbox's build and GraphiQL in the package.
    expect(server.output()).toContain('(database ./data/toolgate.db)');
    expect(existsSync(join(APP, 'data', 'toolgate.db'))).toBe(true);
    const inbox = await fetch(new URL('/inbox', server.url));
    expect(inbox.status).toBe(200);
    expect(await inbox.text()).toMatch(/<script type="module"[^>]* src="\/inbox\/assets\/index-[\w-]+\.js"/);
    const graphiql = await fetch(server.url, { headers: { accept: 'text/html' } });
    expect(graphiql.status).toBe(200);
    expect(await graphiql.text()).toContain('GraphiQL');
    expect(await (await fetch(new URL('/readyz', server.url))).text()).toBe('ready\n');
    await stop(server);
  });

  it('toolgate init writes a starter config that the installed command serves', async () => {
    expect((await run(TOOLGATE, ['init'], APP)).stdout).toContain('TOOLGATE_CONFIG=toolgate.jsonc npx toolgate');
    // Its $schema names the package's JSON Schema, where an editor finds it.
    expect(existsSync(join(APP, 'node_modules', 'toolgate', 'schema', 'toolgate.config.schema.json'))).toBe(true);
    const server = await startToolgate({ TOOLGATE_CONFIG: 'toolgate.jsonc', TOOLGATE_DB: join(temp.dir, 'init.db') });
    expect(server.output()).toContain(`serving ${join(APP, 'toolgate.jsonc')}`);
    expect((await gql(server.url, '{ agents { id requireToolConfirmation } }')).agents).toEqual([
      { id: 'demo', requireToolConfirmation: true },
      { id: 'gateway', requireToolConfirmation: true },
    ]);
    await stop(server);
  });

  it('toolgate mcp bridges an MCP client on stdio to the server’s /mcp', async () => {
    writeFileSync(
      join(APP, 'gateway.json'),
      JSON.stringify({
        models: {},
        toolSources: { demo: { type: 'builtin' } },
        agents: [{ id: 'gateway', name: 'Gateway', tools: ['demo:*'], requireToolConfirmation: true }],
      }),
    );
    const server = await startToolgate({ TOOLGATE_CONFIG: 'gateway.json', TOOLGATE_DB: join(temp.dir, 'gw.db') });
    const client = new Client({ name: 'package-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: TOOLGATE,
        args: ['mcp'],
        cwd: APP,
        env: { PATH: process.env.PATH!, TOOLGATE_URL: new URL('/mcp', server.url).href },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('list_entities');
      const listed = await client.callTool({ name: 'list_entities', arguments: {} });
      expect((listed.content as { text: string }[])[0]!.text).toMatch(/^Entities: 1 /);
    } finally {
      await client.close();
    }
    await stop(server);
  });
});

/** A port nobody listens on now (the image's PORT is a number its HEALTHCHECK reads too, not 0). */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The image's paths, here: the install stage's folder is APP, the config the runtime stage copies in is the
 * repository's file, and every other absolute path of the image lives under `home`.
 */
function imagePaths(home: string): (value: string) => string {
  const installDir = argsOf(INSTALL_STAGE, 'WORKDIR').at(-1)!;
  const copied = Object.fromEntries(
    argsOf(RUNTIME, 'COPY')
      .filter((args) => !args.startsWith('--from'))
      .map((args) => args.split(/\s+/).reverse() as [string, string]),
  );
  return (value) => {
    if (value.startsWith(`${installDir}/`) || value === installDir) return APP + value.slice(installDir.length);
    if (copied[value]) return join(ROOT, copied[value]);
    return value.startsWith('/') ? join(home, value) : value;
  };
}

interface Instance {
  started: Serving;
  env: Record<string, string>;
  /** The image's HEALTHCHECK command, run as Docker runs it: its exit status. */
  health(): Promise<number>;
}

/** The runtime stage's CMD with its ENV (`overrides` on top, as `docker run -e` or compose give them), from WORKDIR. */
async function startImage(home: string, overrides: Record<string, string>): Promise<Instance> {
  const path = imagePaths(home);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...envOf(RUNTIME), ...overrides })) env[name] = path(value);
  env.PORT = String(await freePort());
  // The volume's folder, which the image creates for its user.
  if (env.TOOLGATE_DB!.startsWith('/')) mkdirSync(dirname(env.TOOLGATE_DB!), { recursive: true });
  const workdir = path(argsOf(RUNTIME, 'WORKDIR').at(-1)!);
  mkdirSync(workdir, { recursive: true });
  const node = (command: string[]) =>
    [command[0] === 'node' ? process.execPath : command[0]!, command.slice(1).map(path)] as const;
  const [command, args] = node(execForm(argsOf(RUNTIME, 'CMD').at(-1)!));
  const started = await startProcess(command, args, workdir, env);
  const [checkCommand, checkArgs] = node(execForm(argsOf(RUNTIME, 'HEALTHCHECK').at(-1)!));
  return {
    started,
    env,
    health: () =>
      new Promise((resolve) =>
        execFile(checkCommand, checkArgs, { cwd: workdir, env: withoutNpmVariables(env) }, (error) =>
          resolve(error ? Number((error as { code?: number }).code ?? 1) : 0),
        ),
      ),
  };
}

/** Polls the HEALTHCHECK until it passes, as Docker does during the start period. */
async function healthy(instance: Instance): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    if ((await instance.health()) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never healthy:\n${instance.started.output()}`);
}

describe('the container recipe, its steps run outside a container', { timeout: 60_000 }, () => {
  it('Dockerfile: node:20-slim, production install of the packed tarball, a non-root user, HEALTHCHECK on /readyz, exec-form CMD', () => {
    for (const stage of STAGES) expect(['node:20-slim', ...STAGES.map((s) => s.name)]).toContain(stage.from);
    expect(RUNTIME.from).toBe('node:20-slim');
    expect(argsOf(STAGES[0]!, 'RUN')).toContainEqual(
      expect.stringMatching(/^npm pack .*&& mv \/tmp\/toolgate-\*\.tgz \/tmp\/toolgate\.tgz$/),
    );
    expect(INSTALL_STEP).toBe(`npm install --omit=dev --no-audit --no-fund ${IMAGE_TARBALL}`);
    expect(argsOf(RUNTIME, 'COPY')).toContain(
      `--from=install ${argsOf(INSTALL_STAGE, 'WORKDIR').at(-1)} /opt/toolgate`,
    );
    expect(argsOf(RUNTIME, 'USER')).toEqual(['node']);
    expect(argsOf(RUNTIME, 'HEALTHCHECK')[0]).toContain('/readyz');
    expect(execForm(argsOf(RUNTIME, 'CMD')[0]!)[0]).toBe('node');
    expect(argsOf(RUNTIME, 'CMD')[0]!.startsWith('[')).toBe(true);
  });

  it('the image: its start command and environment serve with the token, its HEALTHCHECK passes, SIGTERM exits 0', async () => {
    await timed('image: start, HEALTHCHECK, SIGTERM', async () => {
      const token = `container-${randomUUID()}`;
      const instance = await startImage(join(temp.dir, 'image'), { TOOLGATE_ADMIN_TOKEN: token });
      // HOST=0.0.0.0 is allowed because the image's config has an "auth" section.
      expect(instance.env.HOST).toBe('0.0.0.0');
      await healthy(instance);
      expect(existsSync(instance.env.TOOLGATE_DB!)).toBe(true);
      const anonymous = await fetch(instance.started.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { id } }' }),
      });
      expect(anonymous.status).toBe(401);
      expect((await gql(instance.started.url, '{ viewer { id isAdmin } }', undefined, token)).viewer).toEqual({
        id: 'admin',
        isAdmin: true,
      });
      await stop(instance.started);
      expect(await instance.health()).toBe(1);
    });
  });

  it('compose.yaml: two instances on one PostgreSQL database and one Redis; paused on one, answered on the other, seen live on both', async () => {
    const services = composeServices(ROOT);
    expect(Object.keys(services).sort()).toEqual(['postgres', 'redis', 'toolgate-a', 'toolgate-b']);
    expect(services.postgres).toMatch(/^postgres:/);
    expect(services.redis).toMatch(/^redis:/);
    const compose = composeToolgateEnvironment(ROOT);
    expect(compose.TOOLGATE_DB).toMatch(/^postgres:\/\/\w+:\w+@postgres:5432\/\w+$/);
    expect(compose.TOOLGATE_REDIS).toBe('redis://redis:6379');
    expect(compose.TOOLGATE_ADMIN_TOKEN).toMatch(/^\$\{TOOLGATE_ADMIN_TOKEN:\?/);

    await timed('compose: two instances on PostgreSQL and Redis', async () => {
      // The same variables, pointed at this machine's PostgreSQL and Redis instead of the compose services.
      const database = await freshPostgresDatabase();
      const token = `compose-${randomUUID()}`;
      const environment = {
        ...compose,
        TOOLGATE_DB: database.url,
        TOOLGATE_REDIS: REDIS_URL,
        TOOLGATE_ADMIN_TOKEN: token,
      };
      try {
        const a = await startImage(join(temp.dir, 'a'), environment);
        const b = await startImage(join(temp.dir, 'b'), environment);
        await Promise.all([healthy(a), healthy(b)]);
        const started = (
          await gql(a.started.url, START_TURN, { input: { agentId: 'demo', message: 'delete entities 3' } }, token)
        ).startTurn.turn;
        expect(started.status).toBe('PAUSED');
        const client = connectWs(a.started.url.href, `Bearer ${token}`);
        const updates = subscribeWs(client, 'subscription($id: ID!) { turnUpdated(turnId: $id) { status } }', {
          id: started.id,
        });
        await updates.waitFor((event) => event.data?.turnUpdated.status === 'PAUSED');
        const input = { elicitationId: started.pendingElicitations[0].id, action: 'ACCEPT' };
        const resolved = (await gql(b.started.url, RESOLVE, { input }, token)).resolveElicitation.turn;
        expect(resolved).toMatchObject({ status: 'COMPLETED', text: expect.stringContaining('Deleted 1 entity (3)') });
        // Through Redis: the subscriber on A hears the answer given on B.
        await updates.waitFor((event) => event.data?.turnUpdated.status === 'COMPLETED');
        await client.dispose();
        await Promise.all([stop(a.started), stop(b.started)]);
      } finally {
        await database.drop();
      }
    });
  });
});

// Last: tsc, started after the install, ran beside the tests above.
describe('the package, embedded', { timeout: 120_000 }, () => {
  it('the embedding examples compile against the package’s types, and their JavaScript runs on it with plain node', async () => {
    await timed('examples: waiting for tsc, embed-http.mjs and embed-tools.mjs run', async () => {
      await examplesCompiled;
      // The .mjs files as the package carries them, run with plain node: no TypeScript, no loader.
      const carried = join(APP, 'node_modules', 'toolgate', 'examples');
      for (const name of ['embed-http.mjs', 'embed-tools.mjs'])
        writeFileSync(join(APP, 'examples', name), readFileSync(join(carried, name)));
      // embed-tools' MCP server, which a project installs beside toolgate: the checkout's, beside the examples.
      mkdirSync(join(APP, 'examples', 'node_modules', '@modelcontextprotocol'), { recursive: true });
      symlinkSync(
        join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory'),
        join(APP, 'examples', 'node_modules', '@modelcontextprotocol', 'server-memory'),
        'dir',
      );

      const http = await startProcess(process.execPath, [join('examples', 'embed-http.mjs')], APP, {
        PORT: '0',
        TOOLGATE_DB: join(temp.dir, 'embedded.db'),
      });
      const base = http.url.origin;
      expect(await (await fetch(`${base}/api/status`)).json()).toEqual({ app: 'ok' });
      expect((await gql(new URL('/graphql', base), '{ agents { id } }')).agents).toEqual([
        { id: 'demo' },
        { id: 'gateway' },
      ]);
      http.child.kill('SIGTERM');
      expect(await http.exited).toBe(0);

      const tools = await startProcess(process.execPath, [join('examples', 'embed-tools.mjs')], APP, {
        PORT: '0',
        TOOLGATE_DB: join(temp.dir, 'embedded-tools.db'),
        MEMORY_FILE_PATH: join(temp.dir, 'memory.jsonl'),
      });
      const client = new Client({ name: 'package-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(tools.url));
      try {
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names).toEqual(expect.arrayContaining(['list_tickets', 'close_ticket', 'read_graph']));
        const listed = await client.callTool({ name: 'list_tickets', arguments: {} });
        expect((listed.content as { text: string }[])[0]!.text).toBe(
          '#1 Printer on fire (open)\n#2 VPN drops every hour (open)',
        );
      } finally {
        await client.close();
      }
      tools.child.kill('SIGTERM');
      expect(await tools.exited).toBe(0);
    });
  });

  it('toolgate/client: imports nothing at run time; both client examples run their round trip on the installed command', async () => {
    const client = join(APP, 'node_modules', 'toolgate', 'dist', 'src', 'client');
    expect(readFileSync(join(client, 'index.js'), 'utf8')).toMatch(/^export \* from '\.\/generated\.js';$/m);
    expect(readFileSync(join(client, 'index.js'), 'utf8').match(/^(import|export) .* from /gm)).toHaveLength(1);
    expect(readFileSync(join(client, 'generated.js'), 'utf8')).not.toMatch(/^import |\bimport\(|\brequire\(/m);
    expect(existsSync(join(client, 'index.d.ts'))).toBe(true);

    await timed('client examples: the installed command, both examples', async () => {
      await examplesCompiled;
      writeFileSync(join(APP, 'out', 'package.json'), '{"type": "module"}\n');
      const server = await startToolgate({ TOOLGATE_DB: join(temp.dir, 'client.db') });
      // Side by side on one server: each answers its own turn's request only.
      const [polling, subscription] = await Promise.all(
        ['client-polling.js', 'client-subscription.js'].map((name) =>
          run(process.execPath, [join('out', name)], APP, { TOOLGATE_GRAPHQL_URL: server.url.href }),
        ),
      );
      for (const { stdout } of [polling!, subscription!]) {
        expect(stdout).toMatch(
          /: RUNNING\n[^]*asks: Allow the agent to run "Delete entities"\?[^]*answered: ACCEPTED\n/,
        );
        expect(stdout).toMatch(/: COMPLETED: Done\. Deleted [^\n]*\n$/);
      }
      expect((await gql(server.url, '{ pendingElicitations { totalCount } }')).pendingElicitations.totalCount).toBe(0);
      await stop(server);
    });
  });
});
