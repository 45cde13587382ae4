// Property-based fuzzing (fast-check) of every mutation's input over real HTTP, plus raw garbage at the endpoint:
// never a 5xx, never a masked fault ("Unexpected error."), the server keeps serving, and a request answered
// with an error (GraphQL errors or userErrors) changes nothing in the database.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { DbObserver } from '../support/db-snapshot.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';

const TOKENS = {
  alice: 'fuzz-alice-token-1f2e3d4c5b6a',
  bob: 'fuzz-bob-token-6a5b4c3d2e1f',
  root: 'fuzz-root-token-0a0b0c0d0e0f',
};
type User = keyof typeof TOKENS;
const as = (user: User) => ({ authorization: `Bearer ${TOKENS[user]}` });
const config = {
  ...demoConfig,
  auth: {
    tokens: [
      { token: TOKENS.alice, user: 'alice', admin: false },
      { token: TOKENS.bob, user: 'bob', admin: false },
      { token: TOKENS.root, user: 'root', admin: true },
    ],
  },
};

/** Cases run per target, and how many of them the server refused (an error) or carried out. */
const tally: Record<string, { refused: number; ran: number }> = {};
/** Targets whose property held for every case. */
const held = new Set<string>();
const record = (target: string, failed: boolean) => {
  const entry = (tally[target] ??= { refused: 0, ran: 0 });
  if (failed) entry.refused++;
  else entry.ran++;
};

afterAll(() => {
  const entries = Object.entries(tally);
  const total = entries.reduce((sum, [, t]) => sum + t.refused + t.ran, 0);
  const failed = entries.map(([k]) => k).filter((k) => !held.has(k));
  console.log(
    `fuzz: ${total} cases ran, ${failed.length ? `FAILED: ${failed.join(', ')}` : 'none failed'} (${entries.map(([k, t]) => `${k} ${t.refused + t.ran}: ${t.refused} refused, ${t.ran} carried out`).join('; ')})`,
  );
});

// ---- arbitraries -------------------------------------------------------------------------------------------

/** Any string: ASCII, any Unicode, lone surrogates, control characters, and now and then a huge one. */
const anyString = fc.oneof(
  { weight: 4, arbitrary: fc.string() },
  { weight: 3, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme' }) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\n\t',
      '\u0000',
      '💥',
      'null',
      '{}',
      '__proto__',
      'constructor',
      "'; DROP TABLE turns; --",
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }), fc.integer({ min: 1_000, max: 60_000 }))
      .map(([s, n]) => s.repeat(n)),
  },
);

/** What GraphQL may receive for a field typed otherwise: the coercion must refuse it cleanly. */
const wrongType = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
);

const json = fc.jsonValue({ maxDepth: 4 });

/** A field value: mostly right-typed (from `valid`), sometimes anything. */
const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: wrongType });

// ---- the server under fuzz -----------------------------------------------------------------------------------

interface Fuzzed {
  h: Harness;
  db: DbObserver;
  /** Sends one operation; checks what every answer must satisfy; returns the body and whether it was an error. */
  send(
    user: User,
    query: string,
    variables: unknown,
    payload: (data: any) => any,
  ): Promise<{ body: any; failed: boolean }>;
  /** Runs `request`; if its answer is an error, the database must be as before. */
  unchangedOnError(target: string, run: () => Promise<{ failed: boolean }>): Promise<void>;
  close(): Promise<void>;
}

async function fuzzedServer(): Promise<Fuzzed> {
  const h = await startHarness({ config, onError: () => {} });
  const db = new DbObserver(h.database);
  return {
    h,
    db,
    async send(user, query, variables, payload) {
      const response = await fetch(h.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...as(user) },
        body: JSON.stringify({ query, variables }),
      });
      expect(response.status).toBeLessThan(500);
      const body = (await response.json()) as { data?: any; errors?: { message: string }[] };
      for (const error of body.errors ?? []) expect(error.message).not.toBe('Unexpected error.');
      const result = body.data ? payload(body.data) : null;
      const failed = Boolean(body.errors?.length) || !result || result.userErrors.length > 0;
      if (!body.errors?.length) expect(result).toBeTruthy();
      return { body, failed };
    },
    async unchangedOnError(target, run) {
      await h.server.services.runner.idle();
      const before = await db.snapshot();
      const { failed } = await run();
      // A background turn the request started runs on: wait for it before comparing.
      await h.server.services.runner.idle();
      if (failed) expect(await db.snapshot()).toEqual(before);
      record(target, failed);
    },
    async close() {
      await db.close();
      await h.close();
    },
  };
}

/** Percent-encodes every byte, valid UTF-8 or not. */
const percent = (bytes: Buffer) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

async function stillServes(h: Harness): Promise<void> {
  expect((await fetch(h.url.replace('/graphql', '/healthz'))).status).toBe(200);
  const started = dataOf(
    await h.gql(START_TURN, { input: { agentId: 'demo', message: 'list entities' } }, as('alice')),
  ).startTurn;
  expect(started.userErrors).toEqual([]);
  expect(started.turn.status).toBe('COMPLETED');
}

const RUNS = { startTurn: 250, resolveElicitation: 300, updateAgent: 250, raw: 250 };

describe('fuzzing every mutation over HTTP', () => {
  it(`startTurn: ${RUNS.startTurn} random inputs`, async () => {
    const s = await fuzzedServer();
    try {
      const own = dataOf(
        await s.h.gql(START_TURN, { input: { agentId: 'demo', message: 'list entities' } }, as('alice')),
      ).startTurn.thread.id;
      const bobs = dataOf(
        await s.h.gql(START_TURN, { input: { agentId: 'demo', message: 'list entities' } }, as('bob')),
      ).startTurn.thread.id;
      const message = fc.oneof(
        { weight: 3, arbitrary: anyString },
        {
          weight: 2,
          arbitrary: fc
            .tuple(
              fc.constantFrom('delete entities', 'remove', 'create', 'list', 'show'),
              fc.array(fc.integer(), { maxLength: 4 }),
            )
            .map(([verb, ids]) => `${verb} ${ids.join(', ')}`),
        },
      );
      const input = fc.record(
        {
          agentId: field(fc.oneof({ weight: 4, arbitrary: fc.constant('demo') }, { weight: 1, arbitrary: anyString })),
          threadId: field(
            fc.oneof(
              { weight: 3, arbitrary: fc.constant(null) },
              { weight: 2, arbitrary: fc.constant(own) },
              fc.constant(bobs),
              fc.constant(`thr_${'0'.repeat(32)}`),
              anyString,
            ),
          ),
          message: field(message),
          background: field(fc.boolean()),
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(input, fc.constantFrom<User>('alice', 'alice', 'bob'), async (value, user) => {
          await s.unchangedOnError('startTurn', () => s.send(user, START_TURN, { input: value }, (d) => d.startTurn));
        }),
        { numRuns: RUNS.startTurn },
      );
      held.add('startTurn');
      await stillServes(s.h);
    } finally {
      await s.close();
    }
  }, 120_000);

  it(`resolveElicitation: ${RUNS.resolveElicitation} random inputs`, async () => {
    const s = await fuzzedServer();
    try {
      let n = 0;
      const pause = async (user: User) => {
        const started = dataOf(
          await s.h.gql(START_TURN, { input: { agentId: 'demo', message: `delete entities ${1000 + n++}` } }, as(user)),
        ).startTurn;
        return started.turn.pendingElicitations[0].id as string;
      };
      const pool = { alicePending: [await pause('alice')], bobPending: await pause('bob'), resolved: [] as string[] };
      const ids = fc.oneof(
        { weight: 5, arbitrary: fc.constant('alice-pending') },
        { weight: 1, arbitrary: fc.constant('bob-pending') },
        { weight: 1, arbitrary: fc.constant('resolved') },
        { weight: 2, arbitrary: anyString },
        {
          weight: 1,
          arbitrary: fc
            .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 })
            .map((hex) => `elc_${hex}`),
        },
      );
      const content = fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant(null) },
        { weight: 3, arbitrary: fc.record({ instructions: anyString }) },
        { weight: 2, arbitrary: json },
        { weight: 1, arbitrary: fc.dictionary(anyString, json, { maxKeys: 4 }) },
        {
          weight: 1,
          arbitrary: fc.record({
            instructions: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string())),
          }),
        },
      );
      const action = field(
        fc.oneof(
          { weight: 8, arbitrary: fc.constantFrom('ACCEPT', 'DECLINE', 'CANCEL') },
          { weight: 1, arbitrary: anyString },
        ),
      );
      await fc.assert(
        fc.asyncProperty(
          ids,
          action,
          content,
          fc.constantFrom<User>('alice', 'alice', 'alice', 'bob'),
          async (which, act, answer, user) => {
            if (pool.alicePending.length === 0) pool.alicePending.push(await pause('alice'));
            const elicitationId =
              which === 'alice-pending'
                ? pool.alicePending[0]
                : which === 'bob-pending'
                  ? pool.bobPending
                  : which === 'resolved'
                    ? (pool.resolved.at(-1) ?? 'elc_none')
                    : which;
            const input: Record<string, unknown> = { elicitationId, action: act };
            if (answer !== undefined) input.content = answer;
            await s.unchangedOnError('resolveElicitation', async () => {
              const sent = await s.send(user, RESOLVE, { input }, (d) => d.resolveElicitation);
              if (!sent.failed && user === 'alice' && which === 'alice-pending')
                pool.resolved.push(pool.alicePending.shift()!);
              // Nobody answers another user's elicitation.
              if (user === 'bob' && which === 'alice-pending') expect(sent.failed).toBe(true);
              if (user === 'alice' && which === 'bob-pending') expect(sent.failed).toBe(true);
              return sent;
            });
          },
        ),
        { numRuns: RUNS.resolveElicitation },
      );
      held.add('resolveElicitation');
      await stillServes(s.h);
    } finally {
      await s.close();
    }
  }, 120_000);

  it(`updateAgent: ${RUNS.updateAgent} random inputs`, async () => {
    const s = await fuzzedServer();
    try {
      const toolIds = ['demo:list_entities', 'demo:create_entity', 'demo:delete_entities'];
      const int = fc.oneof(
        fc.integer(),
        fc.integer({ min: -10, max: 40 * 24 * 3600 }),
        fc.constantFrom(0, 1, 2_592_000, 2_592_001, 2 ** 31 - 1, -(2 ** 31)),
        fc.constantFrom(2 ** 31, 2 ** 53, 1.5, -0, Number.MAX_SAFE_INTEGER),
      );
      const input = fc.record(
        {
          agentId: field(fc.oneof(fc.constant('demo'), anyString)),
          requireToolConfirmation: field(fc.boolean()),
          pauseTtlSeconds: field(int),
          toolConfirmation: field(
            fc.array(
              fc.record(
                {
                  toolId: field(fc.oneof(fc.constantFrom(...toolIds), anyString)),
                  mode: field(
                    fc.oneof(
                      { weight: 6, arbitrary: fc.constantFrom('ALWAYS', 'NEVER', 'BY_ANNOTATION') },
                      { weight: 1, arbitrary: anyString },
                    ),
                  ),
                },
                { requiredKeys: [] },
              ),
              { maxLength: 5 },
            ),
          ),
        },
        { requiredKeys: [] },
      );
      const UPDATE = `mutation($input: UpdateAgentInput!) { updateAgent(input: $input) {
        agent { id requireToolConfirmation pauseTtlSeconds tools { toolId confirmation requiresConfirmation } } userErrors { code message field } } }`;
      await fc.assert(
        fc.asyncProperty(input, fc.constantFrom<User>('root', 'root', 'alice'), async (value, user) => {
          await s.unchangedOnError('updateAgent', async () => {
            const sent = await s.send(user, UPDATE, { input: value }, (d) => d.updateAgent);
            if (user !== 'root' && sent.body.data)
              expect(sent.body.data.updateAgent.userErrors).toEqual([expect.objectContaining({ code: 'FORBIDDEN' })]);
            return sent;
          });
        }),
        { numRuns: RUNS.updateAgent },
      );
      held.add('updateAgent');
      // The last random update may have left list_entities on ALWAYS: gating off, so that "still serves" means a
      // completed turn whatever the fuzz ended on.
      dataOf(await s.h.gql(UPDATE, { input: { agentId: 'demo', requireToolConfirmation: false } }, as('root')));
      await stillServes(s.h);
    } finally {
      await s.close();
    }
  }, 120_000);

  it(`raw requests: ${RUNS.raw} random bodies, documents, methods and headers`, async () => {
    const s = await fuzzedServer();
    try {
      const body = fc.oneof(
        anyString,
        json.map((v) => JSON.stringify(v)),
        fc
          .record({ query: anyString, variables: json, operationName: fc.oneof(anyString, json) }, { requiredKeys: [] })
          .map((v) => JSON.stringify(v)),
        fc
          .array(fc.record({ query: fc.constant('{ viewer { id } }') }), { maxLength: 3 })
          .map((v) => JSON.stringify(v)),
        fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
      );
      const request = fc.record({
        method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'),
        path: fc.oneof(
          fc.constant('/graphql'),
          fc.constant('/healthz'),
          anyString.map((p) => `/graphql?query=${percent(Buffer.from(p.slice(0, 2000)))}`),
          fc.uint8Array({ maxLength: 40 }).map((bytes) => `/graphql?query=${percent(Buffer.from(bytes))}`),
          fc.string().map((p) => `/${percent(Buffer.from(p))}`),
        ),
        contentType: fc.constantFrom(
          'application/json',
          'application/graphql-response+json',
          'application/graphql',
          'text/plain',
          'multipart/form-data; boundary=x',
          'application/x-www-form-urlencoded',
          '',
        ),
        accept: fc.constantFrom('*/*', 'application/json', 'text/event-stream', 'text/html', 'multipart/mixed', ''),
        user: fc.constantFrom<User | null>('alice', 'root', null),
        body,
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          await s.unchangedOnError('raw HTTP', async () => {
            const abort = new AbortController();
            const timer = setTimeout(() => abort.abort(), 2_000); // a subscription stream stays open: read its head only
            try {
              const response = await fetch(`${s.h.url.replace('/graphql', '')}${r.path}`, {
                method: r.method,
                headers: {
                  ...(r.contentType && { 'content-type': r.contentType }),
                  ...(r.accept && { accept: r.accept }),
                  ...(r.user && as(r.user)),
                },
                body: r.method === 'GET' ? undefined : r.body,
                signal: abort.signal,
              });
              expect(response.status).toBeLessThan(500);
              const text = await response.text().catch(() => '');
              expect(text).not.toContain('Unexpected error.');
              // Only the fixed mutation-free documents above run; anything that ran and changed state counts as success.
              return { failed: response.status >= 400 || /"errors"/.test(text) };
            } finally {
              clearTimeout(timer);
            }
          });
        }),
        { numRuns: RUNS.raw },
      );
      held.add('raw HTTP');
      await stillServes(s.h);
    } finally {
      await s.close();
    }
  }, 120_000);
});
