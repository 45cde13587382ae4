// "A PENDING row past its expiry reads EXPIRED": the status as read at `now`, and the stored rows a filter matches.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  elicitationStatusAt,
  isPastExpiry,
  storedConditionsFor,
  turnStatusAt,
  type StoredStatusCondition,
} from '../../src/domain/expiry.js';
import type { ElicitationStatus, TurnStatus } from '../../src/domain/records.js';

const EXPIRES_AT = '2030-01-01T12:00:00.000Z';
const BEFORE = '2030-01-01T11:59:59.999Z';
const AFTER = '2030-01-01T12:00:00.001Z';
const STATUSES: ElicitationStatus[] = ['PENDING', 'ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'];

describe('isPastExpiry', () => {
  it('is false before expiresAt and true from expiresAt on', () => {
    expect([BEFORE, EXPIRES_AT, AFTER].map((now) => isPastExpiry(EXPIRES_AT, now))).toEqual([false, true, true]);
  });
});

describe('elicitationStatusAt', () => {
  it('a PENDING request reads PENDING until expiresAt, then EXPIRED, before any sweeper ran', () => {
    const e = { status: 'PENDING' as const, expiresAt: EXPIRES_AT };
    expect(elicitationStatusAt(e, BEFORE)).toBe('PENDING');
    expect(elicitationStatusAt(e, EXPIRES_AT)).toBe('EXPIRED');
    expect(elicitationStatusAt(e, AFTER)).toBe('EXPIRED');
  });

  it('an answered request keeps its answer after expiresAt', () => {
    for (const status of ['ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'] as const) {
      expect(elicitationStatusAt({ status, expiresAt: EXPIRES_AT }, AFTER)).toBe(status);
    }
  });
});

describe('turnStatusAt', () => {
  it('a PAUSED turn reads EXPIRED from its expiresAt on', () => {
    expect(turnStatusAt({ status: 'PAUSED', expiresAt: EXPIRES_AT }, BEFORE)).toBe('PAUSED');
    expect(turnStatusAt({ status: 'PAUSED', expiresAt: EXPIRES_AT }, EXPIRES_AT)).toBe('EXPIRED');
  });

  it('other turns read as stored', () => {
    const others: TurnStatus[] = ['RUNNING', 'COMPLETED', 'CANCELLED', 'FAILED', 'EXPIRED'];
    for (const status of others) expect(turnStatusAt({ status, expiresAt: null }, AFTER)).toBe(status);
    expect(turnStatusAt({ status: 'PAUSED', expiresAt: null }, AFTER)).toBe('PAUSED');
  });
});

describe('storedConditionsFor: the audit filter', () => {
  const matches = (c: StoredStatusCondition, row: { status: ElicitationStatus; expiresAt: string }, now: string) =>
    c.status === row.status && (c.pastExpiry === undefined || c.pastExpiry === row.expiresAt <= now);

  it('filtering by EXPIRED finds a PENDING request the sweeper has not expired yet; PENDING does not', () => {
    const overdue = { status: 'PENDING' as const, expiresAt: EXPIRES_AT };
    expect(storedConditionsFor('EXPIRED').some((c) => matches(c, overdue, AFTER))).toBe(true);
    expect(storedConditionsFor('PENDING').some((c) => matches(c, overdue, AFTER))).toBe(false);
  });

  it('a row matches the filter of exactly the status it reads as at that moment', () => {
    const time = fc.integer({ min: 0, max: 3 }).map((s) => `2030-01-01T12:00:0${s}.000Z`);
    fc.assert(
      fc.property(fc.constantFrom(...STATUSES), time, time, (status, expiresAt, now) => {
        const row = { status, expiresAt };
        const matched = STATUSES.filter((filter) => storedConditionsFor(filter).some((c) => matches(c, row, now)));
        expect(matched).toEqual([elicitationStatusAt(row, now)]);
      }),
    );
  });
});
