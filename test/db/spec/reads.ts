// Reads: threads, turns, messages and elicitations, scoped to their owner, in a stable order and paged, and the
// batched reads the API's loaders make for many parents at once (each parent's rows in the order a single read gives).
import { describe, expect } from 'vitest';
import type { ElicitationStatus, ThreadRecord } from '../../../src/domain/records.js';
import type { Store } from '../../../src/domain/store.js';
import {
  at,
  ANN,
  BOB,
  AGENT,
  SIDE_AGENT,
  ACCEPT,
  DECLINE,
  CANCEL,
  toolCall,
  assistantMessage,
  runningTurn,
  pausedTurn,
  answer,
  ids,
  sorted,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerReadsSpec({ it }: StoreSpec): void {
  describe('reading threads, turns and messages', () => {
    it("reads are scoped to the owner: another owner's thread, turn and elicitation read null", async ({ store }) => {
      const paused = await pausedTurn(store);
      const elicitation = paused.elicitations[0]!;
      expect(await store.getThread(paused.thread.id, ANN)).toEqual(paused.thread);
      expect(await store.getTurn(paused.turn.id, ANN)).toEqual(paused.turn);
      expect(await store.getElicitation(elicitation.id, ANN)).toEqual(elicitation);
      expect(await store.getThread(paused.thread.id, BOB)).toBeNull();
      expect(await store.getTurn(paused.turn.id, BOB)).toBeNull();
      expect(await store.getElicitation(elicitation.id, BOB)).toBeNull();
      expect(await store.getThread('thread-none', ANN)).toBeNull();
      expect(await store.getTurn('turn-none', ANN)).toBeNull();
      expect(await store.loadTurn('turn-none')).toBeNull();
      expect(await store.getElicitation('elc-none', ANN)).toBeNull();
    });

    it('listThreads pages the owner’s threads in creation order, with cursors, of one agent or all', async ({
      store,
    }) => {
      const threads: ThreadRecord[] = [];
      for (let i = 0; i < 5; i++) {
        const agentId = i === 1 || i === 3 ? SIDE_AGENT : AGENT;
        threads.push((await runningTurn(store, { agentId, now: at(i) })).thread);
      }
      await runningTurn(store, { ownerId: BOB, now: at(9) });

      const page1 = await store.listThreads(ANN, null, 2, null);
      expect(page1.items).toEqual(threads.slice(0, 2));
      expect(page1.cursors).toHaveLength(2);
      expect(page1.endCursor).toBe(page1.cursors[1]);
      expect(page1.hasNextPage).toBe(true);
      const page2 = await store.listThreads(ANN, null, 2, page1.endCursor);
      expect(page2.items).toEqual(threads.slice(2, 4));
      expect(page2.hasNextPage).toBe(true);
      const page3 = await store.listThreads(ANN, null, 2, page2.endCursor);
      expect(page3.items).toEqual(threads.slice(4));
      expect(page3.hasNextPage).toBe(false);
      expect(page3.endCursor).toBe(page3.cursors[0]);

      // Any item's cursor starts the next page after it.
      expect(ids((await store.listThreads(ANN, null, 10, page1.cursors[0]!)).items)).toEqual(ids(threads.slice(1)));
      expect(await store.listThreads(ANN, null, 5, null)).toMatchObject({ hasNextPage: false });

      const side = await store.listThreads(ANN, SIDE_AGENT, 10, null);
      expect(side.items).toEqual([threads[1], threads[3]]);
      expect(side.hasNextPage).toBe(false);
      const sidePage = await store.listThreads(ANN, SIDE_AGENT, 1, null);
      expect(sidePage.items).toEqual([threads[1]]);
      expect(sidePage.hasNextPage).toBe(true);
      expect((await store.listThreads(ANN, SIDE_AGENT, 1, sidePage.endCursor)).items).toEqual([threads[3]]);

      expect(ids((await store.listThreads(BOB, null, 10, null)).items)).toHaveLength(1);
      expect(await store.listThreads('user-nobody', null, 10, null)).toEqual({
        items: [],
        cursors: [],
        hasNextPage: false,
        endCursor: null,
      });
    });

    it('listTurns lists a thread’s turns oldest first, with their state', async ({ store }) => {
      const first = await runningTurn(store, { now: at(0) });
      await store.unleasedTurnWriter(first.turn.id).finishTurn({ status: 'FAILED', error: 'model down', now: at(1) });
      const second = await runningTurn(store, { threadId: first.thread.id, now: at(2) });
      await store.unleasedTurnWriter(second.turn.id).finishTurn({ status: 'COMPLETED', text: 'ok', now: at(3) });
      const third = await runningTurn(store, { threadId: first.thread.id, now: at(4) });
      await runningTurn(store, { now: at(5) }); // another thread
      const turns = await store.listTurns(first.thread.id);
      expect(turns.map((t) => [t.id, t.status])).toEqual([
        [first.turn.id, 'FAILED'],
        [second.turn.id, 'COMPLETED'],
        [third.turn.id, 'RUNNING'],
      ]);
      expect(turns[2]).toEqual(third.turn);
      expect(await store.listTurns('thread-none')).toEqual([]);
    });

    it('messages read back in the order written, per thread and per turn, tool calls and ids intact', async ({
      store,
    }) => {
      const { thread, turn } = await runningTurn(store, { now: at(0) });
      const calls = [
        toolCall('edit_note', { id: 'n1', patch: { title: 'Größe ✓', tags: ['a', 'b'], pinned: true, n: 1.5 } }),
        toolCall('read_graph'),
      ];
      const assistant = await store
        .unleasedTurnWriter(turn.id)
        .appendAssistantMessage({ message: assistantMessage('Let me look.', calls), now: at(1) });
      expect(assistant).toEqual({
        id: expect.any(String),
        threadId: thread.id,
        turnId: turn.id,
        role: 'ASSISTANT',
        text: 'Let me look.',
        toolCalls: calls,
        toolCallId: null,
        createdAt: at(1),
      });
      await store.unleasedTurnWriter(turn.id).appendToolMessages({
        messages: [
          { toolCallId: calls[0]!.id, text: 'edited' },
          { toolCallId: calls[1]!.id, text: '{"nodes":[]}' },
        ],
        now: at(1),
      });
      await store
        .unleasedTurnWriter(turn.id)
        .appendAssistantMessage({ message: assistantMessage('Done.'), now: at(2) });
      await store.unleasedTurnWriter(turn.id).finishTurn({ status: 'COMPLETED', text: 'Done.', now: at(2) });
      const next = await runningTurn(store, { threadId: thread.id, now: at(3), message: 'Thanks' });

      const turnMessages = await store.listTurnMessages(turn.id);
      expect(turnMessages.map((m) => [m.role, m.text, m.toolCallId])).toEqual([
        ['USER', 'Tidy my notes.', null],
        ['ASSISTANT', 'Let me look.', null],
        ['TOOL', 'edited', calls[0]!.id],
        ['TOOL', '{"nodes":[]}', calls[1]!.id],
        ['ASSISTANT', 'Done.', null],
      ]);
      expect(turnMessages[1]).toEqual(assistant);
      expect(turnMessages[2]).toMatchObject({ toolCalls: [], turnId: turn.id, threadId: thread.id });
      expect(turnMessages[4]!.toolCalls).toEqual([]);
      expect(new Set(ids(turnMessages)).size).toBe(5);

      const threadMessages = await store.listThreadMessages(thread.id);
      expect(threadMessages.slice(0, 5)).toEqual(turnMessages);
      expect(threadMessages.slice(5).map((m) => [m.role, m.text, m.turnId])).toEqual([
        ['USER', 'Thanks', next.turn.id],
      ]);
      expect(await store.listTurnMessages('turn-none')).toEqual([]);
      expect(await store.listThreadMessages('thread-none')).toEqual([]);
    });
  });

  describe('reading elicitations', () => {
    it('listPendingElicitations: the owner’s PENDING ones not yet expired, oldest first, filtered, counted and paged', async ({
      store,
    }) => {
      const main = await pausedTurn(store, { elicitations: 2, now: at(0) }); // e1, e2
      const side = await pausedTurn(store, { agentId: SIDE_AGENT, now: at(1) }); // e3
      const soon = await pausedTurn(store, { expiresAt: at(100), now: at(2) }); // e4: expired from at(100)
      const bob = await pausedTurn(store, { ownerId: BOB, now: at(3) }); // e5
      const answered = await pausedTurn(store, { now: at(4) });
      await answer(store, answered.elicitations[0]!.id, ACCEPT, { now: at(5) });
      const [e1, e2] = ids(main.elicitations);
      const [e3, e4, e5] = [side, soon, bob].map((p) => p.elicitations[0]!.id);

      const all = await store.listPendingElicitations(ANN, {}, at(100), 10, null);
      expect(ids(all.items)).toEqual([e1, e2, e3]);
      expect(all).toMatchObject({ totalCount: 3, hasNextPage: false });
      expect(all.items[0]).toEqual(main.elicitations[0]);
      expect(ids((await store.listPendingElicitations(ANN, {}, at(99), 10, null)).items)).toEqual([e1, e2, e3, e4]);
      expect(ids((await store.listPendingElicitations(BOB, {}, at(100), 10, null)).items)).toEqual([e5]);

      const byThread = await store.listPendingElicitations(ANN, { threadId: main.thread.id }, at(100), 10, null);
      expect(ids(byThread.items)).toEqual([e1, e2]);
      expect(byThread.totalCount).toBe(2);
      const byAgent = await store.listPendingElicitations(ANN, { agentId: SIDE_AGENT }, at(100), 10, null);
      expect(ids(byAgent.items)).toEqual([e3]);
      const both = await store.listPendingElicitations(
        ANN,
        { threadId: main.thread.id, agentId: SIDE_AGENT },
        at(100),
        10,
        null,
      );
      expect(both).toMatchObject({ items: [], totalCount: 0, hasNextPage: false });
      const nulls = await store.listPendingElicitations(ANN, { threadId: null, agentId: null }, at(100), 10, null);
      expect(ids(nulls.items)).toEqual([e1, e2, e3]);

      const page1 = await store.listPendingElicitations(ANN, {}, at(100), 2, null);
      expect(ids(page1.items)).toEqual([e1, e2]);
      expect(page1).toMatchObject({ hasNextPage: true, totalCount: 3, endCursor: page1.cursors[1] });
      const page2 = await store.listPendingElicitations(ANN, {}, at(100), 2, page1.endCursor);
      expect(ids(page2.items)).toEqual([e3]);
      expect(page2).toMatchObject({ hasNextPage: false, totalCount: 3 });
      const exact = await store.listPendingElicitations(ANN, {}, at(100), 3, null);
      expect(exact).toMatchObject({ hasNextPage: false, totalCount: 3 });
    });

    it('countPendingElicitations counts every owner’s PENDING elicitations not yet expired at `now`', async ({
      store,
    }) => {
      expect(await store.countPendingElicitations(at(0))).toBe(0);
      await pausedTurn(store, { elicitations: 2 });
      await pausedTurn(store, { ownerId: BOB, expiresAt: at(100) });
      const answered = await pausedTurn(store);
      await answer(store, answered.elicitations[0]!.id, DECLINE);
      expect(await store.countPendingElicitations(at(99))).toBe(3);
      expect(await store.countPendingElicitations(at(100))).toBe(2);
    });

    it('listElicitations: every status, oldest first, statuses as read at `now` (PENDING past expiry is EXPIRED)', async ({
      store,
    }) => {
      const partly = await pausedTurn(store, { elicitations: 2 }); // e1 ACCEPTED, e2 PENDING
      await answer(store, partly.elicitations[0]!.id, ACCEPT, { now: at(10) });
      const declined = await pausedTurn(store); // e3 DECLINED
      await answer(store, declined.elicitations[0]!.id, DECLINE, { now: at(10) });
      const cancelled = await pausedTurn(store, { elicitations: 2 }); // e4, e5 CANCELLED
      await answer(store, cancelled.elicitations[0]!.id, CANCEL, { now: at(10) });
      const swept = await pausedTurn(store, { expiresAt: at(100) }); // e6 EXPIRED, as stored
      expect(ids(await store.expireDueTurns(at(150), 10))).toEqual([swept.turn.id]);
      const lapsed = await pausedTurn(store, { expiresAt: at(300) }); // e7 PENDING, past expiry from at(300)
      const bob = await pausedTurn(store, { ownerId: BOB }); // e8
      const side = await pausedTurn(store, { agentId: SIDE_AGENT }); // e9 PENDING
      const [e1, e2] = ids(partly.elicitations);
      const [e4, e5] = ids(cancelled.elicitations);
      const [e3, e6, e7, e8, e9] = [declined, swept, lapsed, bob, side].map((p) => p.elicitations[0]!.id);

      const list = async (
        filter: { threadId?: string | null; agentId?: string | null; statuses?: ElicitationStatus[] | null },
        now = at(500),
      ) => {
        const page = await store.listElicitations(ANN, filter, now, 50, null);
        expect(page.totalCount).toBe(page.items.length);
        return ids(page.items);
      };
      expect(await list({})).toEqual([e1, e2, e3, e4, e5, e6, e7, e9]);
      expect(await list({ statuses: null })).toEqual([e1, e2, e3, e4, e5, e6, e7, e9]);
      expect(await list({ statuses: ['PENDING'] })).toEqual([e2, e9]);
      expect(await list({ statuses: ['EXPIRED'] })).toEqual([e6, e7]);
      expect(await list({ statuses: ['PENDING'] }, at(200))).toEqual([e2, e7, e9]);
      expect(await list({ statuses: ['EXPIRED'] }, at(200))).toEqual([e6]);
      expect(await list({ statuses: ['ACCEPTED', 'DECLINED'] })).toEqual([e1, e3]);
      expect(await list({ statuses: ['DECLINED', 'ACCEPTED', 'DECLINED'] })).toEqual([e1, e3]);
      expect(await list({ statuses: ['CANCELLED'] })).toEqual([e4, e5]);
      expect(await list({ statuses: [] })).toEqual([]);
      expect(await list({ threadId: cancelled.thread.id })).toEqual([e4, e5]);
      expect(await list({ threadId: partly.thread.id, statuses: ['PENDING'] })).toEqual([e2]);
      expect(await list({ agentId: SIDE_AGENT })).toEqual([e9]);
      expect(await list({ agentId: SIDE_AGENT, statuses: ['ACCEPTED'] })).toEqual([]);
      expect(ids((await store.listElicitations(BOB, {}, at(500), 50, null)).items)).toEqual([e8]);

      const records = (await store.listElicitations(ANN, { statuses: ['ACCEPTED'] }, at(500), 50, null)).items;
      expect(records).toEqual([await store.getElicitation(e1!, ANN)]);
      expect(records[0]).toMatchObject({ status: 'ACCEPTED', response: ACCEPT, resolvedBy: ANN, resolvedAt: at(10) });

      // Paged: the pages add up to the whole list, each page counting all of it.
      const seen: string[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 5; pages++) {
        const page: Awaited<ReturnType<Store['listElicitations']>> = await store.listElicitations(
          ANN,
          {},
          at(500),
          3,
          after,
        );
        expect(page.totalCount).toBe(8);
        seen.push(...ids(page.items));
        if (!page.hasNextPage) break;
        after = page.endCursor;
      }
      expect(seen).toEqual([e1, e2, e3, e4, e5, e6, e7, e9]);
      const expiredPage = await store.listElicitations(ANN, { statuses: ['EXPIRED'] }, at(500), 1, null);
      expect(ids(expiredPage.items)).toEqual([e6]);
      expect(expiredPage).toMatchObject({ hasNextPage: true, totalCount: 2 });
      const expiredNext = await store.listElicitations(
        ANN,
        { statuses: ['EXPIRED'] },
        at(500),
        1,
        expiredPage.endCursor,
      );
      expect(ids(expiredNext.items)).toEqual([e7]);
      expect(expiredNext).toMatchObject({ hasNextPage: false, totalCount: 2 });
    });
  });

  describe('batched reads (the API loaders)', () => {
    it('loads turns and threads of many ids in one call, missing ids left out, any owner', async ({ store }) => {
      const a = await pausedTurn(store);
      const b = await runningTurn(store, { ownerId: BOB });
      const turns = await store.loadTurns([a.turn.id, 'turn-missing', b.turn.id]);
      expect(sorted(ids(turns))).toEqual(sorted([a.turn.id, b.turn.id]));
      expect(turns.find((t) => t.id === a.turn.id)).toEqual(await store.loadTurn(a.turn.id));
      const threads = await store.loadThreads([b.thread.id, a.thread.id, 'thread-missing']);
      expect(sorted(ids(threads))).toEqual(sorted([a.thread.id, b.thread.id]));
      expect(threads.find((t) => t.id === b.thread.id)).toEqual(await store.getThread(b.thread.id, BOB));
      expect(await store.loadTurns([])).toEqual([]);
    });

    it('lists the messages, turns and elicitations of several parents at once, each in its own order', async ({
      store,
    }) => {
      const a = await pausedTurn(store, { elicitations: 2 });
      const b = await pausedTurn(store);
      const next = await runningTurn(store, { threadId: b.thread.id, now: at(5) });
      const byTurn = await store.listMessagesOfTurns([a.turn.id, b.turn.id]);
      expect(byTurn.filter((m) => m.turnId === a.turn.id)).toEqual(await store.listTurnMessages(a.turn.id));
      expect(byTurn.filter((m) => m.turnId === b.turn.id)).toEqual(await store.listTurnMessages(b.turn.id));
      const byThread = await store.listMessagesOfThreads([b.thread.id, a.thread.id]);
      expect(byThread.filter((m) => m.threadId === b.thread.id)).toEqual(await store.listThreadMessages(b.thread.id));
      expect(byThread).toHaveLength(
        (await store.listThreadMessages(a.thread.id)).length + (await store.listThreadMessages(b.thread.id)).length,
      );
      const turnsOf = await store.listTurnsOfThreads([a.thread.id, b.thread.id]);
      expect(ids(turnsOf.filter((t) => t.threadId === b.thread.id))).toEqual([b.turn.id, next.turn.id]);
      expect(turnsOf.filter((t) => t.threadId === b.thread.id)).toEqual(await store.listTurns(b.thread.id));
      const elicitationsOf = await store.listElicitationsOfTurns([b.turn.id, a.turn.id, 'turn-missing']);
      expect(elicitationsOf.filter((e) => e.turnId === a.turn.id)).toEqual(await store.listTurnElicitations(a.turn.id));
      expect(elicitationsOf).toHaveLength(3);
    });
  });
}
