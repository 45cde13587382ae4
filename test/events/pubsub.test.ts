// The pub/sub interface subscriptions rely on: listening from the call on, and a close that ends everyone.
import { describe, expect, it } from 'vitest';
import type { TurnRecord } from '../../src/domain/records.js';
import { startedTurn } from '../../src/domain/turn-rules.js';
import { createInProcessPubSub, createToolgatePubSub, MAX_QUEUED_EVENTS } from '../../src/events/pubsub.js';

const turn = (id: string, status: TurnRecord['status']): TurnRecord => ({
  ...startedTurn({ id: id, threadId: 'thr_1', agentId: 'demo', ownerId: 'alice' }, '2026-01-01T00:00:00.000Z'),
  status,
});

/** An EventTarget that counts listeners per event name, and can hand each dispatch over as a JSON copy (as Redis does). */
class CountingEventTarget extends EventTarget {
  readonly listeners = new Map<string, number>();
  constructor(private readonly asJson = false) {
    super();
  }
  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: AddEventListenerOptions | boolean,
  ): void {
    this.listeners.set(type, (this.listeners.get(type) ?? 0) + 1);
    super.addEventListener(type, listener, options);
  }
  override removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: EventListenerOptions | boolean,
  ): void {
    this.listeners.set(type, (this.listeners.get(type) ?? 0) - 1);
    super.removeEventListener(type, listener, options);
  }
  override dispatchEvent(event: Event): boolean {
    if (!this.asJson) return super.dispatchEvent(event);
    return super.dispatchEvent(
      new CustomEvent(event.type, { detail: JSON.parse(JSON.stringify((event as CustomEvent).detail)) }),
    );
  }
}

describe('ToolgatePubSub', () => {
  it('delivers what is published right after subscribe, before anyone asked for a value', async () => {
    const pubsub = createInProcessPubSub();
    const updates = pubsub.subscribe('turn', 'trn_1');
    pubsub.publish('turn', 'trn_1', turn('trn_1', 'RUNNING'));
    pubsub.publish('turn', 'trn_2', turn('trn_2', 'RUNNING'));
    pubsub.publish('turn', 'trn_1', turn('trn_1', 'PAUSED'));
    expect((await updates.next()).value.status).toBe('RUNNING');
    expect((await updates.next()).value.status).toBe('PAUSED');
    await updates.return();
  });

  it('ends a subscription on return() even while a next() waits, and every one on close()', async () => {
    const pubsub = createInProcessPubSub();
    const one = pubsub.subscribe('turn', 'trn_1');
    const waiting = one.next();
    await one.return();
    expect(await waiting).toEqual({ done: true, value: undefined });

    const a = pubsub.subscribe('elicitations', 'alice');
    const b = pubsub.subscribe('turn', 'trn_1');
    const nextA = a.next();
    await pubsub.close();
    expect((await nextA).done).toBe(true);
    expect((await b.next()).done).toBe(true);
    // A subscriber that comes after close() ends at once.
    expect((await pubsub.subscribe('turn', 'trn_1').next()).done).toBe(true);
  });

  it('hands one event to every subscriber of its channel through one listener, as the same object', async () => {
    const target = new CountingEventTarget();
    const pubsub = createToolgatePubSub({ eventTarget: target });
    const subscribers = Array.from({ length: 50 }, () => pubsub.subscribe('turn', 'trn_1'));
    const other = pubsub.subscribe('turn', 'trn_2');
    expect(target.listeners.get('turn:trn_1')).toBe(1);
    const published = turn('trn_1', 'PAUSED');
    pubsub.publish('turn', 'trn_1', published);
    const received = await Promise.all(subscribers.map((s) => s.next()));
    expect(received.every((r) => r.value === published)).toBe(true);

    // Unsubscribing one leaves the others listening; the channel's listener goes with its last subscriber.
    await subscribers[0]!.return();
    pubsub.publish('turn', 'trn_1', turn('trn_1', 'RUNNING'));
    expect((await subscribers[1]!.next()).value.status).toBe('RUNNING');
    expect((await subscribers[0]!.next()).done).toBe(true);
    await Promise.all(subscribers.map((s) => s.return()));
    expect(target.listeners.get('turn:trn_1')).toBe(0);
    expect(target.listeners.get('turn:trn_2')).toBe(1);
    await other.return();
  });

  it('subscribes to several channels as one stream, in publish order, through the one listener of each channel', async () => {
    const target = new CountingEventTarget();
    const pubsub = createToolgatePubSub({ eventTarget: target });
    const both = pubsub.subscribeMany([
      { topic: 'turn', key: 'trn_1' },
      { topic: 'turnText', key: 'trn_1' },
    ]);
    const turnsOnly = pubsub.subscribe('turn', 'trn_1');
    expect(target.listeners.get('turn:trn_1')).toBe(1);
    expect(target.listeners.get('turnText:trn_1')).toBe(1);
    const delta = { kind: 'textDelta' as const, turnId: 'trn_1', iteration: 1, index: 0, offset: 0, text: 'Hi' };
    const running = turn('trn_1', 'RUNNING');
    const completed = turn('trn_1', 'COMPLETED');
    pubsub.publish('turn', 'trn_1', running);
    pubsub.publish('turnText', 'trn_1', delta);
    pubsub.publish('turnText', 'trn_2', { ...delta, turnId: 'trn_2' });
    pubsub.publish('turn', 'trn_1', completed);
    const received = [];
    for (let i = 0; i < 3; i++) received.push((await both.next()).value);
    expect(received[0]).toBe(running);
    expect(received[1]).toBe(delta);
    expect(received[2]).toBe(completed);
    expect((await turnsOnly.next()).value).toBe(running);
    expect((await turnsOnly.next()).value).toBe(completed);
    // return() leaves both channels; the turn channel keeps its other subscriber.
    await both.return();
    expect(target.listeners.get('turnText:trn_1')).toBe(0);
    expect(target.listeners.get('turn:trn_1')).toBe(1);
    await pubsub.close();
  });

  it('works on an event target that hands over JSON copies, as a Redis one does', async () => {
    const pubsub = createToolgatePubSub({ eventTarget: new CountingEventTarget(true) });
    const a = pubsub.subscribe('turn', 'trn_1');
    const b = pubsub.subscribe('turn', 'trn_1');
    const published = turn('trn_1', 'PAUSED');
    pubsub.publish('turn', 'trn_1', published);
    const [fromA, fromB] = [(await a.next()).value, (await b.next()).value];
    expect(fromA).toEqual(published);
    expect(fromA).not.toBe(published);
    // One copy per dispatch, shared by the subscribers of this process.
    expect(fromB).toBe(fromA);
    await pubsub.close();
  });

  it('ends a subscriber that falls too far behind with an error, after what it was sent, and only that one', async () => {
    const pubsub = createInProcessPubSub();
    const slow = pubsub.subscribe('turn', 'trn_1');
    const fast = pubsub.subscribe('turn', 'trn_1');
    for (let i = 0; i <= MAX_QUEUED_EVENTS; i++) {
      pubsub.publish('turn', 'trn_1', { ...turn('trn_1', 'RUNNING'), iterations: i });
      expect((await fast.next()).value.iterations).toBe(i);
    }
    for (let i = 0; i < MAX_QUEUED_EVENTS; i++) expect((await slow.next()).value.iterations).toBe(i);
    await expect(slow.next()).rejects.toThrow(/fell more than 1024 events behind/);
    expect((await slow.next()).done).toBe(true);
    pubsub.publish('turn', 'trn_1', turn('trn_1', 'PAUSED'));
    expect((await fast.next()).value.status).toBe('PAUSED');
    await pubsub.close();
  });
});
