// Two toolgate servers on one SQLite file, each with its own Redis pub/sub (real Redis at 127.0.0.1:6379, REDIS_URL
// overrides; one channel prefix for this file): what happens on one reaches the graphql-ws subscribers of the other,
// and only those it belongs to. And the real CLI with TOOLGATE_REDIS / a `pubsub` section. Fails when Redis is down.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { createRedisPubSub } from '../../src/events/redis-pubsub.js';
import { runCli } from '../support/cli.js';
import { dataOf, RESOLVE, START_TURN, startHarness, tempDir, type Harness } from '../support/harness.js';
import { connectWs, subscribeWs } from '../support/live.js';
import { connectRedisAdmin, REDIS_URL, type RedisAdmin } from '../support/redis.js';
import { until } from '../support/wait.js';

const PREFIX = `toolgate-test:${randomUUID()}:`;

const TOKENS = { alice: 'alice-token-5d6e7f8a9b0c1d2e', bob: 'bob-token-2e1d0c9b8a7f6e5d' };
const as = (user: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[user]}` });
const config: ToolgateConfig = {
  ...demoConfig,
  auth: {
    tokens: [
      { token: TOKENS.alice, user: 'alice', admin: false },
      { token: TOKENS.bob, user: 'bob', admin: false },
    ],
  },
};

const ELICITATION_REQUESTED = `subscription($includePending: Boolean) {
  elicitationRequested(includePending: $includePending) {
    id status message toolCall { toolId arguments } createdAt expiresAt turn { id status }
  }
}`;
const TURN_UPDATED = `subscription($turnId: ID!) {
  turnUpdated(turnId: $turnId) { id status text messages { role text } pendingElicitations { id } elicitations { id status } }
}`;

const { dir, cleanup } = tempDir();
let admin: RedisAdmin;
let a: Harness;
let b: Harness;

/** Redis subscriptions (of every process) of one channel of this file. */
const subscribers = (channel: string) => admin.subscribers(`${PREFIX}${channel}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  admin = await connectRedisAdmin();
  const database = join(dir, 'shared.db');
  a = await startHarness({ config, database, pubsub: await createRedisPubSub({ url: REDIS_URL, prefix: PREFIX }) });
  b = await startHarness({ config, database, pubsub: await createRedisPubSub({ url: REDIS_URL, prefix: PREFIX }) });
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await admin?.quit();
  cleanup();
});

describe('two instances on one database, one Redis', () => {
  it("delivers a pause made on B to the owner's elicitationRequested on A, and never to another user", async () => {
    const aliceWs = connectWs(a.url, as('alice').authorization);
    const bobWs = connectWs(a.url, as('bob').authorization);
    try {
      const alice = subscribeWs(aliceWs, ELICITATION_REQUESTED);
      const bob = subscribeWs(bobWs, ELICITATION_REQUESTED);
      const bobCatchUp = subscribeWs(bobWs, ELICITATION_REQUESTED, { includePending: true });
      // Both listen on A once A's SUBSCRIBEs are confirmed: alice's channel, and bob's (one for his two).
      await until(async () => (await subscribers('elicitations:alice')) === 1, "A's subscription of alice");
      await until(async () => (await subscribers('elicitations:bob')) === 1, "A's subscription of bob");

      const started = dataOf(
        await b.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1, 2 and 3' } }, as('alice')),
      ).startTurn;
      expect(started.turn.status).toBe('PAUSED');
      const pause = started.turn.pendingElicitations[0];

      const received = await alice.waitFor(() => true, 'the pause on A');
      expect(received.errors).toBeUndefined();
      // What A's resolvers made of the record that crossed Redis as JSON: as B's own response has it.
      expect(received.data.elicitationRequested).toEqual({
        id: pause.id,
        status: 'PENDING',
        message: pause.message,
        toolCall: { toolId: pause.toolCall.toolId, arguments: pause.toolCall.arguments },
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        expiresAt: pause.expiresAt,
        turn: { id: started.turn.id, status: 'PAUSED' },
      });
      // Bob's subscriptions on A: nothing of alice's, live or caught up.
      await sleep(300);
      expect(bob.events).toEqual([]);
      expect(bobCatchUp.events).toEqual([]);
      expect(alice.events).toHaveLength(1);
    } finally {
      await Promise.all([aliceWs.dispose(), bobWs.dispose()]);
    }
  });

  it('follows a turn answered on B to COMPLETED with turnUpdated on A; another user gets NOT_FOUND', async () => {
    const started = dataOf(
      await b.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 4 and 5' } }, as('alice')),
    ).startTurn;
    expect(started.turn.status).toBe('PAUSED');
    const turnId = started.turn.id as string;
    const aliceWs = connectWs(a.url, as('alice').authorization);
    const bobWs = connectWs(a.url, as('bob').authorization);
    try {
      const updates = subscribeWs(aliceWs, TURN_UPDATED, { turnId });
      const first = await updates.waitFor(() => true, 'the current state');
      expect(first.data.turnUpdated.status).toBe('PAUSED');
      // The current state comes after A's SUBSCRIBE was confirmed (Subscription.listening).
      expect(await subscribers(`turn:${turnId}`)).toBe(1);

      const snooping = subscribeWs(bobWs, TURN_UPDATED, { turnId });
      await snooping.done;
      expect(snooping.events).toHaveLength(1);
      expect(snooping.events[0]!.data?.turnUpdated ?? null).toBeNull();
      expect(snooping.events[0]!.errors!.map((e: any) => [e.message, e.extensions?.code])).toEqual([
        ['No turn with this id.', 'NOT_FOUND'],
      ]);

      const resolved = dataOf(
        await b.gql(
          RESOLVE,
          { input: { elicitationId: started.turn.pendingElicitations[0].id, action: 'ACCEPT' } },
          as('alice'),
        ),
      ).resolveElicitation;
      expect(resolved.turn.status).toBe('COMPLETED');
      const completed = await updates.waitFor(
        (event) => event.data?.turnUpdated.status === 'COMPLETED',
        'COMPLETED on A',
      );
      expect(completed.data.turnUpdated).toMatchObject({
        id: turnId,
        text: resolved.turn.text,
        pendingElicitations: [],
        elicitations: [{ status: 'ACCEPTED' }],
      });
      expect(completed.data.turnUpdated.messages.map((m: { role: string }) => m.role)).toEqual(
        resolved.turn.messages.map((m: { role: string }) => m.role),
      );
      // Every event on A was one of alice's turn; the statuses went forward only.
      const statuses = updates.events.map((event) => event.data.turnUpdated.status);
      expect(statuses[0]).toBe('PAUSED');
      expect(statuses.at(-1)).toBe('COMPLETED');
    } finally {
      await Promise.all([aliceWs.dispose(), bobWs.dispose()]);
    }
  });

  it('delivers to subscribers on both instances, the one that made the change too', async () => {
    const onA = connectWs(a.url, as('bob').authorization);
    const onB = connectWs(b.url, as('bob').authorization);
    try {
      const fromA = subscribeWs(onA, ELICITATION_REQUESTED);
      const fromB = subscribeWs(onB, ELICITATION_REQUESTED);
      await until(async () => (await subscribers('elicitations:bob')) === 2, 'both instances to subscribe');
      const started = dataOf(
        await a.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 7' } }, as('bob')),
      ).startTurn;
      const id = started.turn.pendingElicitations[0].id;
      expect((await fromA.waitFor(() => true, 'the pause on A')).data.elicitationRequested.id).toBe(id);
      expect((await fromB.waitFor(() => true, 'the pause on B')).data.elicitationRequested.id).toBe(id);
    } finally {
      await Promise.all([onA.dispose(), onB.dispose()]);
    }
  });
});

describe('a lost Redis connection', () => {
  it('is retried, and the subscriptions on A get pauses made on B again once it is back', async () => {
    const aliceWs = connectWs(a.url, as('alice').authorization);
    try {
      const alice = subscribeWs(aliceWs, ELICITATION_REQUESTED);
      await until(async () => (await subscribers('elicitations:alice')) === 1, "A's subscription of alice");
      // Redis drops the subscriber connections of this file's servers that have subscriptions (A's at least).
      expect(await admin.killSubscribers(PREFIX)).toBeGreaterThanOrEqual(1);
      await until(async () => (await subscribers('elicitations:alice')) === 0, 'the subscription to drop');
      await until(async () => (await subscribers('elicitations:alice')) === 1, 'A to subscribe again');

      const started = dataOf(
        await b.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 9' } }, as('alice')),
      ).startTurn;
      const received = await alice.waitFor(() => true, 'the pause on A after the reconnect');
      expect(received.data.elicitationRequested.id).toBe(started.turn.pendingElicitations[0].id);
      // The WebSocket and the subscription lived through it.
      expect(alice.events).toHaveLength(1);
    } finally {
      await aliceWs.dispose();
    }
  });
});

describe('the CLI with Redis', { timeout: 120_000 }, () => {
  it('does not start when TOOLGATE_REDIS cannot be reached: one line, exit 1', async () => {
    const run = await runCli({
      TOOLGATE_DB: join(dir, `${randomUUID()}.db`),
      TOOLGATE_REDIS: 'redis://:hunter2@127.0.0.1:6390',
    }).done;
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'toolgate: TOOLGATE_REDIS: Redis at 127.0.0.1:6390 cannot be reached (connection refused)\n',
    );
    expect(run.stdout).toBe('');
  });

  it("uses the config file's pubsub section: connects with its prefix, and disconnects on SIGTERM", async () => {
    const file = join(dir, 'redis.json');
    writeFileSync(file, JSON.stringify({ ...demoConfig, pubsub: { redis: REDIS_URL, prefix: `${PREFIX}cli:` } }));
    const { child, out, done } = runCli({ TOOLGATE_DB: join(dir, `${randomUUID()}.db`), TOOLGATE_CONFIG: file });
    await until(() => out.stdout.includes('"serving ') || child.exitCode !== null, 'the CLI to listen', 60_000);
    expect(out.stderr).toBe('');
    const clients = () => admin.clients();
    expect(await clients()).toContain(` name=${PREFIX}cli:subscribe `);
    expect(await clients()).toContain(` name=${PREFIX}cli:publish `);
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
    await until(async () => !(await clients()).includes(`name=${PREFIX}cli:`), 'its connections to close');
  });
});
