// The answer state machine, without a database: what an answer does to a confirmation request as the store read it.
import { describe, expect, it } from 'vitest';
import { answeredStatus, decideAnswer, resumesTurn } from '../../src/domain/answer-rules.js';
import type { ElicitationAnswer, ElicitationRecord } from '../../src/domain/records.js';

const EXPIRES_AT = '2030-01-01T12:00:00.000Z';
const BEFORE = '2030-01-01T11:59:59.999Z';
const ONE_MS_LATE = '2030-01-01T12:00:00.001Z';

type Stored = Pick<ElicitationRecord, 'status' | 'response' | 'expiresAt'>;
const pending: Stored = { status: 'PENDING', response: null, expiresAt: EXPIRES_AT };
const accept: ElicitationAnswer = { action: 'ACCEPT', content: null };
const decline: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'not now' } };
const cancel: ElicitationAnswer = { action: 'CANCEL', content: null };

/** The request after `answer` was recorded, as the store would read it back. */
function answered(answer: ElicitationAnswer): Stored {
  return { status: answeredStatus(answer.action), response: answer, expiresAt: EXPIRES_AT };
}

describe('decideAnswer', () => {
  it('an unknown request (or another user’s) is not found', () => {
    expect(decideAnswer(null, accept, BEFORE)).toEqual({ kind: 'not_found' });
  });

  it('an ACCEPT before expiresAt is recorded ACCEPTED and resumes the turn if it is the last', () => {
    expect(decideAnswer(pending, accept, BEFORE)).toEqual({
      kind: 'record',
      status: 'ACCEPTED',
      then: 'resume_if_last',
    });
  });

  it('a DECLINE is recorded DECLINED and, like an ACCEPT, lets the last answer resume the turn', () => {
    expect(decideAnswer(pending, decline, BEFORE)).toEqual({
      kind: 'record',
      status: 'DECLINED',
      then: 'resume_if_last',
    });
  });

  it('a CANCEL is recorded CANCELLED and cancels the whole turn', () => {
    expect(decideAnswer(pending, cancel, BEFORE)).toEqual({ kind: 'record', status: 'CANCELLED', then: 'cancel_turn' });
  });

  it('an ACCEPT one millisecond after expiresAt expires the turn and records nothing (never fail open)', () => {
    expect(decideAnswer(pending, accept, ONE_MS_LATE)).toEqual({ kind: 'expired', expireTurn: true });
  });

  it('an answer at exactly expiresAt is already too late', () => {
    expect(decideAnswer(pending, accept, EXPIRES_AT)).toEqual({ kind: 'expired', expireTurn: true });
  });

  it.each([accept, decline, cancel])('late, any action expires: %o', (answer) => {
    expect(decideAnswer(pending, answer, ONE_MS_LATE).kind).toBe('expired');
  });

  it('an EXPIRED request stays expired, whatever the answer and the time; the turn was expired before', () => {
    const expired: Stored = { status: 'EXPIRED', response: null, expiresAt: EXPIRES_AT };
    for (const answer of [accept, decline, cancel]) {
      expect(decideAnswer(expired, answer, BEFORE)).toEqual({ kind: 'expired', expireTurn: false });
      expect(decideAnswer(expired, answer, ONE_MS_LATE)).toEqual({ kind: 'expired', expireTurn: false });
    }
  });

  it('the same ACCEPT twice is a duplicate; a DECLINE after an ACCEPT is ALREADY_RESOLVED', () => {
    expect(decideAnswer(answered(accept), accept, BEFORE)).toEqual({ kind: 'duplicate' });
    expect(decideAnswer(answered(accept), decline, BEFORE)).toEqual({ kind: 'already_resolved' });
    expect(decideAnswer(answered(accept), cancel, BEFORE)).toEqual({ kind: 'already_resolved' });
  });

  it('a repeated answer is a duplicate even after expiresAt: the first answer was in time and stands', () => {
    expect(decideAnswer(answered(accept), accept, ONE_MS_LATE)).toEqual({ kind: 'duplicate' });
    expect(decideAnswer(answered(decline), accept, ONE_MS_LATE)).toEqual({ kind: 'already_resolved' });
  });

  it('content is compared canonically: key order does not matter, values do', () => {
    const first: ElicitationAnswer = { action: 'ACCEPT', content: { a: 1, nested: { x: [1, 2], y: 'z' } } };
    const reordered: ElicitationAnswer = { action: 'ACCEPT', content: { nested: { y: 'z', x: [1, 2] }, a: 1 } };
    const otherValue: ElicitationAnswer = { action: 'ACCEPT', content: { a: 1, nested: { x: [2, 1], y: 'z' } } };
    expect(decideAnswer(answered(first), reordered, BEFORE)).toEqual({ kind: 'duplicate' });
    expect(decideAnswer(answered(first), otherValue, BEFORE)).toEqual({ kind: 'already_resolved' });
  });

  it('no content and empty content are different answers', () => {
    expect(decideAnswer(answered(accept), { action: 'ACCEPT', content: {} }, BEFORE)).toEqual({
      kind: 'already_resolved',
    });
  });

  it('a request closed without an answer (its turn was cancelled or superseded) is already resolved', () => {
    const closed: Stored = { status: 'CANCELLED', response: null, expiresAt: EXPIRES_AT };
    for (const answer of [accept, decline, cancel]) {
      expect(decideAnswer(closed, answer, BEFORE)).toEqual({ kind: 'already_resolved' });
    }
  });
});

describe('resumesTurn: the last answer resumes the turn', () => {
  it('claims the turn when no other request of the step still waits', () => {
    expect(resumesTurn(false)).toBe(true);
  });
  it('waits while another request of the step is PENDING', () => {
    expect(resumesTurn(true)).toBe(false);
  });
});

describe('answeredStatus', () => {
  it('maps each action to the status it records', () => {
    expect([answeredStatus('ACCEPT'), answeredStatus('DECLINE'), answeredStatus('CANCEL')]).toEqual([
      'ACCEPTED',
      'DECLINED',
      'CANCELLED',
    ]);
  });
});
