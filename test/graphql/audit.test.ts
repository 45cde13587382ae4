// Audit: who answered each elicitation and when (resolvedBy, resolvedAt), how each one stopped waiting
// (resolution), and the viewer's whole history through `elicitations`, filtered by thread and status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../support/harness.js';
import { AGENT_ID, call, callStep, manualClock, startScenario, textStep, type Scenario } from '../support/scenario.js';

const HISTORY = `query($threadId: ID, $agentId: ID, $status: [ElicitationStatus!], $first: Int, $after: String) {
  elicitations(threadId: $threadId, agentId: $agentId, status: $status, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { node { id status resolution resolvedBy resolvedAt createdAt expiresAt response { action content } toolCall { name } } }
  }
}`;

describe('the audit trail of elicitations', () => {
  let s: Scenario;
  const clock = manualClock('2026-03-01T12:00:00.000Z');
  const ids = { answered: '', cancel: '', closedWithTurn: '', superseded: '', expired: '' };
  let threadId = '';

  beforeAll(async () => {
    s = await startScenario({
      clock: clock.now,
      agent: { pauseTtlSeconds: 600 },
      tools: [
        { name: 'wipe', annotations: { destructiveHint: true } },
        { name: 'burn', annotations: { destructiveHint: true } },
      ],
      script: [
        // 1: one call, answered ACCEPT with instructions.
        callStep(call('wipe', { what: 'a' }, 'c1')),
        textStep('wiped'),
        // 2: two calls, the first answered CANCEL: the second is closed with the turn.
        callStep(call('wipe', { what: 'b' }, 'c2'), call('burn', { what: 'b' }, 'c3')),
        // 3: superseded by the next message.
        callStep(call('burn', { what: 'c' }, 'c4')),
        // 4: left to expire.
        callStep(call('burn', { what: 'd' }, 'c5')),
        // 5: pending in another thread, for the thread and agent filters.
        callStep(call('burn', { what: 'elsewhere' }, 'c7')),
        // 6: pending, for the status filter.
        callStep(call('burn', { what: 'e' }, 'c6')),
        textStep('done'),
      ],
    });
    const first = await s.start('one');
    threadId = first.thread.id;
    ids.answered = first.turn.pendingElicitations[0].id;
    clock.advance(5);
    expect((await s.resolve(ids.answered, 'ACCEPT', { instructions: 'only a' })).userErrors).toEqual([]);

    const second = await s.start('two', threadId);
    [ids.cancel, ids.closedWithTurn] = second.turn.pendingElicitations.map((e: any) => e.id as string);
    clock.advance(5);
    expect((await s.resolve(ids.cancel, 'CANCEL')).turn.status).toBe('CANCELLED');

    const third = await s.start('three', threadId);
    ids.superseded = third.turn.pendingElicitations[0].id;
    clock.advance(5);
    const fourth = await s.start('four', threadId);
    ids.expired = fourth.turn.pendingElicitations[0].id;
    clock.advance(601);
  });
  afterAll(async () => {
    await s.close();
  });

  const byId = async () => {
    const history = dataOf(await s.h.gql(HISTORY, { threadId })).elicitations;
    return Object.fromEntries(history.edges.map((e: any) => [e.node.id, e.node]));
  };

  it('records who answered and when; the server closing one leaves resolvedBy null and says why', async () => {
    const all = await byId();
    expect(all[ids.answered]).toMatchObject({
      status: 'ACCEPTED',
      resolution: 'ANSWERED',
      resolvedBy: 'local',
      resolvedAt: '2026-03-01T12:00:05.000Z',
      response: { action: 'ACCEPT', content: { instructions: 'only a' } },
    });
    expect(all[ids.cancel]).toMatchObject({
      status: 'CANCELLED',
      resolution: 'ANSWERED',
      resolvedBy: 'local',
      response: { action: 'CANCEL' },
    });
    expect(all[ids.closedWithTurn]).toMatchObject({
      status: 'CANCELLED',
      resolution: 'TURN_CANCELLED',
      resolvedBy: null,
      response: null,
      resolvedAt: '2026-03-01T12:00:10.000Z',
    });
    expect(all[ids.superseded]).toMatchObject({
      status: 'CANCELLED',
      resolution: 'SUPERSEDED',
      resolvedBy: null,
      response: null,
      resolvedAt: '2026-03-01T12:00:15.000Z',
    });
    // Past expiresAt and not yet swept: it reads EXPIRED at once (never fail open), recorded time still null.
    expect(all[ids.expired]).toMatchObject({
      status: 'EXPIRED',
      resolution: 'EXPIRED',
      resolvedBy: null,
      response: null,
      resolvedAt: null,
    });
  });

  it('once the expiry is recorded, resolvedAt says when', async () => {
    await s.h.server.services.runner.expireDue();
    const all = await byId();
    expect(all[ids.expired]).toMatchObject({
      status: 'EXPIRED',
      resolution: 'EXPIRED',
      resolvedBy: null,
      resolvedAt: '2026-03-01T12:10:16.000Z',
    });
  });

  it('lists the history oldest first, filters by status as read now, and pages', async () => {
    const all = dataOf(await s.h.gql(HISTORY, { threadId })).elicitations;
    expect(all.totalCount).toBe(5);
    expect(all.edges.map((e: any) => e.node.id)).toEqual([
      ids.answered,
      ids.cancel,
      ids.closedWithTurn,
      ids.superseded,
      ids.expired,
    ]);
    const cancelled = dataOf(await s.h.gql(HISTORY, { threadId, status: ['CANCELLED'] })).elicitations;
    expect(cancelled.edges.map((e: any) => e.node.id)).toEqual([ids.cancel, ids.closedWithTurn, ids.superseded]);
    const none = dataOf(await s.h.gql(HISTORY, { threadId, status: [] })).elicitations;
    expect(none).toMatchObject({ totalCount: 0, edges: [] });
    // The same statuses in another order, or repeated, are the same filter; a second page of it counts them all.
    const twoStatuses = dataOf(
      await s.h.gql(HISTORY, { threadId, status: ['EXPIRED', 'CANCELLED', 'EXPIRED'], first: 1 }),
    ).elicitations;
    const page2 = dataOf(
      await s.h.gql(HISTORY, {
        threadId,
        status: ['CANCELLED', 'EXPIRED'],
        first: 10,
        after: twoStatuses.pageInfo.endCursor,
      }),
    ).elicitations;
    expect(twoStatuses.totalCount).toBe(4);
    expect(page2.totalCount).toBe(4);
    expect([...twoStatuses.edges, ...page2.edges].map((e: any) => e.node.id)).toEqual([
      ids.cancel,
      ids.closedWithTurn,
      ids.superseded,
      ids.expired,
    ]);
    const first = dataOf(await s.h.gql(HISTORY, { threadId, first: 2 })).elicitations;
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = dataOf(await s.h.gql(HISTORY, { threadId, first: 10, after: first.pageInfo.endCursor })).elicitations;
    expect([...first.edges, ...rest.edges].map((e: any) => e.node.id)).toEqual(all.edges.map((e: any) => e.node.id));
  });

  it('filters by thread and by agent, alone or with statuses, each combination on its own', async () => {
    const other = await s.start('elsewhere');
    const elsewhere = other.turn.pendingElicitations[0].id as string;
    const listed = async (variables: Record<string, unknown>) =>
      dataOf(await s.h.gql(HISTORY, variables)).elicitations.edges.map((e: any) => e.node.id as string);
    const inThread = [ids.cancel, ids.closedWithTurn, ids.superseded];
    // The same status filter with and without a thread, asked in both orders.
    expect(await listed({ status: ['CANCELLED', 'PENDING'] })).toEqual([...inThread, elsewhere]);
    expect(await listed({ threadId, status: ['CANCELLED', 'PENDING'] })).toEqual(inThread);
    expect(await listed({ status: ['CANCELLED', 'PENDING'] })).toEqual([...inThread, elsewhere]);
    expect(await listed({ threadId: other.thread.id, status: ['CANCELLED', 'PENDING'] })).toEqual([elsewhere]);
    // By agent: this scenario's agent has them all; another agent none, with or without a status filter.
    const all = await listed({ first: 100 });
    expect(all).toHaveLength(6);
    expect(await listed({ agentId: AGENT_ID, first: 100 })).toEqual(all);
    expect(await listed({ agentId: AGENT_ID, status: ['PENDING'] })).toEqual([elsewhere]);
    expect(await listed({ agentId: 'no-such-agent' })).toEqual([]);
    expect(await listed({ agentId: 'no-such-agent', status: ['CANCELLED'] })).toEqual([]);
  });

  it('a PENDING one past its expiry counts as EXPIRED in the status filter too', async () => {
    const fresh = await s.start('five', threadId);
    expect(fresh.turn.status).toBe('PAUSED');
    const pendingId = fresh.turn.pendingElicitations[0].id;
    const pending = dataOf(await s.h.gql(HISTORY, { threadId, status: ['PENDING'] })).elicitations.edges.map(
      (e: any) => e.node.id,
    );
    expect(pending).toEqual([pendingId]);
    clock.advance(601);
    const afterExpiry = dataOf(await s.h.gql(HISTORY, { threadId, status: ['PENDING'] })).elicitations;
    expect(afterExpiry.totalCount).toBe(0);
    const expired = dataOf(await s.h.gql(HISTORY, { threadId, status: ['EXPIRED'] })).elicitations.edges.map(
      (e: any) => e.node.id,
    );
    expect(expired).toContain(pendingId);
  });
});
