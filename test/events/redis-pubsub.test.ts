// The Redis-backed ToolgatePubSub against the real Redis at 127.0.0.1:6379 (REDIS_URL overrides): two pub/subs
// stand for two instances. Fails (does not skip) when Redis cannot be reached.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import type { ElicitationRecord, TurnRecord } from '../../src/domain/records.js';
import { openPubSub } from '../../src/events/index.js';
import type { ToolgatePubSub, TurnTextDelta } from '../../src/events/pubsub.js';
import { createRedisPubSub } from '../../src/events/redis-pubsub.js';
import { connectRedisAdmin, REDIS_URL, type RedisAdmin } from '../support/redis.js';
import { until } from '../support/wait.js';

/** One prefix per test file, so that runs and files sharing the Redis never see each other's events. */
const PREFIX = `toolgate-test:${randomUUID()}:`;

let admin: RedisAdmin;
const opened: ToolgatePubSub[] = [];

async function open(prefix = PREFIX): Promise<ToolgatePubSub> {
  const pubsub = await createRedisPubSub({ url: REDIS_URL, prefix, where: 'REDIS_URL' });
  opened.push(pubsub);
  return pubsub;
}

/** Redis subscriptions (all processes) of one channel. */
const subscribers = (channel: string) => admin.subscribers(channel);

const turn = (id: string, status: TurnRecord['status'] = 'PAUSED'): TurnRecord => ({
  id,
  threadId: 'thr_1',
  agentId: 'tester',
  ownerId: 'alice',
  status,
  text: 'Run it?',
  error: null,
  iterations: 2,
  step: {
    version: 1,
    calls: [
      {
        toolCall: { id: 'c1', name: 'rm', toolId: 't:rm', arguments: { path: '/x' } },
        outcome: { kind: 'confirm', elicitationId: 'eli_1' },
      },
    ],
  },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:01.000Z',
  expiresAt: '2026-01-01T01:00:00.000Z',
});

const elicitation = (id: string, ownerId: string): ElicitationRecord => ({
  id,
  turnId: 'trn_1',
  threadId: 'thr_1',
  agentId: 'tester',
  ownerId,
  toolCallId: 'c1',
  status: 'PENDING',
  request: {
    message: 'Run rm?',
    requestedSchema: { type: 'object', properties: {} },
    _meta: { 'toolgate.dev/tool_call': { name: 'rm' } },
  },
  toolCall: {
    name: 'rm',
    toolId: 't:rm',
    arguments: { path: '/x', n: 1.5, deep: [null, true] },
    annotations: { destructiveHint: true },
  },
  response: null,
  grantId: null,
  resolvedBy: null,
  resolvedByIdentity: null,
  withdrawn: null,
  callerWaitingUntil: null,
  resolvedAt: null,
  approval: null,
  escalatedAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T01:00:00.000Z',
});

beforeAll(async () => {
  admin = await connectRedisAdmin();
});

afterAll(async () => {
  await Promise.all(opened.map((pubsub) => pubsub.close()));
  await admin.quit();
});

describe('Redis pub/sub between instances', () => {
  it('delivers a record published on one instance to every subscriber on another, as one object per process, equal to what was published', async () => {
    const a = await open();
    const b = await open();
    const first = a.subscribe('turn', 'trn_r1');
    const second = a.subscribe('turn', 'trn_r1');
    await Promise.all([first.listening, second.listening]);
    // One Redis subscription for the channel, however many local subscribers.
    expect(await subscribers(`${PREFIX}turn:trn_r1`)).toBe(1);
    const published = turn('trn_r1');
    b.publish('turn', 'trn_r1', published);
    const [one, two] = await Promise.all([first.next(), second.next()]);
    expect(one.value).toEqual(published);
    expect(one.value).toBe(two.value);
    await first.return();
    expect(await subscribers(`${PREFIX}turn:trn_r1`)).toBe(1);
    await second.return();
    await until(async () => (await subscribers(`${PREFIX}turn:trn_r1`)) === 0, 'the UNSUBSCRIBE');
  });

  it('routes by topic and key, and the publisher receives its own events too', async () => {
    const a = await open();
    const b = await open();
    const alice = a.subscribe('elicitations', 'alice');
    const bob = a.subscribe('elicitations', 'bob');
    const local = b.subscribe('elicitations', 'alice');
    await Promise.all([alice.listening, bob.listening, local.listening]);
    b.publish('elicitations', 'bob', elicitation('eli_b', 'bob'));
    b.publish('elicitations', 'alice', elicitation('eli_a', 'alice'));
    expect((await alice.next()).value).toEqual(elicitation('eli_a', 'alice'));
    expect((await bob.next()).value).toEqual(elicitation('eli_b', 'bob'));
    expect((await local.next()).value).toEqual(elicitation('eli_a', 'alice'));
    await Promise.all([alice.return(), bob.return(), local.return()]);
  });

  it("merges a turn's changes and its streamed text into one stream on another instance, in publish order", async () => {
    const a = await open();
    const b = await open();
    const events = a.subscribeMany([
      { topic: 'turn', key: 'trn_m1' },
      { topic: 'turnText', key: 'trn_m1' },
    ]);
    await events.listening;
    // Both channels are live on Redis once `listening` resolved.
    expect(await subscribers(`${PREFIX}turn:trn_m1`)).toBe(1);
    expect(await subscribers(`${PREFIX}turnText:trn_m1`)).toBe(1);
    const delta = (index: number, offset: number, text: string): TurnTextDelta => ({
      kind: 'textDelta',
      turnId: 'trn_m1',
      iteration: 1,
      index,
      offset,
      text,
    });
    b.publish('turn', 'trn_m1', turn('trn_m1', 'RUNNING'));
    b.publish('turnText', 'trn_m1', delta(0, 0, 'Hel'));
    b.publish('turnText', 'trn_m1', delta(1, 3, 'lo.'));
    b.publish('turnText', 'trn_m2', delta(0, 0, 'not this turn'));
    b.publish('turn', 'trn_m1', turn('trn_m1', 'COMPLETED'));
    const received = [];
    for (let i = 0; i < 4; i++) received.push((await events.next()).value);
    expect(received).toEqual([
      turn('trn_m1', 'RUNNING'),
      delta(0, 0, 'Hel'),
      delta(1, 3, 'lo.'),
      turn('trn_m1', 'COMPLETED'),
    ]);
    // One return() leaves both channels.
    await events.return();
    await until(async () => (await subscribers(`${PREFIX}turnText:trn_m1`)) === 0, 'the UNSUBSCRIBE of the text');
    expect(await subscribers(`${PREFIX}turn:trn_m1`)).toBe(0);
  });

  it('keeps deployments with different prefixes apart', async () => {
    const a = await open();
    const other = await open(`${PREFIX}other:`);
    const mine = a.subscribe('turn', 'trn_p');
    const theirs = other.subscribe('turn', 'trn_p');
    await Promise.all([mine.listening, theirs.listening]);
    other.publish('turn', 'trn_p', turn('trn_p', 'COMPLETED'));
    a.publish('turn', 'trn_p', turn('trn_p', 'RUNNING'));
    expect((await theirs.next()).value.status).toBe('COMPLETED');
    expect((await mine.next()).value.status).toBe('RUNNING');
    // Nothing else is queued for either.
    const extra = await Promise.race([mine.next(), new Promise((resolve) => setTimeout(() => resolve('none'), 200))]);
    expect(extra).toBe('none');
    await Promise.all([mine.return(), theirs.return()]);
  });

  it('resumes subscriptions after Redis dropped the subscriber connection (CLIENT KILL)', async () => {
    const a = await open();
    const b = await open();
    const updates = a.subscribe('turn', 'trn_k');
    await updates.listening;
    b.publish('turn', 'trn_k', turn('trn_k', 'RUNNING'));
    expect((await updates.next()).value.status).toBe('RUNNING');
    // The subscriber connections of this file's prefix only (CLIENT KILL TYPE pubsub would hit other test files).
    expect(await admin.killSubscribers(PREFIX)).toBeGreaterThanOrEqual(1);
    await until(async () => (await subscribers(`${PREFIX}turn:trn_k`)) === 0, 'the killed subscription to go');
    // ioredis reconnects and subscribes again by itself.
    await until(async () => (await subscribers(`${PREFIX}turn:trn_k`)) === 1, 'the re-subscription');
    b.publish('turn', 'trn_k', turn('trn_k', 'COMPLETED'));
    expect((await updates.next()).value.status).toBe('COMPLETED');
    await updates.return();
  });

  it('ends its subscriptions and disconnects on close()', async () => {
    const a = await createRedisPubSub({ url: REDIS_URL, prefix: PREFIX });
    const updates = a.subscribe('turn', 'trn_c');
    await updates.listening;
    expect(await subscribers(`${PREFIX}turn:trn_c`)).toBe(1);
    await a.close();
    expect((await updates.next()).done).toBe(true);
    await until(async () => (await subscribers(`${PREFIX}turn:trn_c`)) === 0, 'the subscriber connection to go');
    // Publishing after close is a no-op, not an unhandled rejection.
    a.publish('turn', 'trn_c', turn('trn_c'));
    expect((await a.subscribe('turn', 'trn_c').next()).done).toBe(true);
  });
});

describe('shutdown', () => {
  it('endSubscriptions() ends local subscriptions but still publishes to other instances until close()', async () => {
    const a = await createRedisPubSub({ url: REDIS_URL, prefix: PREFIX });
    const b = await open();
    const local = a.subscribe('turn', 'trn_s');
    const remote = b.subscribe('turn', 'trn_s');
    await Promise.all([local.listening, remote.listening]);
    await a.endSubscriptions();
    expect((await local.next()).done).toBe(true);
    expect((await a.subscribe('turn', 'trn_s').next()).done).toBe(true);
    a.publish('turn', 'trn_s', turn('trn_s', 'COMPLETED'));
    expect((await remote.next()).value.status).toBe('COMPLETED');
    await a.close();
    a.publish('turn', 'trn_s', turn('trn_s', 'FAILED'));
    const extra = await Promise.race([remote.next(), new Promise((resolve) => setTimeout(() => resolve('none'), 200))]);
    expect(extra).toBe('none');
    await remote.return();
  });
});

describe('choosing and checking the pub/sub', () => {
  it('is in process without TOOLGATE_REDIS or a pubsub section', async () => {
    const pubsub = await openPubSub({ env: {} });
    const updates = pubsub.subscribe('turn', 'trn_i');
    pubsub.publish('turn', 'trn_i', turn('trn_i'));
    const published = await updates.next();
    expect(published.value).toEqual(turn('trn_i'));
    await pubsub.close();
  });

  it('fails the start with one line naming host, port and the cause, without the password', async () => {
    await expect(openPubSub({ env: { TOOLGATE_REDIS: 'redis://127.0.0.1:6390' } })).rejects.toThrow(
      new ConfigError('TOOLGATE_REDIS: Redis at 127.0.0.1:6390 cannot be reached (connection refused)'),
    );
    const fromFile = openPubSub({
      config: { redis: 'redis://user:s3cret-pw@127.0.0.1:6390/2' },
      configFile: '/etc/toolgate.json',
    });
    await expect(fromFile).rejects.toThrow(
      '/etc/toolgate.json: pubsub.redis: Redis at 127.0.0.1:6390 cannot be reached (connection refused)',
    );
    await expect(fromFile).rejects.not.toThrow(/s3cret/);
    await expect(openPubSub({ env: { TOOLGATE_REDIS: 'redis://no-such-host.invalid:6379' } })).rejects.toThrow(
      'TOOLGATE_REDIS: Redis at no-such-host.invalid:6379 cannot be reached (host not found)',
    );
    await expect(openPubSub({ env: { TOOLGATE_REDIS: 'http://127.0.0.1:6379' } })).rejects.toThrow(
      'TOOLGATE_REDIS: expected a redis:// or rediss:// URL, got http://…',
    );
  });

  it('TOOLGATE_REDIS overrides the config section, keeping its prefix', async () => {
    const pubsub = await openPubSub({
      env: { TOOLGATE_REDIS: REDIS_URL },
      config: { redis: 'redis://127.0.0.1:6390', prefix: PREFIX },
    });
    opened.push(pubsub);
    const updates = pubsub.subscribe('turn', 'trn_o');
    await updates.listening;
    expect(await subscribers(`${PREFIX}turn:trn_o`)).toBe(1);
    await updates.return();
  });
});
