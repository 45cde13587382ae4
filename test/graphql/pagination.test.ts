// Relay pagination of pendingElicitations and threads: first/after, totalCount, hasNextPage, filters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/models/model.js';
import { dataOf } from '../support/harness.js';
import { AGENT_ID, call, callStep, startScenario, textStep, type Scenario } from '../support/scenario.js';

const PENDING = `query($first: Int, $after: String, $threadId: ID, $agentId: ID) {
  pendingElicitations(first: $first, after: $after, threadId: $threadId, agentId: $agentId) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id turn { thread { id } } } }
  }
}`;
const THREADS = `query($first: Int, $after: String, $agentId: ID, $newestFirst: Boolean) {
  threads(first: $first, after: $after, agentId: $agentId, newestFirst: $newestFirst) {
    pageInfo { hasNextPage endCursor } edges { cursor node { id } }
  }
}`;
const AUDIT = `query($first: Int, $after: String, $status: [ElicitationStatus!], $newestFirst: Boolean) {
  elicitations(first: $first, after: $after, status: $status, newestFirst: $newestFirst) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } }
  }
}`;

const COUNT = 5;
let s: Scenario;
const elicitationIds: string[] = [];
const threadIds: string[] = [];

beforeAll(async () => {
  // The model calls the tool on every user message except one that asks for no tool.
  const model = (request: ModelRequest) => {
    const last = request.messages.at(-1)!;
    return last.role === 'USER' && !last.text?.includes('no tool') ? callStep(call('edit_note')) : textStep('ok');
  };
  s = await startScenario({ tools: [{ name: 'edit_note' }], script: [model] });
  for (let i = 0; i < COUNT; i++) {
    const { turn, thread } = await s.start(`edit ${i}`);
    if (turn.status !== 'PAUSED') throw new Error(`turn ${i} did not pause`);
    elicitationIds.push(turn.pendingElicitations[0].id);
    threadIds.push(thread.id);
  }
  // One completed thread too: it has nothing pending.
  threadIds.push((await s.start('no tool, please')).thread.id);
});
afterAll(async () => {
  await s.close();
});

async function pages<T>(query: string, key: string, first: number, variables: Record<string, unknown> = {}) {
  const seen: T[] = [];
  let after: string | null = null;
  const shapes: { size: number; hasNextPage: boolean; totalCount?: number }[] = [];
  for (let guard = 0; guard < 20; guard++) {
    const connection: any = dataOf(await s.h.gql(query, { first, after, ...variables }))[key];
    seen.push(...connection.edges.map((e: any) => e.node.id));
    shapes.push({
      size: connection.edges.length,
      hasNextPage: connection.pageInfo.hasNextPage,
      ...(connection.totalCount !== undefined && { totalCount: connection.totalCount }),
    });
    if (connection.edges.length) expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1).cursor);
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  return { seen, shapes };
}

describe('pendingElicitations', () => {
  it('pages oldest first with first/after; totalCount counts all of them on every page', async () => {
    const { seen, shapes } = await pages(PENDING, 'pendingElicitations', 2);
    expect(seen).toEqual(elicitationIds);
    expect(shapes).toEqual([
      { size: 2, hasNextPage: true, totalCount: COUNT },
      { size: 2, hasNextPage: true, totalCount: COUNT },
      { size: 1, hasNextPage: false, totalCount: COUNT },
    ]);
  });

  it('one page holds them all by default', async () => {
    const connection = dataOf(await s.h.gql(PENDING)).pendingElicitations;
    expect(connection.edges.map((e: any) => e.node.id)).toEqual(elicitationIds);
    expect(connection.pageInfo.hasNextPage).toBe(false);
  });

  it('first: 0 gives no edges but tells that there are more', async () => {
    const connection = dataOf(await s.h.gql(PENDING, { first: 0 })).pendingElicitations;
    expect(connection.edges).toEqual([]);
    expect(connection.totalCount).toBe(COUNT);
    expect(connection.pageInfo.hasNextPage).toBe(true);
  });

  it('filters by thread and agent', async () => {
    const byThread = dataOf(await s.h.gql(PENDING, { threadId: threadIds[2] })).pendingElicitations;
    expect(byThread.totalCount).toBe(1);
    expect(byThread.edges.map((e: any) => e.node.id)).toEqual([elicitationIds[2]]);
    expect(byThread.edges[0].node.turn.thread.id).toBe(threadIds[2]);
    expect(dataOf(await s.h.gql(PENDING, { agentId: AGENT_ID })).pendingElicitations.totalCount).toBe(COUNT);
    expect(dataOf(await s.h.gql(PENDING, { agentId: 'other' })).pendingElicitations).toMatchObject({
      totalCount: 0,
      edges: [],
    });
  });

  it('an answered elicitation leaves the list', async () => {
    await s.resolve(elicitationIds[0]!, 'DECLINE');
    const { seen, shapes } = await pages(PENDING, 'pendingElicitations', 3);
    expect(seen).toEqual(elicitationIds.slice(1));
    expect(shapes.map((p) => p.totalCount)).toEqual([COUNT - 1, COUNT - 1]);
  });
});

describe('threads', () => {
  it('pages in creation order with first/after', async () => {
    const { seen, shapes } = await pages(THREADS, 'threads', 4);
    expect(seen).toEqual(threadIds);
    expect(shapes).toEqual([
      { size: 4, hasNextPage: true },
      { size: 2, hasNextPage: false },
    ]);
  });

  it('filters by agent', async () => {
    expect((await pages(THREADS, 'threads', 10, { agentId: AGENT_ID })).seen).toEqual(threadIds);
    expect((await pages(THREADS, 'threads', 10, { agentId: 'other' })).seen).toEqual([]);
  });

  it('a cursor from the middle continues after it', async () => {
    const firstPage = dataOf(await s.h.gql(THREADS, { first: 2 })).threads;
    const rest = dataOf(await s.h.gql(THREADS, { first: 100, after: firstPage.edges[0].cursor })).threads;
    expect(rest.edges.map((e: any) => e.node.id)).toEqual(threadIds.slice(1));
  });
});

describe('newest first', () => {
  it('threads: the same threads, newest first, page after page', async () => {
    const { seen, shapes } = await pages(THREADS, 'threads', 4, { newestFirst: true });
    expect(seen).toEqual([...threadIds].reverse());
    expect(shapes).toEqual([
      { size: 4, hasNextPage: true },
      { size: 2, hasNextPage: false },
    ]);
    expect((await pages(THREADS, 'threads', 10, { newestFirst: false })).seen).toEqual(threadIds);
  });

  it('threads: a cursor from the middle continues with older ones', async () => {
    const firstPage = dataOf(await s.h.gql(THREADS, { first: 2, newestFirst: true })).threads;
    const after = firstPage.edges[1].cursor;
    const rest = dataOf(await s.h.gql(THREADS, { first: 100, after, newestFirst: true })).threads;
    expect(rest.edges.map((e: any) => e.node.id)).toEqual([...threadIds].reverse().slice(2));
  });

  it.each([
    ['every status', null],
    ['one status', ['PENDING']],
  ])(
    'the audit list, %s: the same requests, newest first, with the same totalCount on every page',
    async (_what, status) => {
      const oldest = await pages(AUDIT, 'elicitations', 100, { status });
      const newest = await pages(AUDIT, 'elicitations', 2, { status, newestFirst: true });
      expect(oldest.seen.length).toBeGreaterThan(2);
      expect(newest.seen).toEqual([...oldest.seen].reverse());
      expect(new Set(newest.shapes.map((p) => p.totalCount))).toEqual(new Set([oldest.seen.length]));
      expect(newest.shapes.at(-1)?.hasNextPage).toBe(false);
    },
  );

  it('a cursor that is not one reads as the start, newest first too', async () => {
    const result = await s.h.gql(THREADS, { first: 100, after: 'not-a-cursor', newestFirst: true });
    expect(result.errors).toBeUndefined();
    expect(dataOf(result).threads.edges.map((e: any) => e.node.id)).toEqual([...threadIds].reverse());
  });
});

describe('cursors a client made up', () => {
  // Cursors are opaque: a malformed one reads as the start, one past any row as the end; neither fails the query.
  const cursor = (text: string) => Buffer.from(text).toString('base64url');

  it.each([
    ['a position beyond any integer the stores hold', cursor('seq:99999999999999999999999'), 0],
    ['a position past the last row', cursor('seq:9007199254740991'), 0],
    ['not a cursor at all', 'not-a-cursor', COUNT + 1],
  ])('%s: no error', async (_label, after, threads) => {
    const result = await s.h.gql(THREADS, { first: 100, after });
    expect(result.errors).toBeUndefined();
    expect(dataOf(result).threads.edges).toHaveLength(threads);
    const pending = await s.h.gql(PENDING, { first: 100, after });
    expect(pending.errors).toBeUndefined();
  });
});
