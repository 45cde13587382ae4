// Cursors and pages: what a client paging through threads or requests sees.
import { describe, expect, it } from 'vitest';
import { buildPage, decodeCursor, encodeCursor, seqBound, totalCount } from '../../src/domain/pagination.js';

const rows = (...seqs: number[]) => seqs.map((seq) => ({ seq, id: `row${seq}` }));

describe('cursors', () => {
  it('are opaque and round-trip to the row position', () => {
    const cursor = encodeCursor(42);
    expect(cursor).not.toContain('42');
    expect(decodeCursor(cursor)).toBe(42);
  });

  it('no cursor starts at the beginning', () => {
    expect(decodeCursor(null)).toBe(0);
    expect(decodeCursor('')).toBe(0);
  });

  it('a malformed cursor reads as the start instead of failing the query', () => {
    for (const bad of [
      'garbage',
      '!!!',
      Buffer.from('seq:').toString('base64url'),
      Buffer.from('seq:-1').toString('base64url'),
      Buffer.from('row:5').toString('base64url'),
    ]) {
      expect(decodeCursor(bad)).toBe(0);
    }
  });
});

describe('buildPage', () => {
  it('a page of `first` rows when one more was read: there is a next page, which starts after the last', () => {
    const page = buildPage(rows(3, 5, 8), 2, (r) => r.id);
    expect(page.items).toEqual(['row3', 'row5']);
    expect(page.hasNextPage).toBe(true);
    expect(page.cursors.map(decodeCursor)).toEqual([3, 5]);
    expect(page.endCursor).toBe(page.cursors[1]);
  });

  it('the last page has no next page', () => {
    const page = buildPage(rows(3, 5), 2, (r) => r.id);
    expect(page.hasNextPage).toBe(false);
    expect(decodeCursor(page.endCursor)).toBe(5);
  });

  it('an empty page has no end cursor', () => {
    expect(buildPage(rows(), 10, (r) => r.id)).toEqual({ items: [], cursors: [], hasNextPage: false, endCursor: null });
  });
});

describe('totalCount', () => {
  const never = () => {
    throw new Error('counted');
  };

  it('a first page holding every match is its own count: no count query', () => {
    expect(totalCount(0, 3, 10, never)).toBe(3);
    expect(totalCount(0, 10, 10, never)).toBe(10);
  });

  it('counts when there is more than one page, or after a cursor', () => {
    expect(totalCount(0, 11, 10, () => 25)).toBe(25);
    expect(totalCount(7, 2, 10, () => 25)).toBe(25);
  });
});

describe('seqBound', () => {
  it('oldest first: rows after the cursor; the first page after 0', () => {
    expect(seqBound(0, false)).toBe(0);
    expect(seqBound(42, false)).toBe(42);
  });

  it('newest first: rows before the cursor; the first page (and a malformed cursor) before every row', () => {
    expect(seqBound(42, true)).toBe(42);
    expect(seqBound(0, true)).toBe(Number.MAX_SAFE_INTEGER);
    expect(seqBound(decodeCursor('not-a-cursor'), true)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
