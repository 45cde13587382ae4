// startTurn's idempotency key over real HTTP, what the API and the server add to the use case's rule
// (test/app/start-turn.test.ts): a request sent again after an error response or a client's timeout gets the turn the
// first one started; the sweep forgets a key after its hours; the key's refusals as userErrors. Answers' idempotency
// is the use case's (test/app/answer-elicitation.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, START_TURN, TEST_BACKEND, type GraphQLResponse } from '../support/harness.js';
import type { Model } from '../../src/models/model.js';
import { memoryLog } from '../support/log.js';
import {
  AGENT_ID,
  deferred,
  manualClock,
  startScenario,
  testConfig,
  textStep,
  type Scenario,
} from '../support/scenario.js';

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

describe('startTurn with an idempotency key', () => {
  const startKeyed = async (idempotencyKey: string, message = 'Hello', extra: Record<string, unknown> = {}) =>
    dataOf(await s.h.gql(START_TURN, { input: { agentId: AGENT_ID, message, idempotencyKey, ...extra } })).startTurn;

  /** The viewer's threads, each with its turns and its USER messages: what the starts made. */
  const everything = async () =>
    dataOf(
      await s.h.gql(`{ threads(first: 50) { edges { node { id turns { id status } messages { role text } } } } }`),
    ).threads.edges.map(({ node }: any) => ({
      thread: node.id,
      turns: node.turns,
      users: node.messages.filter((m: any) => m.role === 'USER').map((m: any) => m.text),
    }));

  /** A model whose answers wait until the test releases them. */
  function heldModel() {
    const release = deferred();
    const held = { calls: 0, release: () => release.resolve() };
    const model: Model = {
      async generate() {
        held.calls++;
        await release.promise;
        return { text: 'Done.', toolCalls: [] };
      },
    };
    return { held, model };
  }

  it.skipIf(TEST_BACKEND === 'postgres')(
    'the WAL fsync fails after the turn committed: the response is an error, the retry with the key gets that turn',
    async () => {
      let failing = false;
      const log = memoryLog();
      s = await startScenario({
        script: [textStep('Hi there.')],
        logger: log.logger,
        syncFile: async () => {
          if (failing) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
        },
      });
      failing = true;
      const input = { agentId: AGENT_ID, message: 'Hello', idempotencyKey: 'req-1' };
      const lost: GraphQLResponse = await s.h.gql(START_TURN, { input });
      expect(lost.errors?.map((e) => e.message)).toEqual(['Unexpected error.']); // committed, but not said so
      expect(log.find('unexpected fault').length).toBeGreaterThan(0);
      failing = false;

      const retry = dataOf(await s.h.gql(START_TURN, { input })).startTurn;
      expect(retry.userErrors).toEqual([]);
      expect(retry.turn).toMatchObject({ status: 'COMPLETED', text: 'Hi there.' });
      expect(await everything()).toEqual([
        { thread: retry.thread.id, turns: [{ id: retry.turn.id, status: 'COMPLETED' }], users: ['Hello'] },
      ]);
      expect(s.model.requests).toHaveLength(1);
    },
  );

  it('the client gives up on the first request while its turn runs: the retry waits for that turn, not a new one', async () => {
    const { held, model } = heldModel();
    s = await startScenario({ model });
    const input = { agentId: AGENT_ID, message: 'Hello', idempotencyKey: 'req-1' };
    const abort = new AbortController();
    const first = fetch(s.h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: START_TURN, variables: { input } }),
      signal: abort.signal,
    });
    await expect.poll(() => held.calls).toBe(1); // the turn is committed and running
    abort.abort();
    await expect(first).rejects.toThrow();

    const retry = s.h.gql(START_TURN, { input });
    held.release();
    const { startTurn } = dataOf(await retry);
    expect(startTurn.userErrors).toEqual([]);
    expect(startTurn.turn).toMatchObject({ status: 'COMPLETED', text: 'Done.' });
    expect(await everything()).toEqual([
      { thread: startTurn.thread.id, turns: [{ id: startTurn.turn.id, status: 'COMPLETED' }], users: ['Hello'] },
    ]);
    expect(held.calls).toBe(1);
  });

  it('a key is kept 24 hours; the sweep after that deletes it, and the key then starts a new turn', async () => {
    const clock = manualClock();
    s = await startScenario({ script: [textStep('Hi there.')], clock: clock.now });
    const first = await startKeyed('req-1');
    clock.advance(24 * 3600 - 1);
    expect(await s.h.server.sweep()).toMatchObject({ deletedIdempotencyKeys: 0 });
    expect((await startKeyed('req-1')).turn.id).toBe(first.turn.id);
    clock.advance(2);
    expect(await s.h.server.sweep()).toMatchObject({ deletedIdempotencyKeys: 1 });
    const after = await startKeyed('req-1');
    expect(after.userErrors).toEqual([]);
    expect(after.turn.id).not.toBe(first.turn.id);
  });

  it('sweeper.idempotencyKeyHours sets how long a key is kept', async () => {
    const clock = manualClock();
    const config = testConfig();
    config.sweeper = { idempotencyKeyHours: 1 };
    s = await startScenario({ script: [textStep('Hi there.')], clock: clock.now, config });
    const first = await startKeyed('req-1');
    clock.advance(3600 - 1);
    expect(await s.h.server.sweep()).toMatchObject({ deletedIdempotencyKeys: 0 });
    expect((await startKeyed('req-1')).turn.id).toBe(first.turn.id);
    clock.advance(2);
    expect(await s.h.server.sweep()).toMatchObject({ deletedIdempotencyKeys: 1 });
    expect((await startKeyed('req-1')).turn.id).not.toBe(first.turn.id);
  });

  it('a refused key is a userError on input.idempotencyKey, in words, and nothing is written', async () => {
    s = await startScenario({ script: [textStep('Hi there.')] });
    const refusals: [string, string, string][] = [
      ['', 'INVALID_INPUT', 'The idempotency key is empty.'],
      ['k'.repeat(256), 'INVALID_INPUT', 'The idempotency key is longer than 255 characters.'],
      [
        'a\u0000b',
        'INVALID_INPUT',
        'The idempotency key contains a NUL character or an unpaired UTF-16 surrogate, which is not text.',
      ],
    ];
    for (const [key, code, message] of refusals) {
      expect(await startKeyed(key)).toEqual({
        turn: null,
        thread: null,
        userErrors: [{ code, message, field: ['input', 'idempotencyKey'] }],
      });
    }
    expect(await everything()).toEqual([]);
    await startKeyed('req-1');
    const before = await everything();
    expect(await startKeyed('req-1', 'Something else')).toEqual({
      turn: null,
      thread: null,
      userErrors: [
        {
          code: 'IDEMPOTENCY_KEY_REUSED',
          message:
            'This idempotency key was already used for another request (another agent, thread or message); ' +
            'use a new key for a new message.',
          field: ['input', 'idempotencyKey'],
        },
      ],
    });
    expect(await everything()).toEqual(before);
  });
});
