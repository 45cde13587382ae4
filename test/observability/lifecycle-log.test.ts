// The lifecycle log over a real server: one line per event with ids, outcomes and durations, and never what users
// or models wrote (messages, tool arguments and results, answers' content), at any level.
import { afterEach, describe, expect, it } from 'vitest';
import { lifecycleLogger } from '../../src/observability/lifecycle-log.js';
import { LEVEL, memoryLog } from '../support/log.js';
import { call, callStep, manualClock, startScenario, textStep, type Scenario } from '../support/scenario.js';

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** Distinct texts that must not reach the log. */
const SECRETS = {
  message: 'please edit my note about the surprise party for Dana',
  argument: 'argument-text-0b5e2c',
  result: 'tool-result-text-6d1f93',
  instructions: 'answer-instructions-4a7e11',
  answer: 'final-answer-text-93c0aa',
};

describe('the lifecycle log', () => {
  it('a paused, accepted, completed turn: one line per event, with what identifies it and nothing users wrote', async () => {
    const clock = manualClock();
    const log = memoryLog('trace');
    s = await startScenario({
      tools: [{ name: 'edit_note', run: () => SECRETS.result }],
      script: [callStep(call('edit_note', { id: 'n1', text: SECRETS.argument })), textStep(SECRETS.answer)],
      clock: clock.now,
      logger: log.logger,
    });
    const { turn, thread } = await s.start(SECRETS.message);
    expect(turn.status).toBe('PAUSED');
    const elicitationId = turn.pendingElicitations[0].id as string;
    clock.advance(42);
    const resolved = await s.resolve(elicitationId, 'ACCEPT', { instructions: SECRETS.instructions });
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe(SECRETS.answer);

    const events = log.lines().filter((line) => line.event !== undefined);
    expect(events.map((line) => line.event)).toEqual([
      'turnStarted',
      'modelCalled',
      'turnPaused',
      'elicitationAnswered',
      'toolStarted',
      'toolFinished',
      'modelCalled',
      'turnEnded',
    ]);
    const [started, model, paused, answered, toolStarted, toolFinished, , ended] = events;
    expect(started).toMatchObject({ level: LEVEL.info, turnId: turn.id, threadId: thread.id, agentId: 'tester' });
    expect(model).toMatchObject({ level: LEVEL.debug, modelId: 'scripted', outcome: 'ok' });
    expect(paused).toMatchObject({
      level: LEVEL.info,
      turnId: turn.id,
      elicitationIds: [elicitationId],
      count: 1,
      expiresAt: turn.expiresAt,
    });
    expect(answered).toMatchObject({
      level: LEVEL.info,
      elicitationId,
      turnId: turn.id,
      action: 'ACCEPT',
      waitedMs: 42_000,
    });
    expect(toolStarted).toMatchObject({
      level: LEVEL.info,
      turnId: turn.id,
      toolCallId: 'call_edit_note',
      toolId: 't:edit_note',
    });
    expect(toolFinished).toMatchObject({
      level: LEVEL.info,
      turnId: turn.id,
      toolCallId: 'call_edit_note',
      toolId: 't:edit_note',
      outcome: 'ok',
      durationMs: expect.any(Number),
    });
    expect(ended).toMatchObject({ level: LEVEL.info, turnId: turn.id, status: 'COMPLETED', iterations: 2 });
    expect(ended).not.toHaveProperty('error');

    // The whole output, every level (requests included): none of what the user, the model or the tool wrote.
    const text = log.text();
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  });

  it('model calls only at debug; a failed turn ends with its (toolgate-written) error', async () => {
    const log = memoryLog('info');
    s = await startScenario({ model: { generate: () => Promise.reject(new Error('model down')) }, logger: log.logger });
    const { turn } = await s.start('hello');
    expect(turn.status).toBe('FAILED');
    expect(
      log
        .lines()
        .map((line) => line.event)
        .filter(Boolean),
    ).toEqual(['turnStarted', 'turnEnded']);
    expect(log.find('turn ended')[0]).toMatchObject({ status: 'FAILED', error: 'The model call failed: model down' });
  });

  it('an expired turn: its unanswered requests counted, then the turn ended EXPIRED', async () => {
    const clock = manualClock();
    const log = memoryLog('info');
    s = await startScenario({
      tools: [{ name: 'edit_note' }, { name: 'delete_note' }],
      script: [callStep(call('edit_note'), call('delete_note')), textStep('Gave up.')],
      agent: { pauseTtlSeconds: 60 },
      clock: clock.now,
      logger: log.logger,
    });
    const { turn } = await s.start('edit and delete');
    expect(turn.pendingElicitations).toHaveLength(2);
    clock.advance(61);
    await s.h.server.sweep();
    expect(log.find('elicitations expired')).toEqual([expect.objectContaining({ turnId: turn.id, count: 2 })]);
    expect(log.find('turn ended')).toEqual([expect.objectContaining({ turnId: turn.id, status: 'EXPIRED' })]);
  });

  it('toolFinished with outcome error: the duration rounded to 0.1 ms, the arguments left out', () => {
    const log = memoryLog('trace');
    const turn = { id: 'trn_1', threadId: 'thr_1', agentId: 'a' } as never;
    const toolCall = { id: 'call_1', name: 'rm', toolId: 't:rm', arguments: { path: SECRETS.argument } };
    lifecycleLogger(log.logger).onLifecycle({
      type: 'toolFinished',
      turn,
      toolCall,
      outcome: 'error',
      durationMs: 12.345,
    });
    expect(log.lines()).toEqual([
      expect.objectContaining({
        level: LEVEL.info,
        event: 'toolFinished',
        toolCallId: 'call_1',
        toolId: 't:rm',
        outcome: 'error',
        durationMs: 12.3,
      }),
    ]);
    expect(log.text()).not.toContain(SECRETS.argument);
  });
});
