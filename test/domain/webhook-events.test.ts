// The pure parts of webhooks: which endpoint gets which event, the retry schedule, and the receipt a body carries.
import { describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../src/domain/decision-records.js';
import {
  afterFailedAttempt,
  outboxRows,
  receiptTurnIds,
  withReceipt,
  type WebhookEvent,
} from '../../src/domain/webhook-events.js';

const NOW = new Date('2026-01-01T00:00:00.000Z');
const policy = { maxAttempts: 5, initialBackoffMs: 5000, maxBackoffMs: 30_000 };
const delayOf = (attempt: number, random: number) => {
  const next = afterFailedAttempt(attempt, policy, NOW, random);
  return next.kind === 'retry' ? Date.parse(next.at) - NOW.getTime() : null;
};

describe('afterFailedAttempt', () => {
  it('doubles from the initial backoff, capped, with ±20 % jitter; gives up after maxAttempts', () => {
    expect([1, 2, 3, 4].map((attempt) => delayOf(attempt, 0.5))).toEqual([5000, 10_000, 20_000, 30_000]);
    expect([delayOf(1, 0), delayOf(1, 0.999_999)]).toEqual([4000, 6000]);
    expect(afterFailedAttempt(5, policy, NOW, 0.5)).toEqual({ kind: 'failed' });
    expect(afterFailedAttempt(1, { ...policy, maxAttempts: 1 }, NOW, 0.5)).toEqual({ kind: 'failed' });
  });

  it('each gap is longer than the one before, whatever the jitter (below the cap)', () => {
    for (const [before, after] of [
      [0.999_999, 0],
      [0.5, 0],
    ] as const) {
      for (let attempt = 1; attempt < 3; attempt++)
        expect(delayOf(attempt + 1, after)!).toBeGreaterThan(delayOf(attempt, before)!);
    }
  });
});

describe('outboxRows', () => {
  const event = (type: WebhookEvent['type']): WebhookEvent => ({ type, timestamp: NOW.toISOString(), data: {} });

  it('one row per event and subscribed endpoint, each with its own id, in event order', () => {
    let n = 0;
    const rows = outboxRows(
      [event('elicitation.requested'), event('turn.completed')],
      [
        { url: 'http://a', events: ['turn.completed', 'elicitation.requested'] },
        { url: 'http://b', events: ['turn.completed'] },
        { url: 'http://c', events: ['turn.failed'] },
      ],
      'now',
      () => `whk_${++n}`,
    );
    expect(rows.map((r) => [r.id, r.endpoint, r.eventType])).toEqual([
      ['whk_1', 'http://a', 'elicitation.requested'],
      ['whk_2', 'http://a', 'turn.completed'],
      ['whk_3', 'http://b', 'turn.completed'],
    ]);
    expect(rows[2]!.payload).toBe(rows[1]!.payload);
    expect(outboxRows([event('turn.failed')], [], 'now')).toEqual([]);
  });
});

describe('withReceipt', () => {
  const record = (kind: DecisionRecord['kind'], elicitationId: string) =>
    ({ kind, elicitationId, turnId: 'trn_1', seq: 1 }) as DecisionRecord;
  const records = [
    record('ASKED', 'elc_1'),
    record('ACCEPTED', 'elc_1'),
    record('ASKED', 'elc_2'),
    record('RAN', 'elc_1'),
  ];
  const delivery = (type: string, data: Record<string, unknown>) => ({ payload: { type, timestamp: 't', data } });

  it('an elicitation event carries the record of the kind its status names, of its own request; null while it waits', () => {
    const accepted = delivery('elicitation.resolved', { elicitationId: 'elc_1', turnId: 'trn_1', status: 'ACCEPTED' });
    expect(withReceipt(accepted, records).payload.data).toMatchObject({ receipt: records[1] });
    const pending = delivery('elicitation.requested', { elicitationId: 'elc_1', turnId: 'trn_1', status: 'PENDING' });
    expect(withReceipt(pending, records).payload.data).toMatchObject({ receipt: null });
    // Another request's record, or none of its outcome's kind: null.
    const declined = delivery('elicitation.resolved', { elicitationId: 'elc_2', turnId: 'trn_1', status: 'DECLINED' });
    expect(withReceipt(declined, records).payload.data).toMatchObject({ receipt: null });
  });

  it('a turn event is sent as written; only elicitation events name turns to read', () => {
    const turn = delivery('turn.completed', { turnId: 'trn_9', status: 'COMPLETED' });
    expect(withReceipt(turn, records)).toBe(turn);
    const asked = delivery('elicitation.requested', { elicitationId: 'elc_1', turnId: 'trn_1', status: 'PENDING' });
    expect(receiptTurnIds([turn, asked, asked])).toEqual(['trn_1']);
  });
});
