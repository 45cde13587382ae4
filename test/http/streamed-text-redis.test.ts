// Streamed text across instances: two toolgate servers on one database (SQLite file, or PostgreSQL with
// TOOLGATE_TEST_BACKEND=postgres), each with its own Redis pub/sub (real Redis at 127.0.0.1:6379, REDIS_URL
// overrides). The turn runs on B, its model streaming from the fake Chat Completions server; a graphql-ws client on A
// follows it with turnEvents. Fails when Redis is down.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { createRedisPubSub } from '../../src/events/redis-pubsub.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { dataOf, START_TURN, startHarness, tempDir, TEST_BACKEND, type Harness } from '../support/harness.js';
import { connectWs, subscribeWs, testUsersAuthenticator } from '../support/live.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { REDIS_URL } from '../support/redis.js';
import { deltasOf, eventsOf, TURN_EVENTS, turnsOf, until, type TurnEvent } from '../support/turn-events.js';

const PREFIX = `toolgate-test:${randomUUID()}:`;
const alice = { authorization: 'Bearer alice' };
const bob = { authorization: 'Bearer bob' };

const { dir, cleanup } = tempDir();
let fake: FakeOpenAi;
let a: Harness;
let b: Harness;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  const agent = demoConfig.agents[0]!;
  const config: ToolgateConfig = {
    ...demoConfig,
    models: {
      streamed: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'fake-streamed', stream: true },
    },
    agents: [{ ...agent, id: 'streamed', name: 'Streamed', model: 'streamed' }],
  };
  const database = TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : join(dir, 'shared.db');
  const pubsub = () => createRedisPubSub({ url: REDIS_URL, prefix: PREFIX, where: 'REDIS_URL' });
  a = await startHarness({ config, database, authenticator: testUsersAuthenticator, pubsub: await pubsub() });
  b = await startHarness({ config, database, authenticator: testUsersAuthenticator, pubsub: await pubsub() });
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await fake?.close();
  cleanup();
});

describe('turnEvents across two instances on Redis', () => {
  it("delivers B's streamed text in order to A's subscriber, then the turn B saved; another user gets NOT_FOUND", async () => {
    const answer = 'Text generated on B, read on A, piece by piece.';
    let open!: () => void;
    const ready = new Promise<void>((resolve) => (open = resolve));
    fake.reply({ text: answer, streaming: { delayMs: 15, after: ready } });
    const aliceWs = connectWs(a.url, alice.authorization);
    const bobWs = connectWs(a.url, bob.authorization);
    try {
      const started = dataOf(
        await b.gql(START_TURN, { input: { agentId: 'streamed', message: 'write on B', background: true } }, alice),
      ).startTurn;
      expect(started.turn.status).toBe('RUNNING');
      const turnId = started.turn.id as string;
      const received = subscribeWs<{ turnEvents: TurnEvent }>(aliceWs, TURN_EVENTS, { turnId });
      // The first event (the turn as it is) comes once Redis confirmed A's SUBSCRIBEs (Subscription.listening).
      await received.waitFor(() => true, 'the current turn');
      const snooping = subscribeWs(bobWs, TURN_EVENTS, { turnId });
      await snooping.done;
      open();
      await until(received, ['COMPLETED']);

      const events = eventsOf(received);
      expect(events[0]).toMatchObject({ __typename: 'Turn', id: turnId, status: 'RUNNING' });
      const deltas = deltasOf(events);
      expect(deltas.map((d) => d.delta)).toEqual(answer.match(/.{1,4}/gs));
      expect(deltas.map((d) => d.index)).toEqual(deltas.map((_, i) => i));
      // Every delta before the completed turn, whose saved message is their text put together.
      expect(events.slice(1, 1 + deltas.length)).toEqual(deltas);
      const completed = turnsOf(events).at(-1)!;
      expect(completed).toMatchObject({ status: 'COMPLETED', text: answer });
      expect(completed.messages.at(-1)).toEqual({
        role: 'ASSISTANT',
        text: deltas.map((d) => d.delta).join(''),
        toolCalls: [],
      });

      expect(snooping.events).toHaveLength(1);
      expect(snooping.events[0]!.errors!.map((e: any) => [e.message, e.extensions?.code])).toEqual([
        ['No turn with this id.', 'NOT_FOUND'],
      ]);
      received.stop();
    } finally {
      await Promise.all([aliceWs.dispose(), bobWs.dispose()]);
    }
  });
});
