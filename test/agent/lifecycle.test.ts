// The lifecycle events the runner tells its observers (the log and the metrics are built on them): which ones, in
// which order, with what, and that an observer that throws changes nothing about the turn.
import { afterEach, describe, expect, it } from 'vitest';
import type { LifecycleEvent, LifecycleObserver } from '../../src/agent/lifecycle.js';
import { call, callStep, manualClock, startScenario, textStep, type Scenario } from '../support/scenario.js';

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

function recorder(): { events: LifecycleEvent[]; observer: LifecycleObserver; types(): string[] } {
  const events: LifecycleEvent[] = [];
  return { events, observer: { onLifecycle: (event) => events.push(event) }, types: () => events.map((e) => e.type) };
}

describe('lifecycle events', () => {
  it('a paused, accepted, completed turn: started, model, paused, answered (with the wait), tool, model, ended', async () => {
    const clock = manualClock();
    const seen = recorder();
    s = await startScenario({
      tools: [{ name: 'edit_note' }],
      script: [callStep(call('edit_note', { id: 'n1' })), textStep('Edited.')],
      clock: clock.now,
      observers: [seen.observer],
    });
    const { turn } = await s.start('edit n1');
    expect(turn.status).toBe('PAUSED');
    expect(seen.types()).toEqual(['turnStarted', 'modelCalled', 'turnPaused']);

    clock.advance(42);
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(seen.types()).toEqual([
      'turnStarted',
      'modelCalled',
      'turnPaused',
      'elicitationAnswered',
      'toolStarted',
      'toolFinished',
      'modelCalled',
      'turnEnded',
    ]);
    const [started, model, paused, answered, toolStarted, toolFinished, , ended] = seen.events;
    expect(started).toMatchObject({ turn: { id: turn.id, status: 'RUNNING' } });
    expect(model).toMatchObject({ modelId: 'scripted', outcome: 'ok' });
    expect(paused).toMatchObject({
      turn: { status: 'PAUSED' },
      elicitations: [{ id: turn.pendingElicitations[0].id }],
    });
    expect(answered).toMatchObject({ action: 'ACCEPT', waitedMs: 42_000 });
    expect(toolStarted).toMatchObject({ toolCall: { toolId: 't:edit_note' } });
    expect(toolFinished).toMatchObject({ toolCall: { toolId: 't:edit_note' }, outcome: 'ok' });
    expect((toolFinished as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(0);
    expect(ended).toMatchObject({ turn: { id: turn.id, status: 'COMPLETED' } });
  });

  it('a tool that throws finishes with outcome error; a failing model call is reported as such', async () => {
    const seen = recorder();
    s = await startScenario({
      tools: [
        {
          name: 'read_note',
          annotations: { readOnlyHint: true },
          run: () => {
            throw new Error('disk on fire');
          },
        },
      ],
      script: [callStep(call('read_note')), textStep('Done.')],
      observers: [seen.observer],
    });
    await s.start('read it');
    expect(seen.events.find((e) => e.type === 'toolFinished')).toMatchObject({ outcome: 'error' });

    const failing = recorder();
    await s.close();
    s = await startScenario({
      model: { generate: () => Promise.reject(new Error('model down')) },
      observers: [failing.observer],
    });
    const { turn } = await s.start('hello');
    expect(turn.status).toBe('FAILED');
    expect(failing.types()).toEqual(['turnStarted', 'modelCalled', 'turnEnded']);
    expect(failing.events[1]).toMatchObject({ outcome: 'error' });
    expect(failing.events[2]).toMatchObject({ turn: { status: 'FAILED' } });
  });

  it('CANCEL ends the turn CANCELLED; expiry reports how many requests went unanswered', async () => {
    const clock = manualClock();
    const seen = recorder();
    s = await startScenario({
      tools: [{ name: 'edit_note' }, { name: 'archive_note' }],
      script: [callStep(call('edit_note'), call('archive_note')), callStep(call('edit_note'), call('archive_note'))],
      clock: clock.now,
      agent: { pauseTtlSeconds: 60 },
      observers: [seen.observer],
    });
    const first = await s.start('edit and archive');
    await s.resolve(first.turn.pendingElicitations[0].id, 'CANCEL');
    expect(seen.events.slice(-2)).toMatchObject([
      { type: 'elicitationAnswered', action: 'CANCEL' },
      { type: 'turnEnded', turn: { status: 'CANCELLED' } },
    ]);

    const second = await s.start('again', first.thread.id);
    expect(second.turn.pendingElicitations).toHaveLength(2);
    clock.advance(61);
    const report = await s.h.server.sweep();
    expect(report.expiredTurns).toBe(1);
    expect(seen.events.slice(-2)).toMatchObject([
      { type: 'elicitationsExpired', count: 2, turn: { id: second.turn.id } },
      { type: 'turnEnded', turn: { id: second.turn.id, status: 'EXPIRED' } },
    ]);
  });

  it('a new message on a paused thread: the superseded turn ends before the new one starts', async () => {
    const seen = recorder();
    s = await startScenario({
      tools: [{ name: 'edit_note' }],
      script: [callStep(call('edit_note')), textStep('Fine.')],
      observers: [seen.observer],
    });
    const first = await s.start('edit');
    await s.start('never mind', first.thread.id);
    const ends = seen.events.filter((e) => e.type === 'turnEnded' || e.type === 'turnStarted');
    expect(ends.map((e) => [e.type, e.turn.status])).toEqual([
      ['turnStarted', 'RUNNING'],
      ['turnEnded', 'CANCELLED'],
      ['turnStarted', 'RUNNING'],
      ['turnEnded', 'COMPLETED'],
    ]);
  });

  it('a new message on a thread whose pause has expired: its requests are reported expired, the turn EXPIRED', async () => {
    const clock = manualClock();
    const seen = recorder();
    s = await startScenario({
      tools: [{ name: 'edit_note' }],
      script: [callStep(call('edit_note')), textStep('Fine.')],
      clock: clock.now,
      agent: { pauseTtlSeconds: 60 },
      observers: [seen.observer],
    });
    const first = await s.start('edit');
    clock.advance(61);
    await s.start('never mind', first.thread.id);
    expect(seen.types().slice(3, 6)).toEqual(['elicitationsExpired', 'turnEnded', 'turnStarted']);
    expect(seen.events[3]).toMatchObject({ count: 1, turn: { id: first.turn.id } });
    expect(seen.events[4]).toMatchObject({ turn: { id: first.turn.id, status: 'EXPIRED' } });
  });

  it('an observer that throws is reported and changes nothing: the tool runs once, the turn completes', async () => {
    const errors: unknown[] = [];
    s = await startScenario({
      tools: [{ name: 'edit_note' }],
      script: [callStep(call('edit_note')), textStep('Edited.')],
      onError: (error) => errors.push(error),
      observers: [
        {
          onLifecycle: () => {
            throw new Error('broken observer');
          },
        },
      ],
    });
    const { turn } = await s.start('edit');
    expect(turn.status).toBe('PAUSED');
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(s.tools.count('edit_note')).toBe(1);
    expect(errors.length).toBeGreaterThanOrEqual(8);
    expect(errors.every((e) => e instanceof Error && e.message === 'broken observer')).toBe(true);
  });
});
