// What expiry means, at a given moment `now` (ISO 8601 strings, compared as strings: the store's own format).
// A paused turn, and each of its PENDING elicitations, stops being answerable at `expiresAt`: from that instant on it
// reads EXPIRED, whether or not the sweeper has recorded the expiry yet. Never fail open.
import type { ElicitationRecord, ElicitationStatus, TurnRecord, TurnStatus } from './records.js';

/** True from `expiresAt` on (an answer at exactly `expiresAt` is too late). */
export function isPastExpiry(expiresAt: string, now: string): boolean {
  return expiresAt <= now;
}

/** An elicitation's status as read at `now`: a PENDING one past its expiry is EXPIRED. */
export function elicitationStatusAt(
  elicitation: Pick<ElicitationRecord, 'status' | 'expiresAt'>,
  now: string,
): ElicitationStatus {
  return elicitation.status === 'PENDING' && isPastExpiry(elicitation.expiresAt, now) ? 'EXPIRED' : elicitation.status;
}

/** A turn's status as read at `now`: a PAUSED one past its expiry is EXPIRED. */
export function turnStatusAt(turn: Pick<TurnRecord, 'status' | 'expiresAt'>, now: string): TurnStatus {
  return turn.status === 'PAUSED' && turn.expiresAt !== null && isPastExpiry(turn.expiresAt, now)
    ? 'EXPIRED'
    : turn.status;
}

/** A turn's text as read at `now`: a paused turn's question is gone from its expiry on, as when the expiry is recorded. */
export function turnTextAt(turn: Pick<TurnRecord, 'status' | 'expiresAt' | 'text'>, now: string): string | null {
  return turnStatusAt(turn, now) === turn.status ? turn.text : null;
}

/**
 * Whether the turn, as stored, never changes again: COMPLETED, FAILED, CANCELLED, or EXPIRED once recorded. A PAUSED
 * turn past its expiry reads EXPIRED at once, but is not final until the expiry is recorded with its TOOL messages.
 */
export function isFinalTurn(turn: Pick<TurnRecord, 'status'>): boolean {
  return turn.status !== 'RUNNING' && turn.status !== 'PAUSED';
}

/**
 * One form of a stored row: its stored status and, when it matters, whether its `expiresAt` has passed at `now`
 * (true: `expiresAt <= now`; false: `expiresAt > now`; absent: either).
 */
export interface StoredStatusCondition {
  status: ElicitationStatus;
  pastExpiry?: boolean;
}

/**
 * The stored rows that read as `status` at `now` (elicitationStatusAt), for a store's filters: a row matches when it
 * matches one of the conditions. PENDING: stored PENDING, not yet past its expiry; EXPIRED: stored EXPIRED, or stored
 * PENDING past its expiry; any other status: stored as it reads.
 */
export function storedConditionsFor(status: ElicitationStatus): StoredStatusCondition[] {
  if (status === 'PENDING') return [{ status: 'PENDING', pastExpiry: false }];
  if (status === 'EXPIRED') return [{ status: 'EXPIRED' }, { status: 'PENDING', pastExpiry: true }];
  return [{ status }];
}
