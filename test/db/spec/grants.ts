// Remembered approvals and edited answers: an ACCEPT with `remember` records its grant in the answer's commit, and
// nothing else records one; reading, revoking and retaining grants; markToolStarted under a grant, refused once it
// lapsed, journaling the uses; edited arguments read back wherever the answer is read.
import { describe, expect } from 'vitest';
import type {
  ApprovalGrantRecord,
  ElicitationAnswer,
  ElicitationRecord,
  PendingStep,
} from '../../../src/domain/records.js';
import { GrantLapsedError, type Store } from '../../../src/domain/store.js';
import {
  at,
  ANN,
  BOB,
  AGENT,
  outcome,
  SIDE_AGENT,
  ACCEPT,
  lease,
  toolCall,
  assistantMessage,
  runningTurn,
  answer,
  stateOf,
  ids,
  sorted,
  rejection,
  TOOL_HASH,
  rememberableDraftFor,
  rememberablePause,
  acceptRemembering,
  grantOf,
  turnWithCall,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerGrantsSpec({ it }: StoreSpec): void {
  describe('remembered approvals and edited answers', () => {
    it('retention: deleteLapsedGrants deletes at most `limit` grants revoked or expired before `before`; active ones stay', async ({
      store,
    }) => {
      const { grant: revoked } = await grantOf(store, 'grt-revoked', { ttlSeconds: 3600 }); // expires at(3610)
      await store.revokeApprovalGrant(revoked.id, ANN, at(20));
      const { grant: expired } = await grantOf(store, 'grt-expired', { ttlSeconds: 30 }); // expires at(40)
      const { grant: active } = await grantOf(store, 'grt-active', { ttlSeconds: 3600 });
      expect(await store.deleteLapsedGrants(at(15), 10)).toBe(0); // nothing lapsed before at(15)
      expect(await store.deleteLapsedGrants(at(100), 1)).toBe(1);
      expect(await store.deleteLapsedGrants(at(100), 10)).toBe(1);
      expect(await store.getApprovalGrant(revoked.id, ANN)).toBeNull();
      expect(await store.getApprovalGrant(expired.id, ANN)).toBeNull();
      expect(await store.getApprovalGrant(active.id, ANN)).toEqual(active);
    });

    it("an ACCEPT with edited arguments and remember is stored as given and read back everywhere; toolCall keeps the model's arguments", async ({
      store,
    }) => {
      const paused = await rememberablePause(store, { arguments: { note: 'n1' } });
      const id = paused.elicitations[0]!.id;
      const given: ElicitationAnswer = {
        action: 'ACCEPT',
        content: { instructions: 'keep it short' },
        arguments: { note: 'n1-edited', tags: ['x', 'y'], nested: { deep: true } },
        remember: { scope: 'THREAD', ttlSeconds: 60 },
      };
      const result = await answer(store, id, given, { grantId: 'grt-1', now: at(10) });
      expect(outcome(result)).toBe('resume');
      const expected: ElicitationRecord = {
        ...paused.elicitations[0]!,
        status: 'ACCEPTED',
        response: given,
        grantId: 'grt-1',
        resolvedBy: ANN,
        resolvedAt: at(10),
      };
      expect(result.ok && result.kind === 'resume' && result.elicitation).toEqual(expected);
      expect(await store.getElicitation(id, ANN)).toEqual(expected);
      expect(await store.listTurnElicitations(paused.turn.id)).toEqual([expected]);
      expect((await store.listElicitations(ANN, {}, at(20), 10, null)).items).toEqual([expected]);
      // The audit keeps both: what the model asked for, and what the user let run.
      expect(expected.toolCall).toMatchObject({ arguments: { note: 'n1' }, definitionHash: TOOL_HASH });
    });

    it('an edited ACCEPT without remember records no grant; a plain ACCEPT reads back with neither', async ({
      store,
    }) => {
      const edited = await rememberablePause(store);
      const given: ElicitationAnswer = { action: 'ACCEPT', content: null, arguments: { note: 'other' } };
      await answer(store, edited.elicitations[0]!.id, given);
      const read = await store.getElicitation(edited.elicitations[0]!.id, ANN);
      expect(read).toMatchObject({ status: 'ACCEPTED', grantId: null });
      expect(read!.response).toEqual(given);
      expect(read!.response!.remember ?? null).toBeNull();

      const plain = await rememberablePause(store);
      await answer(store, plain.elicitations[0]!.id, ACCEPT);
      const plainRead = await store.getElicitation(plain.elicitations[0]!.id, ANN);
      expect(plainRead).toMatchObject({ grantId: null, response: { action: 'ACCEPT', content: null } });
      expect(plainRead!.response!.arguments ?? null).toBeNull();
      expect((await store.listApprovalGrants(ANN, { activeOnly: false }, at(20), 10, null)).items).toEqual([]);
    });

    it.for(['THREAD', 'AGENT'] as const)(
      'the grant of an ACCEPT with remember (%s) is written with the answer: owner, agent, scope, thread, tool, hash, expiry',
      async (scope, { store }) => {
        const paused = await rememberablePause(store);
        const id = paused.elicitations[0]!.id;
        await answer(store, id, acceptRemembering(scope, 60), { grantId: 'grt-1', now: at(10) });
        const grant: ApprovalGrantRecord = {
          id: 'grt-1',
          ownerId: ANN,
          agentId: AGENT,
          scope,
          threadId: scope === 'THREAD' ? paused.thread.id : null,
          toolId: 'demo:edit_note',
          definitionHash: TOOL_HASH,
          elicitationId: id,
          createdAt: at(10),
          expiresAt: at(70),
          revokedAt: null,
          approvers: null,
        };
        expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(grant);
        expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([grant]);
        expect((await store.listApprovalGrants(ANN, { activeOnly: true }, at(69), 10, null)).items).toEqual([grant]);
      },
    );

    it('the grant and the answer commit together: when the grant cannot be written, the answer is not recorded', async ({
      store,
    }) => {
      await grantOf(store, 'grt-taken');
      const paused = await rememberablePause(store);
      const state = await stateOf(store, paused.turn.id);
      // The runner makes a fresh id per answer; a taken one makes the grant's insert fail inside the transaction.
      const failed = await rejection(
        answer(store, paused.elicitations[0]!.id, acceptRemembering('AGENT', 60), { grantId: 'grt-taken' }),
      );
      expect(failed).toBeInstanceOf(Error);
      expect(await stateOf(store, paused.turn.id)).toEqual(state);
      expect(await store.getElicitation(paused.elicitations[0]!.id, ANN)).toMatchObject({
        status: 'PENDING',
        response: null,
        grantId: null,
      });
      expect(await store.getApprovalGrant('grt-taken', ANN)).toMatchObject({ scope: 'THREAD' });
    });

    it('no grant unless the answer is recorded: a duplicate, an already_resolved, an expired or another owner’s answer records none', async ({
      store,
    }) => {
      const { paused } = await grantOf(store, 'grt-1', { ttlSeconds: 60 });
      const id = paused.elicitations[0]!.id;
      const state = await stateOf(store, paused.turn.id);
      const duplicate = await answer(store, id, acceptRemembering('THREAD', 60), {
        grantId: 'grt-dup',
        now: at(20),
      });
      expect(outcome(duplicate)).toBe('duplicate');
      expect(duplicate.ok && duplicate.kind === 'duplicate' && duplicate.elicitation.grantId).toBe('grt-1');
      const other = await answer(store, id, acceptRemembering('AGENT', 60), {
        grantId: 'grt-other',
        now: at(20),
      });
      expect(outcome(other)).toBe('ALREADY_RESOLVED');
      expect(await stateOf(store, paused.turn.id)).toEqual(state);

      const late = await rememberablePause(store, { expiresAt: at(60) });
      const expired = await answer(store, late.elicitations[0]!.id, acceptRemembering('THREAD', 60), {
        grantId: 'grt-late',
        now: at(60),
      });
      expect(outcome(expired)).toBe('EXPIRED');

      const bobs = await rememberablePause(store, { ownerId: BOB });
      const annOnBobs = await answer(store, bobs.elicitations[0]!.id, acceptRemembering('AGENT', 60), {
        grantId: 'grt-ann-on-bob',
      });
      expect(annOnBobs).toEqual({ ok: false, code: 'NOT_FOUND', of: 'elicitation' });

      for (const gone of ['grt-dup', 'grt-other', 'grt-late', 'grt-ann-on-bob']) {
        expect(await store.getApprovalGrant(gone, ANN)).toBeNull();
        expect(await store.getApprovalGrant(gone, BOB)).toBeNull();
      }
      expect(ids((await store.listApprovalGrants(ANN, { activeOnly: false }, at(30), 10, null)).items)).toEqual([
        'grt-1',
      ]);
      expect((await store.listApprovalGrants(BOB, { activeOnly: false }, at(30), 10, null)).items).toEqual([]);
      expect(await store.listGrantUses(['grt-dup', 'grt-other', 'grt-late'])).toEqual([]);
    });

    it.for([
      ['DECLINE', 'resume'],
      ['CANCEL', 'cancelled'],
    ] as const)(
      '%s with remember records no grant (only an ACCEPT is remembered)',
      async ([action, kind], { store }) => {
        const paused = await rememberablePause(store);
        const result = await answer(
          store,
          paused.elicitations[0]!.id,
          { action, content: null, remember: { scope: 'AGENT', ttlSeconds: 60 } },
          { grantId: 'grt-no' },
        );
        expect(outcome(result)).toBe(kind);
        expect(await store.getElicitation(paused.elicitations[0]!.id, ANN)).toMatchObject({ grantId: null });
        expect(await store.getApprovalGrant('grt-no', ANN)).toBeNull();
        expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([]);
      },
    );

    it("listGrantCandidates: the owner's unrevoked grants of one agent's tool, oldest first (expired ones too: coveringGrant decides)", async ({
      store,
    }) => {
      const { grant: short } = await grantOf(store, 'grt-short', { ttlSeconds: 1, answeredAt: at(10) });
      const { grant: wide } = await grantOf(store, 'grt-wide', { scope: 'AGENT', answeredAt: at(11) });
      await grantOf(store, 'grt-side', { agentId: SIDE_AGENT, answeredAt: at(12) });
      await grantOf(store, 'grt-other-tool', { toolName: 'read_graph', answeredAt: at(13) });
      await grantOf(store, 'grt-bob', { ownerId: BOB, answeredAt: at(14) });
      await grantOf(store, 'grt-revoked', { answeredAt: at(15) });
      const { grant: newest } = await grantOf(store, 'grt-newest', { answeredAt: at(16) });
      expect(await store.revokeApprovalGrant('grt-revoked', ANN, at(20))).not.toBeNull();

      expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([short, wide, newest]);
      expect(ids(await store.listGrantCandidates(ANN, SIDE_AGENT, 'demo:edit_note'))).toEqual(['grt-side']);
      expect(ids(await store.listGrantCandidates(ANN, AGENT, 'demo:read_graph'))).toEqual(['grt-other-tool']);
      expect(ids(await store.listGrantCandidates(BOB, AGENT, 'demo:edit_note'))).toEqual(['grt-bob']);
      expect(await store.listGrantCandidates(BOB, SIDE_AGENT, 'demo:edit_note')).toEqual([]);
      expect(await store.listGrantCandidates(ANN, AGENT, 'demo:unknown')).toEqual([]);
    });

    it("getApprovalGrant reads the owner's grant only: another owner's or an unknown id is null", async ({ store }) => {
      const { grant } = await grantOf(store, 'grt-1');
      expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(grant);
      expect(await store.getApprovalGrant('grt-1', BOB)).toBeNull();
      expect(await store.getApprovalGrant('grt-none', ANN)).toBeNull();
    });

    it('listApprovalGrants: oldest first and paged; activeOnly keeps those ACTIVE at `now`; filtered by agent and thread', async ({
      store,
    }) => {
      const { paused: inThread } = await grantOf(store, 'g1', { ttlSeconds: 60, answeredAt: at(10) }); // to at(70)
      const { paused: agentWide } = await grantOf(store, 'g2', { scope: 'AGENT', answeredAt: at(11) });
      await grantOf(store, 'g3', { agentId: SIDE_AGENT, answeredAt: at(12) });
      await grantOf(store, 'g4', { answeredAt: at(13) });
      await grantOf(store, 'g5', { ownerId: BOB, answeredAt: at(14) });
      await store.revokeApprovalGrant('g4', ANN, at(20));

      const list = async (
        filter: { agentId?: string | null; threadId?: string | null; activeOnly: boolean },
        now = at(30),
      ) => ids((await store.listApprovalGrants(ANN, filter, now, 10, null)).items);
      expect(await list({ activeOnly: false })).toEqual(['g1', 'g2', 'g3', 'g4']);
      expect(await list({ activeOnly: false }, at(5000))).toEqual(['g1', 'g2', 'g3', 'g4']);
      expect(await list({ activeOnly: true })).toEqual(['g1', 'g2', 'g3']);
      expect(await list({ activeOnly: true }, at(69))).toEqual(['g1', 'g2', 'g3']);
      expect(await list({ activeOnly: true }, at(70))).toEqual(['g2', 'g3']); // g1 expires at exactly at(70)
      expect(await list({ activeOnly: true }, at(5000))).toEqual([]);
      expect(await list({ activeOnly: false, agentId: SIDE_AGENT })).toEqual(['g3']);
      expect(await list({ activeOnly: false, agentId: AGENT })).toEqual(['g1', 'g2', 'g4']);
      expect(await list({ activeOnly: true, agentId: AGENT })).toEqual(['g1', 'g2']);
      expect(await list({ activeOnly: false, threadId: inThread.thread.id })).toEqual(['g1']);
      // An AGENT-scoped grant belongs to no thread: a thread filter lists the THREAD-scoped grants made there.
      expect(await list({ activeOnly: false, threadId: agentWide.thread.id })).toEqual([]);
      expect(await list({ activeOnly: false, threadId: inThread.thread.id, agentId: SIDE_AGENT })).toEqual([]);
      expect(await list({ activeOnly: false, threadId: null, agentId: null })).toEqual(['g1', 'g2', 'g3', 'g4']);
      expect(ids((await store.listApprovalGrants(BOB, { activeOnly: true }, at(30), 10, null)).items)).toEqual(['g5']);

      const page1 = await store.listApprovalGrants(ANN, { activeOnly: false }, at(30), 3, null);
      expect(ids(page1.items)).toEqual(['g1', 'g2', 'g3']);
      expect(page1).toMatchObject({ hasNextPage: true, endCursor: page1.cursors[2] });
      const page2 = await store.listApprovalGrants(ANN, { activeOnly: false }, at(30), 3, page1.endCursor);
      expect(ids(page2.items)).toEqual(['g4']);
      expect(page2.hasNextPage).toBe(false);
      const active1 = await store.listApprovalGrants(ANN, { activeOnly: true }, at(30), 2, null);
      expect(ids(active1.items)).toEqual(['g1', 'g2']);
      const active2 = await store.listApprovalGrants(ANN, { activeOnly: true }, at(30), 2, active1.endCursor);
      expect(ids(active2.items)).toEqual(['g3']);
      expect(active2.hasNextPage).toBe(false);
    });

    it("revokeApprovalGrant: the owner's grant only (another owner's: null, unchanged); revoking again keeps the first revokedAt", async ({
      store,
    }) => {
      const { grant } = await grantOf(store, 'grt-1');
      expect(await store.revokeApprovalGrant('grt-1', BOB, at(15))).toBeNull();
      expect(await store.revokeApprovalGrant('grt-none', ANN, at(15))).toBeNull();
      expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(grant);

      const revoked = await store.revokeApprovalGrant('grt-1', ANN, at(20));
      expect(revoked).toEqual({ ...grant, revokedAt: at(20) });
      expect(await store.revokeApprovalGrant('grt-1', ANN, at(30))).toEqual(revoked);
      expect(await store.getApprovalGrant('grt-1', ANN)).toEqual(revoked);
      expect(await store.listGrantCandidates(ANN, AGENT, 'demo:edit_note')).toEqual([]);
      expect((await store.listApprovalGrants(ANN, { activeOnly: true }, at(31), 10, null)).items).toEqual([]);
      expect((await store.listApprovalGrants(ANN, { activeOnly: false }, at(31), 10, null)).items).toEqual([revoked]);
    });

    it('markToolStarted with a grant journals it with the start; listGrantUses lists the calls it let run, in the order started', async ({
      store,
    }) => {
      const { grant } = await grantOf(store, 'grt-1', { scope: 'AGENT' });
      const { grant: other } = await grantOf(store, 'grt-2', { scope: 'AGENT' });
      const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
      const [a, b] = [toolCall('edit_note'), toolCall('edit_note')];
      await store
        .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
        .appendAssistantMessage({ message: assistantMessage(null, [a, b]), iterations: 1, now: at(20) });
      expect(
        await store
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .markToolStarted({ toolCallId: b.id, grantId: grant.id, now: at(21) }),
      ).toBe(true);
      expect(
        await store
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .markToolStarted({ toolCallId: a.id, grantId: grant.id, now: at(22) }),
      ).toBe(true);
      // Started before: false, and the journal keeps the first start.
      expect(
        await store
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .markToolStarted({ toolCallId: a.id, grantId: grant.id, now: at(23) }),
      ).toBe(false);
      const plain = await turnWithCall(store);
      expect(
        await store.unleasedTurnWriter(plain.turnId).markToolStarted({ toolCallId: plain.callId, now: at(24) }),
      ).toBe(true);
      const byOther = await turnWithCall(store);
      expect(
        await store
          .unleasedTurnWriter(byOther.turnId)
          .markToolStarted({ toolCallId: byOther.callId, grantId: other.id, now: at(25) }),
      ).toBe(true);

      const uses = [
        { grantId: 'grt-1', turnId: turn.id, toolCallId: b.id, startedAt: at(21) },
        { grantId: 'grt-1', turnId: turn.id, toolCallId: a.id, startedAt: at(22) },
      ];
      expect(await store.listGrantUses(['grt-1'])).toEqual(uses);
      expect(await store.listGrantUses(['grt-2', 'grt-1'])).toEqual([
        ...uses,
        { grantId: 'grt-2', turnId: byOther.turnId, toolCallId: byOther.callId, startedAt: at(25) },
      ]);
      expect(await store.listGrantUses([])).toEqual([]);
      expect(await store.listGrantUses(['grt-none'])).toEqual([]);
      expect(sorted(await store.listUnfinishedToolCalls(turn.id))).toEqual(sorted([a.id, b.id]));
    });

    it('markToolStarted with a grant just before its expiry starts the call', async ({ store }) => {
      const { grant } = await grantOf(store, 'grt-1', { ttlSeconds: 60 }); // expires at(70)
      const { turnId, callId } = await turnWithCall(store);
      const justBefore = new Date(Date.parse(at(70)) - 1).toISOString();
      expect(
        await store
          .unleasedTurnWriter(turnId)
          .markToolStarted({ toolCallId: callId, grantId: grant.id, now: justBefore }),
      ).toBe(true);
      expect(await store.listGrantUses([grant.id])).toEqual([
        { grantId: grant.id, turnId, toolCallId: callId, startedAt: justBefore },
      ]);
    });

    // The contract, as the store and the runner share it: a refused start writes nothing, so the call stays
    // unjournaled (the loop answers it with toolText.grantLapsed instead and never starts it); the refusal is made
    // per attempt from the grant (the same grant refuses again), and a start without a grant is the caller's call.
    it.for([
      [
        'revoked before the start',
        'grt-1',
        async (s: Store) => void (await s.revokeApprovalGrant('grt-1', ANN, at(15))),
        at(20),
      ],
      ['expired (at exactly expiresAt)', 'grt-1', async () => {}, at(70)],
      ['unknown', 'grt-unknown', async () => {}, at(20)],
    ] as const)(
      'markToolStarted with a grant %s throws GrantLapsedError and journals nothing',
      async ([, grantId, lapse, startAt], { store }) => {
        await grantOf(store, 'grt-1', { ttlSeconds: 60 }); // expires at(70)
        await lapse(store);
        const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
        const call = toolCall('edit_note');
        await store
          .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
          .appendAssistantMessage({ message: assistantMessage(null, [call]), iterations: 1, now: at(14) });
        const before = await stateOf(store, turn.id);
        for (const attempt of [startAt, at(80)]) {
          const error = await rejection(
            store
              .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
              .markToolStarted({ toolCallId: call.id, grantId, now: attempt }),
          );
          expect(error).toBeInstanceOf(GrantLapsedError);
          expect((error as GrantLapsedError).grantId).toBe(grantId);
        }
        expect(await stateOf(store, turn.id)).toEqual(before);
        expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([]);
        expect(await store.listGrantUses([grantId])).toEqual([]);
        // Nothing was journaled: the call itself is not marked, a start without the grant is not refused.
        expect(
          await store
            .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
            .markToolStarted({ toolCallId: call.id, now: at(90) }),
        ).toBe(true);
        expect(await store.listUnfinishedToolCalls(turn.id)).toEqual([call.id]);
        expect(await store.listGrantUses([grantId])).toEqual([]);
      },
    );

    /** An AGENT grant and a call started under it at(21). */
    async function startedUnderGrant(store: Store) {
      const { grant } = await grantOf(store, 'grt-1', { scope: 'AGENT' });
      const { turnId, callId } = await turnWithCall(store);
      expect(
        await store.unleasedTurnWriter(turnId).markToolStarted({ toolCallId: callId, grantId: grant.id, now: at(21) }),
      ).toBe(true);
      return { grant, turnId, callId };
    }

    it('a call started under a grant, then the grant revoked (a crash mid-run): started again reads false, not lapsed', async ({
      store,
    }) => {
      const { grant, turnId, callId } = await startedUnderGrant(store);
      await store.revokeApprovalGrant(grant.id, ANN, at(22));
      // The loop then reports it interrupted (its outcome unknown), never "did not run".
      expect(
        await store.unleasedTurnWriter(turnId).markToolStarted({ toolCallId: callId, grantId: grant.id, now: at(23) }),
      ).toBe(false);
      expect(await store.listUnfinishedToolCalls(turnId)).toEqual([callId]);
      expect(await store.listGrantUses([grant.id])).toHaveLength(1);
    });

    // revokedAt is no earlier than the last use recorded before the revoke committed: another instance's clock may
    // run ahead, or (PostgreSQL) the revoke's UPDATE may have waited for the start's FOR SHARE lock.
    it('revokedAt is never before a use the grant let start, even when the revoke’s clock reads earlier', async ({
      store,
    }) => {
      const { grant } = await startedUnderGrant(store);
      const revoked = await store.revokeApprovalGrant(grant.id, ANN, at(20));
      const [use] = await store.listGrantUses([grant.id]);
      expect(use!.startedAt).toBe(at(21));
      expect(revoked!.revokedAt! >= use!.startedAt).toBe(true);
    });

    it('a paused step keeps the grant that let a call run unasked ({kind: run, grantId}) through pauseTurn, loadTurn and the resume', async ({
      store,
    }) => {
      const { turn } = await runningTurn(store);
      const unasked = toolCall('edit_note', { note: 'n1' });
      const asked = toolCall('delete_note', { note: 'n2' });
      const plain = toolCall('read_graph');
      const step: PendingStep = {
        version: 1,
        calls: [
          { toolCall: unasked, outcome: { kind: 'run', grantId: 'grt-kept' } },
          { toolCall: plain, outcome: { kind: 'run' } },
          { toolCall: asked, outcome: { kind: 'confirm', elicitationId: 'elc-step' } },
        ],
      };
      await store.unleasedTurnWriter(turn.id).appendAssistantMessage({
        message: assistantMessage(null, [unasked, plain, asked]),
        iterations: 1,
        now: at(1),
      });
      const paused = await store.unleasedTurnWriter(turn.id).pauseTurn({
        step: structuredClone(step),
        elicitations: [rememberableDraftFor(asked, 'elc-step')],
        text: 'May I?',
        expiresAt: at(60),
        now: at(1),
      });
      expect(paused.turn.step).toEqual(step);
      expect((await store.loadTurn(turn.id))!.step).toEqual(step);
      const resumed = await answer(store, 'elc-step', ACCEPT, { now: at(2) });
      expect(resumed.ok && resumed.kind === 'resume' && resumed.turn.step).toEqual(step);
    });
  });
}
