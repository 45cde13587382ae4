// The answer state machine, without a database: what an answer does to a confirmation request as the store read it.
import { describe, expect, it } from 'vitest';
import {
  answeredStatus,
  decideAnswer,
  effectiveAnswer,
  resumesTurn,
  sameAnswer,
} from '../../src/domain/answer-rules.js';
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

describe('sameAnswer and decideAnswer with edited arguments and remember', () => {
  const edited: ElicitationAnswer = {
    action: 'ACCEPT',
    content: null,
    arguments: { id: 'n1', patch: { title: 'New', tags: ['a', 'b'] } },
  };
  const remembered: ElicitationAnswer = {
    action: 'ACCEPT',
    content: null,
    remember: { scope: 'THREAD', ttlSeconds: 60 },
  };

  it('the same edited arguments in another key order (at any depth) are the same answer: a duplicate', () => {
    const reordered: ElicitationAnswer = {
      content: null,
      arguments: { patch: { tags: ['a', 'b'], title: 'New' }, id: 'n1' },
      action: 'ACCEPT',
    };
    expect(sameAnswer(edited, reordered)).toBe(true);
    expect(decideAnswer(answered(edited), reordered, BEFORE)).toEqual({ kind: 'duplicate' });
  });

  it.each([
    ['other values', { ...edited, arguments: { id: 'n2', patch: { title: 'New', tags: ['a', 'b'] } } }],
    ['another array order', { ...edited, arguments: { id: 'n1', patch: { title: 'New', tags: ['b', 'a'] } } }],
    ['a property more', { ...edited, arguments: { ...edited.arguments, extra: true } }],
    ['no arguments (the model’s)', accept],
    ['null arguments', { ...edited, arguments: null }],
    ['empty arguments', { ...edited, arguments: {} }],
  ] as const)('edited arguments, then %s: already_resolved', (_what, other) => {
    expect(sameAnswer(edited, other)).toBe(false);
    expect(decideAnswer(answered(edited), other, BEFORE)).toEqual({ kind: 'already_resolved' });
  });

  it('a plain ACCEPT, then one with arguments: already_resolved (the first one stands)', () => {
    expect(decideAnswer(answered(accept), edited, BEFORE)).toEqual({ kind: 'already_resolved' });
  });

  it('absent and null arguments or remember are alike', () => {
    const explicit: ElicitationAnswer = { action: 'ACCEPT', content: null, arguments: null, remember: null };
    expect(sameAnswer(accept, explicit)).toBe(true);
    expect(decideAnswer(answered(explicit), accept, BEFORE)).toEqual({ kind: 'duplicate' });
  });

  it('remember: the same choice again is a duplicate; another scope, ttl or none is already_resolved', () => {
    const again: ElicitationAnswer = { remember: { ttlSeconds: 60, scope: 'THREAD' }, content: null, action: 'ACCEPT' };
    expect(decideAnswer(answered(remembered), again, BEFORE)).toEqual({ kind: 'duplicate' });
    for (const other of [
      { ...remembered, remember: { scope: 'AGENT', ttlSeconds: 60 } },
      { ...remembered, remember: { scope: 'THREAD', ttlSeconds: 61 } },
      accept,
    ] satisfies ElicitationAnswer[]) {
      expect(sameAnswer(remembered, other)).toBe(false);
      expect(decideAnswer(answered(remembered), other, BEFORE)).toEqual({ kind: 'already_resolved' });
    }
    expect(decideAnswer(answered(accept), remembered, BEFORE)).toEqual({ kind: 'already_resolved' });
  });

  it('edited arguments and remember together: both must match', () => {
    const both: ElicitationAnswer = { ...edited, remember: remembered.remember };
    expect(decideAnswer(answered(both), { ...both }, BEFORE)).toEqual({ kind: 'duplicate' });
    expect(decideAnswer(answered(both), edited, BEFORE)).toEqual({ kind: 'already_resolved' });
    expect(decideAnswer(answered(both), remembered, BEFORE)).toEqual({ kind: 'already_resolved' });
  });

  it('an unanswered request has no answer to be the same as', () => {
    expect(sameAnswer(null, edited)).toBe(false);
  });

  it('a still-PENDING request records an edited ACCEPT like any ACCEPT; past expiry it expires', () => {
    expect(decideAnswer(pending, edited, BEFORE)).toEqual({
      kind: 'record',
      status: 'ACCEPTED',
      then: 'resume_if_last',
    });
    expect(decideAnswer(pending, remembered, ONE_MS_LATE)).toEqual({ kind: 'expired', expireTurn: true });
  });
});

describe('effectiveAnswer', () => {
  const model = { id: 'n1', tags: ['a', 'b'], opts: { x: 1, y: null } };

  it("an ACCEPT with the model's own arguments, key order aside, is a plain ACCEPT (other fields kept)", () => {
    const given: ElicitationAnswer = {
      action: 'ACCEPT',
      content: { instructions: 'go' },
      arguments: { opts: { y: null, x: 1 }, tags: ['a', 'b'], id: 'n1' },
      remember: { scope: 'THREAD', ttlSeconds: 60 },
    };
    expect(effectiveAnswer(given, model)).toEqual({
      action: 'ACCEPT',
      content: { instructions: 'go' },
      remember: { scope: 'THREAD', ttlSeconds: 60 },
    });
  });

  it('a changed value, a reordered array, a key more or less: still an edit', () => {
    for (const args of [
      { ...model, id: 'n2' },
      { ...model, tags: ['b', 'a'] },
      { ...model, extra: true },
      { id: 'n1', tags: ['a', 'b'] },
      { ...model, opts: { x: '1', y: null } },
    ]) {
      const given: ElicitationAnswer = { action: 'ACCEPT', content: null, arguments: args };
      expect(effectiveAnswer(given, model)).toBe(given);
    }
  });

  it('anything but an ACCEPT with arguments is left as given (a DECLINE with arguments is refused later)', () => {
    for (const given of [
      { action: 'ACCEPT', content: null },
      { action: 'ACCEPT', content: null, arguments: null },
      { action: 'DECLINE', content: null, arguments: model },
      { action: 'CANCEL', content: null },
    ] satisfies ElicitationAnswer[]) {
      expect(effectiveAnswer(given, model)).toBe(given);
    }
  });
});
