// Answers are idempotent by elicitation id: the same answer returns the recorded result, a different one gets
// ALREADY_RESOLVED, and concurrent answers over HTTP run the tool at most once. startTurn is idempotent by the
// client's idempotencyKey: a request sent again after an error or a timeout gets the turn the first one started.
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, TEST_BACKEND, type GraphQLResponse } from '../support/harness.js';
import type { Model } from '../../src/models/model.js';
import type { ScriptStep } from '../../src/models/scripted.js';
import type { CountingTool } from '../support/tools.js';
import { testUsersAuthenticator } from '../support/live.js';
import { memoryLog } from '../support/log.js';
import {
  AGENT_ID,
  call,
  callStep,
  deferred,
  manualClock,
  startScenario,
  testConfig,
  textStep,
  toolTexts,
  type Scenario,
} from '../support/scenario.js';

const slowly = (ms: number) => async (args: Record<string, unknown>) => {
  await new Promise((r) => setTimeout(r, ms));
  return `edited ${String(args.id)}`;
};

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

async function paused(
  tools: CountingTool[] = [{ name: 'edit_note' }],
  script: ScriptStep[] = [callStep(call('edit_note', { id: 'n1' })), textStep('Edited.')],
) {
  s = await startScenario({ tools, script });
  const { turn, thread } = await s.start('edit n1');
  expect(turn.status).toBe('PAUSED');
  return { turn, thread };
}

describe('the same answer twice', () => {
  it.each([
    ['ACCEPT', undefined],
    ['ACCEPT', { instructions: 'be brief' }],
    ['DECLINE', { instructions: 'no' }],
    ['CANCEL', undefined],
  ] as const)('%s %j: returns the recorded result and does nothing twice', async (action, content) => {
    const { turn, thread } = await paused();
    const first = await s.resolve(turn.pendingElicitations[0].id, action, content);
    expect(first.userErrors).toEqual([]);
    const requestsAfterFirst = s.model.requests.length;
    const messagesAfterFirst = (await s.thread(thread.id)).messages.length;

    const second = await s.resolve(turn.pendingElicitations[0].id, action, content);
    expect(second.userErrors).toEqual([]);
    expect(second.elicitation).toEqual(first.elicitation);
    expect(second.turn.status).toBe(first.turn.status);
    expect(second.turn.text).toBe(first.turn.text);
    expect(second.turn.messages).toEqual(first.turn.messages);
    expect(s.tools.count('edit_note')).toBe(action === 'ACCEPT' ? 1 : 0);
    expect(s.model.requests.length).toBe(requestsAfterFirst);
    expect((await s.thread(thread.id)).messages.length).toBe(messagesAfterFirst);
    await s.expectConsistent(thread.id);
  });
});

describe('a different answer after the first', () => {
  it.each([
    ['ACCEPT', undefined, 'DECLINE', undefined],
    ['DECLINE', undefined, 'ACCEPT', undefined],
    ['ACCEPT', undefined, 'CANCEL', undefined],
    ['ACCEPT', { instructions: 'a' }, 'ACCEPT', { instructions: 'b' }],
    ['DECLINE', undefined, 'DECLINE', { instructions: 'now with a reason' }],
  ] as const)(
    '%s %j then %s %j: ALREADY_RESOLVED, nothing changes',
    async (action, content, otherAction, otherContent) => {
      const { turn, thread } = await paused();
      const id = turn.pendingElicitations[0].id;
      const first = await s.resolve(id, action, content);
      const before = await s.thread(thread.id);
      const second = await s.resolve(id, otherAction, otherContent);
      expect(second.elicitation).toBeNull();
      expect(second.turn).toBeNull();
      expect(second.userErrors).toEqual([
        expect.objectContaining({ code: 'ALREADY_RESOLVED', field: ['input', 'elicitationId'] }),
      ]);
      expect(await s.thread(thread.id)).toEqual(before);
      const stored = dataOf(
        await s.h.gql(`query($id: ID!) { elicitation(id: $id) { status response { action content } } }`, { id }),
      ).elicitation;
      expect(stored.response).toEqual(first.elicitation.response);
      expect(s.tools.count('edit_note')).toBe(action === 'ACCEPT' ? 1 : 0);
    },
  );
});

describe('concurrent answers over HTTP', () => {
  const N = 20;
  const answerAll = (id: string, actions: string[]) =>
    Promise.all(
      actions.map((action) =>
        s.h.gql(RESOLVE, { input: { elicitationId: id, action } }).then((r) => dataOf(r).resolveElicitation),
      ),
    );

  it(`${N} identical ACCEPTs: the tool runs once and every answer reports the same recorded result`, async () => {
    const { turn, thread } = await paused([{ name: 'edit_note', run: slowly(30) }]);
    const results = await answerAll(turn.pendingElicitations[0].id, Array(N).fill('ACCEPT'));
    expect(s.tools.count('edit_note')).toBe(1);
    for (const result of results) {
      expect(result.userErrors).toEqual([]);
      expect(result.elicitation.status).toBe('ACCEPTED');
      expect(result.elicitation.response).toEqual({ action: 'ACCEPT', content: null });
      // Answers that arrive while the first is still running may see it RUNNING; none sees anything else.
      expect(['RUNNING', 'COMPLETED']).toContain(result.turn.status);
      if (result.turn.status === 'COMPLETED') expect(result.turn.text).toBe('Edited.');
    }
    expect(results.filter((r) => r.turn.status === 'COMPLETED').length).toBeGreaterThan(0);
    const final = await s.turn(turn.id);
    expect(final.status).toBe('COMPLETED');
    expect(toolTexts(final.messages)).toEqual(['edited n1']);
    expect(s.model.requests).toHaveLength(2);
    await s.expectConsistent(thread.id);
  });

  it(`${N} mixed ACCEPT/DECLINE: one answer wins, the same ones succeed, the others get ALREADY_RESOLVED`, async () => {
    const { turn, thread } = await paused([{ name: 'edit_note', run: slowly(10) }]);
    const actions = Array.from({ length: N }, (_, i) => (i % 2 ? 'DECLINE' : 'ACCEPT'));
    const results = await answerAll(turn.pendingElicitations[0].id, actions);
    const stored = await s.turn(turn.id);
    const winner = stored.elicitations[0].response.action as string;
    results.forEach((result, i) => {
      if (actions[i] === winner) {
        expect(result.userErrors).toEqual([]);
        expect(result.elicitation.response.action).toBe(winner);
      } else {
        expect(result.userErrors.map((e: any) => e.code)).toEqual(['ALREADY_RESOLVED']);
      }
    });
    expect(s.tools.count('edit_note')).toBe(winner === 'ACCEPT' ? 1 : 0);
    expect(stored.status).toBe('COMPLETED');
    expect(s.model.requests).toHaveLength(2);
    await s.expectConsistent(thread.id);
  });

  it('concurrent answers to both elicitations of one step: each tool runs once, the turn resumes once', async () => {
    const { turn, thread } = await paused(
      [
        { name: 'edit_note', run: slowly(10) },
        { name: 'archive_note', run: slowly(10) },
      ],
      [
        callStep(call('edit_note', { id: 'n1' }, 'c1'), call('archive_note', { id: 'n2' }, 'c2')),
        textStep('Both done.'),
      ],
    );
    const [a, b] = turn.pendingElicitations;
    await Promise.all([answerAll(a.id, Array(N / 2).fill('ACCEPT')), answerAll(b.id, Array(N / 2).fill('ACCEPT'))]);
    const final = await s.turn(turn.id);
    expect(final.status).toBe('COMPLETED');
    expect(s.tools.count('edit_note')).toBe(1);
    expect(s.tools.count('archive_note')).toBe(1);
    expect(s.model.requests).toHaveLength(2);
    expect(toolTexts(final.messages)).toEqual(['edited n1', 'edited n2']);
    await s.expectConsistent(thread.id);
  });
});

describe('startTurn with an idempotency key', () => {
  const startKeyed = async (idempotencyKey: string, message = 'Hello', extra: Record<string, unknown> = {}) =>
    dataOf(await s.h.gql(START_TURN, { input: { agentId: AGENT_ID, message, idempotencyKey, ...extra } })).startTurn;

  /** The viewer's threads, each with its turns and its USER messages: what the starts made. */
  const everything = async (headers?: Record<string, string>) =>
    dataOf(
      await s.h.gql(
        `{ threads(first: 50) { edges { node { id turns { id status } messages { role text } } } } }`,
        {},
        headers,
      ),
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

  it('ten requests with one key at once: one turn, and every response reports it', async () => {
    s = await startScenario({ script: [textStep('Hi there.')] });
    const results = await Promise.all(Array.from({ length: 10 }, () => startKeyed('req-1')));
    const [first] = results;
    for (const result of results) {
      expect(result.userErrors).toEqual([]);
      expect(result.turn.id).toBe(first.turn.id);
      expect(result.thread.id).toBe(first.thread.id);
      expect(['RUNNING', 'COMPLETED']).toContain(result.turn.status);
    }
    await expect.poll(async () => (await s.turn(first.turn.id)).status).toBe('COMPLETED');
    expect(await everything()).toEqual([
      { thread: first.thread.id, turns: [{ id: first.turn.id, status: 'COMPLETED' }], users: ['Hello'] },
    ]);
    expect(s.model.requests).toHaveLength(1);
  });

  it('a paused first turn: the retry returns it as it is now, PAUSED with the same request, then answered', async () => {
    s = await startScenario({
      tools: [{ name: 'edit_note' }],
      script: [callStep(call('edit_note', { id: 'n1' })), textStep('Edited.')],
    });
    const first = await startKeyed('req-1', 'edit n1');
    expect(first.turn.status).toBe('PAUSED');
    const again = await startKeyed('req-1', 'edit n1');
    expect(again.turn.id).toBe(first.turn.id);
    expect(again.turn.status).toBe('PAUSED');
    expect(again.turn.pendingElicitations.map((e: any) => e.id)).toEqual(
      first.turn.pendingElicitations.map((e: any) => e.id),
    );
    await s.resolve(first.turn.pendingElicitations[0].id, 'ACCEPT');
    const later = await startKeyed('req-1', 'edit n1');
    expect(later.turn).toMatchObject({ id: first.turn.id, status: 'COMPLETED', text: 'Edited.' });
    expect(s.tools.count('edit_note')).toBe(1);
    expect((await everything())[0].users).toEqual(['edit n1']);
    await s.expectConsistent(first.thread.id);
  });

  it('in the background: the retry returns the turn RUNNING as it is now, without waiting', async () => {
    const { held, model } = heldModel();
    s = await startScenario({ model });
    const first = await startKeyed('req-1', 'Hello', { background: true });
    expect(first.turn.status).toBe('RUNNING');
    const again = await startKeyed('req-1', 'Hello', { background: true });
    expect(again.turn).toMatchObject({ id: first.turn.id, status: 'RUNNING' });
    held.release();
    await expect.poll(async () => (await s.turn(first.turn.id)).status).toBe('COMPLETED');
    expect(held.calls).toBe(1);
  });

  it('the same key with another message, agent or thread: IDEMPOTENCY_KEY_REUSED, and nothing is written', async () => {
    s = await startScenario({ script: [textStep('Hi there.')] });
    const first = await startKeyed('req-1');
    const before = await everything();
    for (const input of [
      { message: 'Something else' },
      { message: 'Hello', threadId: first.thread.id },
      { message: 'Hello', agentId: 'demo' },
    ]) {
      const reused = await startKeyed('req-1', input.message, input);
      expect(reused).toEqual({
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
    }
    expect(await everything()).toEqual(before);
    expect(s.model.requests).toHaveLength(1);
  });

  it("keys are per user: another user's same key starts that user's own turn and sees nothing of the first", async () => {
    s = await startScenario({ script: [textStep('Hi there.')], authenticator: testUsersAuthenticator });
    const as = (user: string) => ({ authorization: `Bearer ${user}` });
    const start = async (user: string) =>
      dataOf(
        await s.h.gql(
          START_TURN,
          { input: { agentId: AGENT_ID, message: 'Hello', idempotencyKey: 'req-1' } },
          as(user),
        ),
      ).startTurn;
    const alice = await start('alice');
    const bob = await start('bob');
    expect(bob.userErrors).toEqual([]);
    expect(bob.turn.id).not.toBe(alice.turn.id);
    expect(bob.thread.id).not.toBe(alice.thread.id);
    expect((await start('bob')).turn.id).toBe(bob.turn.id);
    expect((await start('alice')).turn.id).toBe(alice.turn.id);
    expect((await everything(as('alice'))).map((t: any) => t.thread)).toEqual([alice.thread.id]);
    expect((await everything(as('bob'))).map((t: any) => t.thread)).toEqual([bob.thread.id]);
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

  it.each([
    ['', 'The idempotency key is empty.'],
    ['k'.repeat(256), 'The idempotency key is longer than 255 characters.'],
    ['a\u0000b', 'The idempotency key contains a NUL character or an unpaired UTF-16 surrogate, which is not text.'],
  ])('a key %j is INVALID_INPUT, and nothing is written', async (key, message) => {
    s = await startScenario({ script: [textStep('Hi there.')] });
    const refused = await startKeyed(key);
    expect(refused).toEqual({
      turn: null,
      thread: null,
      userErrors: [{ code: 'INVALID_INPUT', message, field: ['input', 'idempotencyKey'] }],
    });
    expect(await everything()).toEqual([]);
    expect((await startKeyed('🔑'.repeat(255))).userErrors).toEqual([]); // 255 characters, 510 UTF-16 units
  });
});
