// What one request may ask for: graphql-armor's limits (a legitimately deep query passes, hostile ones do not),
// the list-item budget, the body limit (declared and chunked), the WebSocket message limit, message and content
// sizes, masked faults, and introspection / GraphiQL by config.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { ARMOR_LIMITS } from '../../src/http/armor.js';
import type { ToolSource } from '../../src/tools/tool.js';
import { DbObserver } from '../support/db-snapshot.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { wsUrl } from '../support/live.js';
import { LEVEL, memoryLog } from '../support/log.js';

const ELICITATION_FIELDS = `id status message requestedSchema _meta mcpRequest
  toolCall { name toolId arguments annotations { title readOnlyHint destructiveHint idempotentHint openWorldHint } }
  response { action content } resolvedBy resolution createdAt expiresAt resolvedAt turn { id status }`;

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as { data?: any; errors?: { message: string; extensions?: any }[] },
  };
}

/** A raw HTTP POST: with `chunks`, sent chunked (no Content-Length), one write each. */
function rawPost(
  url: string,
  chunks: string[],
  headers: Record<string, string | number> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', (error) =>
      (error as NodeJS.ErrnoException).code === 'ECONNRESET' || (error as NodeJS.ErrnoException).code === 'EPIPE'
        ? undefined
        : reject(error),
    );
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('graphql-armor, tuned on the contract', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    // Some data, so that the deep queries below return something.
    for (const message of ['delete entities 1', 'list entities'])
      dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message } }));
  });
  afterAll(async () => {
    await h.close();
  });

  it("lets the contract's deepest legitimate selections and full Relay pages through", async () => {
    const deep = await post(h.url, {
      query: `{ threads(first: 100) { edges { cursor node { id turns { id pendingElicitations { toolCall { annotations { readOnlyHint } } } } } } pageInfo { hasNextPage endCursor } } }`,
    });
    expect(deep.status).toBe(200);
    expect(deep.body.errors).toBeUndefined();
    expect(
      deep.body.data.threads.edges.some((e: any) => e.node.turns.some((t: any) => t.pendingElicitations.length === 1)),
    ).toBe(true);

    const page = await post(h.url, {
      query: `{ pendingElicitations(first: 200) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${ELICITATION_FIELDS} } } } }`,
    });
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data.pendingElicitations.totalCount).toBe(1);

    const transcript = await post(h.url, {
      query: `{ threads(first: 100) { edges { node { id messages { id role text toolCallId toolCalls { id name toolId arguments } createdAt }
        turns { id status text error iterations messages { id } elicitations { ${ELICITATION_FIELDS} } } } } } }`,
    });
    expect(transcript.body.errors).toBeUndefined();
  });

  it("lets GraphiQL's introspection query through", async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const introspection = await post(h.url, { query: getIntrospectionQuery() });
    expect(introspection.body.errors).toBeUndefined();
    expect(introspection.body.data.__schema.queryType.name).toBe('Query');
  });

  const nest = (levels: number) =>
    `{ threads { edges { node { ${'turns { thread { '.repeat(levels)}id${' } }'.repeat(levels)} } } } }`;

  it.each([
    ['too deep', nest(4), `Query depth limit of ${ARMOR_LIMITS.maxDepth} exceeded`],
    [
      'too many aliases',
      `{ ${Array.from({ length: ARMOR_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: viewer { id }`).join(' ')} }`,
      'Aliases limit',
    ],
    ['too many tokens', `{ viewer { ${'id '.repeat(ARMOR_LIMITS.maxTokens)} } }`, 'Token limit'],
    [
      'too many directives',
      `{ viewer { ${'id @skip(if: false) '.repeat(ARMOR_LIMITS.maxDirectives + 1)} } }`,
      'Directives limit',
    ],
    [
      'too costly',
      `{ ${['a', 'b'].map((a) => `${a}: pendingElicitations(first: 200) { edges { node { ${ELICITATION_FIELDS} } } }`).join(' ')} }`,
      'Query Cost limit',
    ],
  ])('refuses a query %s with a clear error', async (_label, query, message) => {
    // A validation error: 200 for an application/json client (GraphQL over HTTP), never a fault.
    const refused = await post(h.url, { query });
    expect(refused.status).toBe(200);
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors?.[0]?.message).toContain(message);
  });

  it('a legitimately nested query just under the depth limit passes', async () => {
    const ok = await post(h.url, { query: nest(3) });
    expect(ok.body.errors).toBeUndefined();
  });
});

describe('the list-item budget', () => {
  it('stops a shallow, cheap-looking query whose fan-out over the data is huge, and not the plain read of the same data', async () => {
    // A small budget, so that a little data shows it; the default is defaultLimits.maxListItems.
    const h = await startHarness({ limits: { maxListItems: 2_000 } });
    try {
      let threadId: string | null = null;
      for (let i = 0; i < 15; i++) {
        threadId = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: 'list entities', threadId } }))
          .startTurn.thread.id;
      }
      const plain = await post(h.url, {
        query: 'query($id: ID!) { thread(id: $id) { turns { messages { id } } } }',
        variables: { id: threadId },
      });
      expect(plain.body.errors).toBeUndefined();
      expect(plain.body.data.thread.turns).toHaveLength(15);

      // 15 turns x 15 turns x 15 turns x 4 messages: about 17,000 items from one thread of 60 messages.
      const fanOut = await post(h.url, {
        query:
          'query($id: ID!) { thread(id: $id) { turns { thread { turns { thread { turns { messages { id } } } } } } } }',
        variables: { id: threadId },
      });
      expect(fanOut.status).toBe(200);
      expect(fanOut.body.errors?.[0]).toMatchObject({ extensions: { code: 'RESULT_TOO_LARGE' } });
      expect(fanOut.body.errors?.[0]?.message).toContain('more than 2000 list items');
    } finally {
      await h.close();
    }
  });
});

describe('sizes', () => {
  let h: Harness;
  let db: DbObserver;
  // The server's warnings and errors, in memory instead of on stderr: only the one the WebSocket test provokes.
  const log = memoryLog('warn');
  const config: ToolgateConfig = {
    ...demoConfig,
    server: { maxRequestBytes: 8192, maxMessageLength: 100, maxContentBytes: 200 },
  };
  beforeAll(async () => {
    h = await startHarness({ config, logger: log.logger });
    db = new DbObserver(h.database);
  });
  afterAll(async () => {
    await db.close();
    await h.close();
    expect(log.lines().filter((line) => line.msg !== 'websocket message too large')).toEqual([]);
  });

  const small = JSON.stringify({ query: '{ viewer { id } }' });
  const large = JSON.stringify({ query: '{ viewer { id } }', variables: { pad: 'x'.repeat(10_000) } });

  it('refuses a body larger than maxRequestBytes when Content-Length says so: 413', async () => {
    const response = await rawPost(h.url, [large], { 'content-length': Buffer.byteLength(large) });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).errors[0]).toMatchObject({
      message: 'The request body is larger than 8192 bytes.',
      extensions: { code: 'PAYLOAD_TOO_LARGE' },
    });
  });

  it('refuses a chunked body without Content-Length once it passes the limit: 413', async () => {
    const response = await rawPost(h.url, large.match(/.{1,1000}/g)!, { 'transfer-encoding': 'chunked' });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).errors[0]).toMatchObject({
      message: 'The request body is larger than 8192 bytes.',
      extensions: { code: 'PAYLOAD_TOO_LARGE' },
    });
  });

  it('serves a chunked body within the limit', async () => {
    const response = await rawPost(h.url, [small.slice(0, 5), small.slice(5)], { 'transfer-encoding': 'chunked' });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ data: { viewer: { id: 'local' } } });
  });

  it('closes a WebSocket whose message passes the same limit with 1009', async () => {
    const socket = new WebSocket(wsUrl(h.url), 'graphql-transport-ws');
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(9000) } }));
    expect(await closed).toBe(1009);
    expect(log.find('websocket message too large')).toEqual([
      expect.objectContaining({ level: LEVEL.warn, viewerId: null, maxBytes: 8192 }),
    ]);
  });

  it('a user message longer than maxMessageLength (in characters): INVALID_INPUT, nothing stored', async () => {
    const before = await db.snapshot();
    const long = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: 'y'.repeat(101) } })).startTurn;
    expect(long).toEqual({
      turn: null,
      thread: null,
      userErrors: [
        { code: 'INVALID_INPUT', message: 'The message is longer than 100 characters.', field: ['input', 'message'] },
      ],
    });
    expect(await db.snapshot()).toEqual(before);
    // 100 emoji are 100 characters (200 UTF-16 units): within the limit.
    const emoji = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: '😀'.repeat(100) } })).startTurn;
    expect(emoji.userErrors).toEqual([]);
    expect(emoji.turn.messages[0].text).toBe('😀'.repeat(100));
  });

  it('content larger than maxContentBytes: INVALID_INPUT on content, for a real and an unknown id alike; nothing changes', async () => {
    const paused = dataOf(
      await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 2' } }),
    ).startTurn;
    const elicitationId = paused.turn.pendingElicitations[0].id;
    const before = await db.snapshot();
    // 67 three-byte characters: 67 characters, but 201 bytes of UTF-8 with the quotes... and the key.
    for (const [id, content] of [
      [elicitationId, { instructions: 'x'.repeat(300) }],
      [elicitationId, { instructions: '€'.repeat(67) }],
      ['elc_unknown', { instructions: 'x'.repeat(300) }],
    ] as const) {
      const result = dataOf(
        await h.gql(RESOLVE, { input: { elicitationId: id, action: 'ACCEPT', content } }),
      ).resolveElicitation;
      expect(result).toMatchObject({ elicitation: null, turn: null });
      expect(result.userErrors).toEqual([
        { code: 'INVALID_INPUT', message: 'content is larger than 200 bytes of JSON.', field: ['input', 'content'] },
      ]);
    }
    expect(await db.snapshot()).toEqual(before);
    // Within the limit, the same answer goes through.
    const accepted = dataOf(
      await h.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT', content: { instructions: 'ok' } } }),
    ).resolveElicitation;
    expect(accepted.userErrors).toEqual([]);
    expect(accepted.turn.status).toBe('COMPLETED');
  });

  it('deeply nested content is too large, not a fault', async () => {
    const deep = `${'['.repeat(2000)}${']'.repeat(2000)}`;
    const body = `{"query":"mutation($c: JSON) { resolveElicitation(input: {elicitationId: \\"elc_x\\", action: ACCEPT, content: $c}) { userErrors { code field } } }","variables":{"c":{"instructions":${deep}}}}`;
    const response = await rawPost(h.url, [body], { 'content-length': Buffer.byteLength(body) });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      data: { resolveElicitation: { userErrors: [{ code: 'INVALID_INPUT', field: ['input', 'content'] }] } },
    });
  });
});

describe('masked faults', () => {
  it.each([
    ['', undefined],
    [' with NODE_ENV=development (Yoga would add the original error and its stack)', 'development'],
  ])('a fault inside the server reaches the client as "Unexpected error." and nothing more%s', async (_label, env) => {
    // Healthy at start, broken once the server runs.
    let healthy = true;
    const broken: ToolSource = {
      id: 'demo',
      listTools: async () => {
        if (healthy) return [];
        throw new Error('connection to 10.0.0.7 refused, password hunter2');
      },
      close: async () => {},
    };
    // The fault is logged in full for the operator (here in memory, not on stderr); the client gets nothing of it.
    const log = memoryLog('warn');
    const h = await startHarness({ toolSources: [broken], onError: () => {}, logger: log.logger });
    healthy = false;
    // Yoga reads NODE_ENV each time it masks an error.
    const before = process.env.NODE_ENV;
    if (env) process.env.NODE_ENV = env;
    try {
      const response = await post(h.url, { query: '{ agents { id tools { toolId } } }' });
      expect(response.status).toBeLessThan(500);
      expect(response.body.errors).toEqual([expect.objectContaining({ message: 'Unexpected error.' })]);
      const text = JSON.stringify(response.body);
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('10.0.0.7');
      expect(text).not.toMatch(/at .*\.ts:\d+/);
      expect(text).not.toContain('originalError');
      expect(log.lines()).toEqual([
        expect.objectContaining({
          level: LEVEL.error,
          msg: 'internal error, masked to the client as "Unexpected error."',
          err: expect.objectContaining({ message: 'connection to 10.0.0.7 refused, password hunter2' }),
        }),
      ]);
    } finally {
      process.env.NODE_ENV = before;
      await h.close();
    }
  });
});

describe('introspection and GraphiQL by config', () => {
  const graphiql = (url: string) => fetch(url, { headers: { accept: 'text/html' } });
  const introspect = (url: string, headers: Record<string, string> = {}) =>
    post(url, { query: '{ __schema { queryType { name } } }' }, headers);
  const TOKEN = 'token-for-introspection-tests-0001';
  const auth = { tokens: [{ token: TOKEN, user: 'alice', admin: false }] };
  const bearer = { authorization: `Bearer ${TOKEN}` };

  it('local mode: both on by default', async () => {
    const h = await startHarness();
    try {
      const page = await graphiql(h.url);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/graphiql/i);
      expect((await introspect(h.url)).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
    } finally {
      await h.close();
    }
  });

  it('serves a self-contained GraphiQL page: nothing is fetched from another origin', async () => {
    const h = await startHarness();
    try {
      const html = await (await graphiql(h.url)).text();
      // The tags of the page itself, not of the inlined bundle: no script, stylesheet or icon from elsewhere.
      const tags = html.replace(/<script>[\s\S]*<\/script>|<style>[\s\S]*?<\/style>/g, '');
      expect(tags).toMatch(/<div id="root">/);
      expect(tags).not.toMatch(/(src|href)="(https?:)?\/\//);
      expect(html).not.toMatch(/unpkg\.com|cdn\.jsdelivr/);
      expect(html).toContain('YogaGraphiQL.renderYogaGraphiQL(');
      expect(html.length).toBeGreaterThan(1_000_000); // the editor is in the page
    } finally {
      await h.close();
    }
  });

  it('with tokens: both off by default; no schema leaks through field suggestions either', async () => {
    const h = await startHarness({ config: { ...demoConfig, auth } });
    try {
      const page = await graphiql(h.url);
      expect(await page.text()).not.toMatch(/graphiql/i);
      const refused = await introspect(h.url, bearer);
      expect(refused.body.data ?? null).toBeNull();
      expect(refused.body.errors?.[0]?.message).toMatch(/introspection/i);
      const typo = await post(h.url, { query: '{ viewr { id } }' }, bearer);
      expect(typo.body.errors?.[0]?.message).not.toMatch(/Did you mean/);
    } finally {
      await h.close();
    }
  });

  it('switchable either way: on with tokens, off in local mode', async () => {
    const on = await startHarness({ config: { ...demoConfig, auth, server: { graphiql: true, introspection: true } } });
    const off = await startHarness({ config: { ...demoConfig, server: { graphiql: false, introspection: false } } });
    try {
      expect(await (await graphiql(on.url)).text()).toMatch(/graphiql/i);
      expect((await introspect(on.url, bearer)).body.errors).toBeUndefined();
      expect(await (await graphiql(off.url)).text()).not.toMatch(/graphiql/i);
      expect((await introspect(off.url)).body.errors?.[0]?.message).toMatch(/introspection/i);
      // The API itself is untouched.
      expect((await post(off.url, { query: '{ viewer { id } }' })).body).toEqual({ data: { viewer: { id: 'local' } } });
    } finally {
      await on.close();
      await off.close();
    }
  });
});
