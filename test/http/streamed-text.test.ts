// Streamed text, end to end: the openai-compatible provider streaming from the fake Chat Completions server (SSE, in
// pieces, with delays), the real server on 127.0.0.1, and a real graphql-ws client on turnEvents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { connectWs, observedPubSub, subscribeWs, testUsersAuthenticator } from '../support/live.js';
import {
  applyDeltas,
  deltasOf,
  eventsOf,
  TURN_EVENTS,
  turnsOf,
  until,
  type TurnEvent,
} from '../support/turn-events.js';

const alice = { authorization: 'Bearer alice' };
const bob = { authorization: 'Bearer bob' };

/** A promise a test resolves when it is ready: the fake model's text waits for it. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('turnEvents: streamed text over graphql-ws', () => {
  let fake: FakeOpenAi;
  let h: Harness;
  const pubsub = observedPubSub();

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    const agent = demoConfig.agents[0]!;
    const config: ToolgateConfig = {
      ...demoConfig,
      models: {
        ...demoConfig.models,
        streamed: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'fake-streamed', stream: true },
        plain: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'fake-plain' },
      },
      agents: [
        agent,
        { ...agent, id: 'streamed', name: 'Streamed', model: 'streamed' },
        { ...agent, id: 'plain', name: 'Plain', model: 'plain' },
      ],
    };
    // On SQLite every fsync takes 60 ms (a slow disk): a turn's changes wait for it before they are published, while
    // the next model call's text is ready at once. Its text must still come after them (on PostgreSQL commits are
    // durable already and nothing waits).
    const slowFsync = () => new Promise<void>((resolve) => setTimeout(resolve, 60));
    h = await startHarness({ config, authenticator: testUsersAuthenticator, pubsub, syncFile: slowFsync });
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  /** Starts a background turn of alice's; its model's text waits for `ready`. */
  async function startBackground(agentId: string, message: string) {
    const started = dataOf(await h.gql(START_TURN, { input: { agentId, message, background: true } }, alice)).startTurn;
    expect(started.userErrors).toEqual([]);
    expect(started.turn.status).toBe('RUNNING');
    return started.turn.id as string;
  }

  /** Subscribes alice to the turn and resolves once the server listens on its text. */
  async function follow(client: ReturnType<typeof connectWs>, turnId: string) {
    const listening = pubsub.listening('turnText', turnId);
    const received = subscribeWs<{ turnEvents: TurnEvent }>(client, TURN_EVENTS, { turnId });
    // A subscription the server refused ends instead: fail with its errors rather than wait.
    await Promise.race([
      listening,
      received.done.then((error) => Promise.reject(new Error(`turnEvents ended: ${JSON.stringify(error)}`))),
    ]);
    await received.waitFor(() => true, 'the current turn');
    return received;
  }

  it('pushes the text in order as it is generated, then the completed turn whose saved message is that text', async () => {
    const answer = 'There are three entities: Ada, Grace and Linus.';
    const ready = gate();
    fake.reply({ text: answer, streaming: { delayMs: 25, after: ready.promise } });
    const client = connectWs(h.url, alice.authorization);
    try {
      const turnId = await startBackground('streamed', 'which entities are there?');
      const received = await follow(client, turnId);
      const arrivals: number[] = [];
      void received
        .waitFor((e) => e.data?.turnEvents.__typename === 'TurnTextDelta', 'a delta')
        .then(() => arrivals.push(performance.now()));
      ready.open();
      await until(received, ['COMPLETED']);
      arrivals.push(performance.now());

      const events = eventsOf(received);
      // The turn as it was, each piece of the text in order, then the turn that saved it.
      expect(events[0]).toMatchObject({ __typename: 'Turn', id: turnId, status: 'RUNNING' });
      expect(events.at(-1)).toMatchObject({ __typename: 'Turn', status: 'COMPLETED', text: answer, iterations: 1 });
      const deltas = deltasOf(events);
      expect(deltas.map((d) => d.delta)).toEqual(answer.match(/.{1,4}/gs));
      expect(deltas.map((d) => d.index)).toEqual(deltas.map((_, i) => i));
      expect(deltas.every((d) => d.turnId === turnId && d.iteration === 1)).toBe(true);
      expect(deltas.map((d) => d.offset)).toEqual(
        deltas.map(
          (_, i) =>
            answer
              .match(/.{1,4}/gs)!
              .slice(0, i)
              .join('').length,
        ),
      );
      expect(events.slice(1, 1 + deltas.length)).toEqual(deltas);
      // The saved ASSISTANT message is the deltas put together.
      const completed = turnsOf(events).at(-1)!;
      expect(completed.messages.at(-1)).toEqual({
        role: 'ASSISTANT',
        text: deltas.map((d) => d.delta).join(''),
        toolCalls: [],
      });
      // Live: the first piece arrived while the model was still writing (12 pieces, 25 ms apart).
      expect(arrivals[1]! - arrivals[0]!).toBeGreaterThan(150);
      received.stop();
    } finally {
      await client.dispose();
    }
  });

  it('streams the text of a step that pauses for a tool call, then of the answer after it is confirmed', async () => {
    const ready = gate();
    fake.reply(
      {
        text: 'I will delete entity 2 once you confirm.',
        toolCalls: [{ name: 'delete_entities', arguments: { ids: [2] } }],
        streaming: { delayMs: 10, after: ready.promise },
      },
      // Pieces far enough apart that a busy event loop does not join two (as those arriving together are).
      { text: 'Entity 2 is deleted.', streaming: { delayMs: 30 } },
    );
    const client = connectWs(h.url, alice.authorization);
    try {
      const turnId = await startBackground('streamed', 'delete entity 2');
      const received = await follow(client, turnId);
      ready.open();
      const paused = (await until(received, ['PAUSED'])).data!.turnEvents as Extract<TurnEvent, { __typename: 'Turn' }>;
      const step = paused.messages.find((m) => m.role === 'ASSISTANT')!;
      expect(step.toolCalls).toEqual([{ name: 'delete_entities' }]);
      const firstDeltas = deltasOf(eventsOf(received));
      expect(firstDeltas.every((d) => d.iteration === 1)).toBe(true);
      expect(firstDeltas.map((d) => d.delta).join('')).toBe('I will delete entity 2 once you confirm.');
      expect(step.text).toBe(firstDeltas.map((d) => d.delta).join(''));

      const resolved = dataOf(
        await h.gql(RESOLVE, { input: { elicitationId: paused.pendingElicitations[0]!.id, action: 'ACCEPT' } }, alice),
      ).resolveElicitation;
      expect(resolved.userErrors).toEqual([]);
      await until(received, ['COMPLETED']);
      const events = eventsOf(received);
      const secondDeltas = deltasOf(events).filter((d) => d.iteration === 2);
      expect(secondDeltas.map((d) => [d.index, d.delta])).toEqual([
        [0, 'Enti'],
        [1, 'ty 2'],
        [2, ' is '],
        [3, 'dele'],
        [4, 'ted.'],
      ]);
      const completed = turnsOf(events).at(-1)!;
      expect(completed).toMatchObject({ status: 'COMPLETED', text: 'Entity 2 is deleted.', iterations: 2 });
      expect(completed.messages.map((m) => [m.role, m.text])).toEqual([
        ['USER', 'delete entity 2'],
        ['ASSISTANT', 'I will delete entity 2 once you confirm.'],
        ['TOOL', 'Deleted 1 entity (2).'],
        ['ASSISTANT', 'Entity 2 is deleted.'],
      ]);
      // Order: the tool's result reached the subscriber before any text of the answer that followed it.
      const toolShown = events.findIndex((e) => e.__typename === 'Turn' && e.messages.some((m) => m.role === 'TOOL'));
      const secondText = events.findIndex((e) => e.__typename === 'TurnTextDelta' && e.iteration === 2);
      expect(toolShown).toBeGreaterThan(0);
      expect(toolShown).toBeLessThan(secondText);
      received.stop();
    } finally {
      await client.dispose();
    }
  });

  it("refuses another user's turn exactly as an unknown one, and sends it none of the text", async () => {
    const ready = gate();
    fake.reply({ text: 'Private answer for alice.', streaming: { delayMs: 5, after: ready.promise } });
    const aliceWs = connectWs(h.url, alice.authorization);
    const bobWs = connectWs(h.url, bob.authorization);
    try {
      const turnId = await startBackground('streamed', 'tell me a secret');
      const aliceEvents = await follow(aliceWs, turnId);
      const snooping = subscribeWs(bobWs, TURN_EVENTS, { turnId });
      const unknown = subscribeWs(bobWs, TURN_EVENTS, { turnId: 'trn_does_not_exist' });
      await Promise.all([snooping.done, unknown.done]);
      ready.open();
      await until(aliceEvents, ['COMPLETED']);
      for (const refused of [snooping, unknown]) {
        expect(refused.events).toHaveLength(1);
        expect(refused.events[0]!.data?.turnEvents ?? null).toBeNull();
        expect(refused.events[0]!.errors!.map((e: any) => [e.message, e.extensions?.code])).toEqual([
          ['No turn with this id.', 'NOT_FOUND'],
        ]);
      }
      expect(
        deltasOf(eventsOf(aliceEvents))
          .map((d) => d.delta)
          .join(''),
      ).toBe('Private answer for alice.');
      // Bob's connection is still up.
      expect((await bobWs.iterate({ query: '{ viewer { id } }' }).next()).value).toEqual({
        data: { viewer: { id: 'bob' } },
      });
    } finally {
      await Promise.all([aliceWs.dispose(), bobWs.dispose()]);
    }
  });

  it('sends no text with streaming off, and the same saved message', async () => {
    const answer = 'There are three entities: Ada, Grace and Linus.';
    fake.reply({ text: answer });
    const client = connectWs(h.url, alice.authorization);
    try {
      const turnId = await startBackground('plain', 'which entities are there?');
      const received = subscribeWs<{ turnEvents: TurnEvent }>(client, TURN_EVENTS, { turnId });
      await until(received, ['COMPLETED']);
      const events = eventsOf(received);
      expect(deltasOf(events)).toEqual([]);
      expect(fake.requests.at(-1)!.body.stream ?? false).toBe(false);
      const completed = turnsOf(events).at(-1)!;
      expect(completed).toMatchObject({ status: 'COMPLETED', text: answer });
      expect(completed.messages.at(-1)).toEqual({ role: 'ASSISTANT', text: answer, toolCalls: [] });
      received.stop();
    } finally {
      await client.dispose();
    }
  });

  it('gives a subscriber that joins mid-answer the text so far first, then the rest', async () => {
    const answer = 'A long answer, written slowly, piece by piece, for a late subscriber.';
    const ready = gate();
    fake.reply({ text: answer, streaming: { delayMs: 30, after: ready.promise } });
    const early = connectWs(h.url, alice.authorization);
    const late = connectWs(h.url, alice.authorization);
    try {
      const turnId = await startBackground('streamed', 'write slowly');
      const earlyEvents = await follow(early, turnId);
      ready.open();
      await earlyEvents.waitFor((e) => deltasOf([e.data!.turnEvents])[0]?.index === 3, 'the fourth delta');
      const lateEvents = subscribeWs<{ turnEvents: TurnEvent }>(late, TURN_EVENTS, { turnId });
      await until(lateEvents, ['COMPLETED']);
      const events = eventsOf(lateEvents);
      expect(events[0]).toMatchObject({ __typename: 'Turn', status: 'RUNNING' });
      // The text so far, as one delta at offset 0 (at least the four pieces the early subscriber had), ...
      const [soFar, ...rest] = deltasOf(events);
      expect(soFar).toMatchObject({ offset: 0, iteration: 1 });
      expect(soFar!.index).toBeGreaterThanOrEqual(3);
      expect(answer.startsWith(soFar!.delta)).toBe(true);
      expect(soFar!.delta.length).toBe(4 * (soFar!.index + 1));
      // ... then each later piece once, where it belongs.
      expect(rest.map((d) => d.index)).toEqual(rest.map((_, i) => soFar!.index + 1 + i));
      expect(rest[0]!.offset).toBe(soFar!.delta.length);
      expect(applyDeltas([soFar!, ...rest])).toBe(answer);
      expect(turnsOf(events).at(-1)!.messages.at(-1)!.text).toBe(answer);
      lateEvents.stop();
      earlyEvents.stop();
    } finally {
      await Promise.all([early.dispose(), late.dispose()]);
    }
  });

  it("gets the scripted demo model's answer as one delta, so the demo shows streamed text without a real model", async () => {
    const client = connectWs(h.url, alice.authorization);
    try {
      const paused = dataOf(
        await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } }, alice),
      ).startTurn.turn;
      expect(paused.status).toBe('PAUSED');
      const received = await follow(client, paused.id);
      await h.gql(RESOLVE, { input: { elicitationId: paused.pendingElicitations[0].id, action: 'ACCEPT' } }, alice);
      await until(received, ['COMPLETED']);
      const events = eventsOf(received);
      const completed = turnsOf(events).at(-1)!;
      expect(completed.text).toMatch(/^Done\. /);
      expect(deltasOf(events)).toEqual([
        { __typename: 'TurnTextDelta', turnId: paused.id, iteration: 2, index: 0, offset: 0, delta: completed.text },
      ]);
      received.stop();
    } finally {
      await client.dispose();
    }
  });

  it('joins pieces that arrive together into fewer deltas, which still add up to the saved text', async () => {
    const answer = 'Pieces sent back to back, in one write, arrive in one network read.';
    const ready = gate();
    fake.reply({ text: answer, streaming: { after: ready.promise } });
    const client = connectWs(h.url, alice.authorization);
    try {
      const turnId = await startBackground('streamed', 'all at once');
      const received = await follow(client, turnId);
      ready.open();
      await until(received, ['COMPLETED']);
      const deltas = deltasOf(eventsOf(received));
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.length).toBeLessThan(answer.match(/.{1,4}/gs)!.length);
      expect(deltas.map((d) => d.index)).toEqual(deltas.map((_, i) => i));
      expect(applyDeltas(deltas)).toBe(answer);
      expect(deltas.map((d) => d.delta).join('')).toBe(answer);
      received.stop();
    } finally {
      await client.dispose();
    }
  });

  it('keeps a character split between two pieces whole, so that the pieces add up to the saved text', async () => {
    // Pieces of 3 UTF-16 code units split the emoji's surrogate pair: "ab\uD83D", "\uDE00cd".
    const answer = 'ab😀cd';
    const ready = gate();
    fake.reply({ text: answer, streaming: { delayMs: 30, pieceLength: 3, after: ready.promise } });
    const client = connectWs(h.url, alice.authorization);
    try {
      const turnId = await startBackground('streamed', 'an emoji please');
      const received = await follow(client, turnId);
      ready.open();
      await until(received, ['COMPLETED']);
      const events = eventsOf(received);
      expect(deltasOf(events).map((d) => [d.offset, d.delta])).toEqual([
        [0, 'ab'],
        [2, '😀cd'],
      ]);
      expect(turnsOf(events).at(-1)!.text).toBe(answer);
      received.stop();
    } finally {
      await client.dispose();
    }
  });
});
