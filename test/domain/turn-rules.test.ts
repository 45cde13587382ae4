// Starting a turn on a thread and closing a paused one, without a database.
import { describe, expect, it } from 'vitest';
import type { ElicitationRecord, PendingStep, ThreadRecord } from '../../src/domain/records.js';
import { closePausedTurn, decideActiveTurn, decideThread } from '../../src/domain/turn-rules.js';
import { toolCall } from '../support/definitions.js';

const NOW = '2030-01-01T12:00:00.000Z';
const thread: ThreadRecord = { id: 'thr_1', agentId: 'demo', ownerId: 'alice', createdAt: NOW };
const noSuchThread = { code: 'NOT_FOUND', of: 'thread', reason: 'NO_SUCH_THREAD' };

describe('decideThread: where a new turn goes', () => {
  it('without a thread id it starts a new thread', () => {
    expect(decideThread({ threadId: null, agentId: 'demo' }, null)).toEqual({ kind: 'new' });
  });

  it('an empty thread id is a thread id (of no thread), not "no thread id": NOT_FOUND', () => {
    expect(decideThread({ threadId: '', agentId: 'demo' }, null)).toEqual({ kind: 'refuse', refusal: noSuchThread });
  });

  it('continues the named thread of the same agent', () => {
    expect(decideThread({ threadId: 'thr_1', agentId: 'demo' }, thread)).toEqual({ kind: 'existing', thread });
  });

  it('NOT_FOUND when the named thread is not the caller’s (or does not exist)', () => {
    expect(decideThread({ threadId: 'thr_1', agentId: 'demo' }, null)).toEqual({
      kind: 'refuse',
      refusal: noSuchThread,
    });
  });

  it('NOT_FOUND (OTHER_AGENT) when the thread belongs to another agent', () => {
    expect(decideThread({ threadId: 'thr_1', agentId: 'other' }, thread)).toEqual({
      kind: 'refuse',
      refusal: { code: 'NOT_FOUND', of: 'thread', reason: 'OTHER_AGENT' },
    });
  });
});

describe('decideActiveTurn: what a new message does to the thread’s active turn', () => {
  it('starts when nothing runs or waits', () => {
    expect(decideActiveTurn(null, NOW)).toEqual({ kind: 'start' });
  });

  it('THREAD_BUSY while a turn is RUNNING: one turn at a time', () => {
    expect(decideActiveTurn({ status: 'RUNNING', expiresAt: null }, NOW)).toEqual({
      kind: 'refuse',
      refusal: { code: 'THREAD_BUSY' },
    });
  });

  it('a PAUSED turn still answerable is superseded: its calls get “the user sent a new message instead”', () => {
    expect(decideActiveTurn({ status: 'PAUSED', expiresAt: '2030-01-01T12:00:00.001Z' }, NOW)).toEqual({
      kind: 'supersede',
      reason: 'superseded',
    });
  });

  it('a PAUSED turn past its expiry (the sweeper not there yet) closes as expired, not superseded', () => {
    expect(decideActiveTurn({ status: 'PAUSED', expiresAt: NOW }, NOW)).toEqual({
      kind: 'supersede',
      reason: 'expired',
    });
    expect(decideActiveTurn({ status: 'PAUSED', expiresAt: '2030-01-01T11:00:00.000Z' }, NOW)).toEqual({
      kind: 'supersede',
      reason: 'expired',
    });
  });
});

describe('closePausedTurn: a paused step that will not run', () => {
  const step: PendingStep = {
    version: 1,
    calls: [
      { toolCall: toolCall('read'), outcome: { kind: 'run' } },
      { toolCall: toolCall('wipe'), outcome: { kind: 'confirm', elicitationId: 'elc_wipe' } },
      { toolCall: toolCall('send'), outcome: { kind: 'confirm', elicitationId: 'elc_send' } },
    ],
  };
  type Stored = Pick<ElicitationRecord, 'id' | 'status' | 'response'>;
  const waiting: Stored[] = [
    { id: 'elc_wipe', status: 'PENDING', response: null },
    { id: 'elc_send', status: 'PENDING', response: null },
  ];

  it('expired: the turn and its waiting requests become EXPIRED; every call is told it was not confirmed', () => {
    const closing = closePausedTurn({ step }, waiting, 'expired');
    expect(closing.status).toBe('EXPIRED');
    expect(closing.closeElicitations).toEqual(['elc_wipe', 'elc_send']);
    expect(closing.toolMessages).toEqual([
      { toolCallId: 'call_read', text: 'Execution of read was not confirmed before the request expired.' },
      { toolCallId: 'call_wipe', text: 'Execution of wipe was not confirmed before the request expired.' },
      { toolCallId: 'call_send', text: 'Execution of send was not confirmed before the request expired.' },
    ]);
  });

  it('superseded: CANCELLED, and the model learns the user sent a new message instead', () => {
    const closing = closePausedTurn({ step }, waiting, 'superseded');
    expect(closing.status).toBe('CANCELLED');
    expect(closing.closeElicitations).toEqual(['elc_wipe', 'elc_send']);
    expect(closing.toolMessages[1]!.text).toBe('Execution of wipe was cancelled: the user sent a new message instead.');
  });

  it('CANCEL on one request: the turn is CANCELLED, the other waiting one closes, the answered one keeps its answer', () => {
    const afterCancel: Stored[] = [
      { id: 'elc_wipe', status: 'CANCELLED', response: { action: 'CANCEL', content: null } },
      { id: 'elc_send', status: 'PENDING', response: null },
    ];
    const closing = closePausedTurn({ step }, afterCancel, 'cancelled');
    expect(closing.status).toBe('CANCELLED');
    expect(closing.closeElicitations).toEqual(['elc_send']);
    expect(closing.toolMessages.map((m) => m.text)).toEqual([
      'Execution of read was cancelled by the user.',
      'Execution of wipe was cancelled by the user.',
      'Execution of send was cancelled by the user.',
    ]);
  });

  it('a call the user already declined keeps the decline text when the turn expires', () => {
    const declined: Stored[] = [
      { id: 'elc_wipe', status: 'DECLINED', response: { action: 'DECLINE', content: { instructions: 'never' } } },
      { id: 'elc_send', status: 'PENDING', response: null },
    ];
    const closing = closePausedTurn({ step }, declined, 'expired');
    expect(closing.closeElicitations).toEqual(['elc_send']);
    expect(closing.toolMessages[1]!.text).toBe('User declined execution of wipe: never');
    expect(closing.toolMessages[2]!.text).toBe('Execution of send was not confirmed before the request expired.');
  });

  it('a turn without a step gets no TOOL message', () => {
    expect(closePausedTurn({ step: null }, [], 'expired')).toEqual({
      status: 'EXPIRED',
      closeElicitations: [],
      toolMessages: [],
    });
  });
});
