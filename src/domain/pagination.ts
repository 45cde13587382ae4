// Relay pagination over a store's rows: opaque cursors, pages, and when a page is its own total count. Every list a
// store pages is ordered by a row's insertion sequence (`seq`), ascending or (newest first) descending, and a cursor
// is that position.
import type { Page } from './records.js';

export function encodeCursor(seq: number): string {
  return Buffer.from(`seq:${seq}`).toString('base64url');
}

/**
 * The position after which a page starts: 0 (the start) without a cursor. A malformed cursor reads as the start:
 * cursors are opaque, and a bad one must not fail the query. One past the largest safe integer reads as the end.
 */
export function decodeCursor(cursor: string | null): number {
  if (!cursor) return 0;
  const match = /^seq:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) return 0;
  // Past any row a store can hold: an empty page. Unclamped, 1e+23 reached PostgreSQL as a bigint it cannot read.
  const seq = Number(match[1]);
  return Number.isSafeInteger(seq) ? seq : Number.MAX_SAFE_INTEGER;
}

/** Whether `cursor` is one encodeCursor made: a list that must refuse a malformed cursor asks this first. */
export function isCursor(cursor: string): boolean {
  return encodeCursor(decodeCursor(cursor)) === cursor;
}

/**
 * The seq a page's SQL reads from: rows after it (oldest first), or before it (newest first). `afterSeq` 0 is the first
 * page, which newest first starts past every row.
 */
export function seqBound(afterSeq: number, newestFirst: boolean): number {
  return newestFirst && afterSeq === 0 ? Number.MAX_SAFE_INTEGER : afterSeq;
}

/** A page from the rows a store read for it: up to `first` of them, and one more if there is a next page. */
export function buildPage<R extends { seq: number }, T>(rows: R[], first: number, map: (row: R) => T): Page<T> {
  const items = rows.slice(0, first);
  const last = items.at(-1);
  return {
    items: items.map(map),
    cursors: items.map((row) => encodeCursor(row.seq)),
    hasNextPage: rows.length > first,
    endCursor: last ? encodeCursor(last.seq) : null,
  };
}

/**
 * How many rows match in all: a first page that holds every match is its own count (the usual poll), so `count` (a
 * query) runs only otherwise. `fetched`: the rows read for the page, up to `first + 1`.
 */
export function totalCount(afterSeq: number, fetched: number, first: number, count: () => number): number {
  return pageHoldsAll(afterSeq, fetched, first) ? fetched : count();
}

/** True when the rows read for a page are every match (a first page, not full): their number is the count. */
export function pageHoldsAll(afterSeq: number, fetched: number, first: number): boolean {
  return afterSeq === 0 && fetched <= first;
}
