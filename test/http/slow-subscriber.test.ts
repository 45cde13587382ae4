// A subscriber that stops reading: after 1,024 undelivered events its subscription ends with an error that says
// so (extensions.code SUBSCRIBER_TOO_SLOW, "subscribe again"), not a masked "Unexpected error.", and the server does
// not log an expected condition as a fault. The SSE response is read through Yoga's own fetch, in process: a body
// nobody reads is the slow client, without TCP buffers in between to absorb the events.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_QUEUED_EVENTS } from '../../src/events/pubsub.js';
import { dataOf, START_TURN, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
const faults: unknown[] = [];
beforeAll(async () => {
  h = await startHarness({ onError: (error) => faults.push(error) });
});
afterAll(() => h.close());

it('a subscriber more than 1,024 events behind is ended with SUBSCRIBER_TOO_SLOW after what it was sent', async () => {
  const started = dataOf(
    await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } }),
  ).startTurn;
  const turn = started.turn;
  const response = await h.server.yoga.fetch('http://127.0.0.1/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: `subscription { turnUpdated(turnId: "${turn.id}") { id status } }` }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  // The first event (the current state) shows the subscription is listening.
  while (!text.includes('event: next')) text += decoder.decode((await reader.read()).value);
  const record = await h.server.services.store.getTurn(turn.id, 'local');
  for (let i = 0; i <= MAX_QUEUED_EVENTS + 64; i++) h.server.services.pubsub.publish('turn', turn.id, record!);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  // Every event queued before it fell behind is delivered first, then the error, then the end.
  const events = text.split('\n\n').filter((chunk) => chunk.startsWith('event: '));
  const delivered = events.filter((chunk) => chunk.startsWith('event: next') && !chunk.includes('"errors"')).length;
  expect(delivered).toBeGreaterThanOrEqual(1 + MAX_QUEUED_EVENTS);
  expect(events.at(-2)).toContain('SUBSCRIBER_TOO_SLOW');
  expect(events.at(-1)).toMatch(/^event: complete/);
  const errors = text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.includes('"errors"'))
    .map((line) => JSON.parse(line.slice(6)).errors);
  expect(errors).toEqual([
    [
      expect.objectContaining({
        message: expect.stringMatching(/fell more than 1024 events behind.*subscribe again/),
        extensions: { code: 'SUBSCRIBER_TOO_SLOW' },
      }),
    ],
  ]);
  expect(faults).toEqual([]);
});
