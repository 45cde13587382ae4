// Approvers (docs/approvers.md): an agent's policies round-trip through syncAgent (the config owns them, so a sync
// writes them even after updateAgent took the gating over), a request keeps the policy it was paused with, and its
// approvers' answers are counted in the answer's transaction until they decide it, exactly once, also when they
// answer at the same instant from several stores.
import { describe, expect } from 'vitest';
import { approversKey } from '../../../src/domain/approvers.js';
import type { Agent, ElicitationApproval } from '../../../src/domain/records.js';
import {
  ACCEPT,
  acceptRemembering,
  agentConfig,
  answer,
  approverAnswer,
  at,
  ANN,
  BOB,
  CANCEL,
  DECLINE,
  lease,
  outcome,
  pausedTurn,
  rememberablePause,
  statusesOf,
  AGENT,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

const REVIEWERS: ElicitationApproval = {
  roles: ['reviewer'],
  required: 2,
  requester: 'EXCLUDED',
  escalation: { roles: ['oncall'], at: at(900) },
};
const TWO_REVIEWERS: ElicitationApproval = { roles: ['reviewer'], required: 2, requester: 'ALSO', escalation: null };

export function registerApproversSpec({ it, itEmpty }: StoreSpec): void {
  describe('approvers: policies and requests', () => {
    itEmpty(
      "syncAgent keeps the agent's, a tool's and a rule's approvers, and reads them back as configured",
      async ({ store }) => {
        const config = agentConfig('notes', {
          approvers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED', escalate: null },
          toolApprovers: {
            'notes:delete': {
              roles: ['admin'],
              required: 1,
              requester: 'ALSO',
              escalate: { afterSeconds: 60, roles: ['oncall'] },
            },
            'notes:read': 'REQUESTER',
          },
          toolConfirmation: { 'notes:write': 'BY_ANNOTATION' },
          toolRules: {
            'notes:write': [
              {
                match: { required: ['path'] },
                mode: 'ALWAYS',
                approvers: { roles: ['security'], required: 1, requester: 'ALSO', escalate: null },
              },
            ],
          },
        });
        expect(await store.syncAgent(config, at(0))).toEqual(config);
        expect(await store.getAgent('notes')).toEqual(config);
        expect((await store.listAgents()).find((a) => a.id === 'notes')).toEqual(config);
      },
    );

    itEmpty('an agent without approvers reads REQUESTER everywhere', async ({ store }) => {
      await store.syncAgent(agentConfig('plain'), at(0));
      expect(await store.getAgent('plain')).toMatchObject({ approvers: 'REQUESTER', toolApprovers: {} });
    });

    itEmpty(
      "a later sync writes the config's approvers, also after updateAgentGating took the gating over",
      async ({ store }) => {
        await store.syncAgent(agentConfig('notes'), at(0));
        await store.updateAgentGating('notes', { pauseTtlSeconds: 90 }, at(1));
        const policy: Agent['approvers'] = { roles: ['reviewer'], required: 1, requester: 'ALSO', escalate: null };
        const synced = await store.syncAgent(
          agentConfig('notes', {
            approvers: policy,
            toolApprovers: { 'notes:read': 'REQUESTER' },
            pauseTtlSeconds: 3600,
          }),
          at(2),
        );
        expect(synced).toMatchObject({
          pauseTtlSeconds: 90,
          approvers: policy,
          toolApprovers: { 'notes:read': 'REQUESTER' },
        });
        const cleared = await store.syncAgent(agentConfig('notes'), at(3));
        expect(cleared).toMatchObject({ pauseTtlSeconds: 90, approvers: 'REQUESTER', toolApprovers: {} });
      },
    );

    describe('a request paused under a policy', () => {
      it('keeps its policy: pauseTurn returns it, every read of the request gives it back', async ({ store }) => {
        const paused = await pausedTurn(store, { elicitations: 2, approval: REVIEWERS });
        expect(paused.elicitations.map((e) => e.approval)).toEqual([REVIEWERS, REVIEWERS]);
        const [first] = paused.elicitations;
        expect(await store.getElicitation(first!.id, ANN)).toEqual(first);
        expect(await store.listTurnElicitations(paused.turn.id)).toEqual(paused.elicitations);
        const pending = await store.listPendingElicitations(ANN, {}, at(1), 10, null);
        expect(pending.items).toEqual(paused.elicitations);
      });

      it('a request paused without one reads null: the requester alone answers', async ({ store }) => {
        const paused = await pausedTurn(store);
        expect(paused.elicitations[0]!.approval).toBeNull();
        expect((await store.getElicitation(paused.elicitations[0]!.id, ANN))!.approval).toBeNull();
      });

      it('loadElicitation reads any request whoever owns it (the answer use case authorizes); null when unknown', async ({
        store,
      }) => {
        const paused = await pausedTurn(store, { approval: REVIEWERS });
        expect(await store.loadElicitation(paused.elicitations[0]!.id)).toEqual(paused.elicitations[0]);
        expect(await store.getElicitation(paused.elicitations[0]!.id, BOB)).toBeNull();
        expect(await store.loadElicitation('elc-unknown')).toBeNull();
      });
    });

    describe('answers under a quorum', () => {
      it('counts each approver once; the one who completes the quorum resolves it and resumes the turn', async ({
        store,
      }) => {
        const paused = await pausedTurn(store, { approval: TWO_REVIEWERS });
        const id = paused.elicitations[0]!.id;
        const first = await approverAnswer(store, id, 'rita', ACCEPT, { now: at(10) });
        expect(first).toEqual({ ok: true, kind: 'counted', elicitation: paused.elicitations[0], turn: paused.turn });
        expect(await statusesOf(store, paused.turn.id)).toEqual([[id, 'PENDING']]);
        const second = await approverAnswer(
          store,
          id,
          'sam',
          { action: 'ACCEPT', content: { instructions: 'ok' } },
          {
            now: at(11),
            lease: lease('host:1:a'),
          },
        );
        expect(outcome(second)).toBe('resume');
        expect(second.ok && second.kind === 'resume' && second.elicitation).toMatchObject({
          status: 'ACCEPTED',
          response: { action: 'ACCEPT', content: { instructions: 'ok' } },
          resolvedBy: 'sam',
          resolvedAt: at(11),
        });
        expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(true);
        expect(await store.listApproverAnswers([id])).toEqual([
          expect.objectContaining({ approverId: 'rita', position: 1, action: 'ACCEPT', createdAt: at(10) }),
          expect.objectContaining({
            approverId: 'sam',
            position: 2,
            content: { instructions: 'ok' },
            createdAt: at(11),
          }),
        ]);
      });

      it("the requester's own answer goes through the quorum too, scoped to them", async ({ store }) => {
        const paused = await pausedTurn(store, { approval: TWO_REVIEWERS });
        const id = paused.elicitations[0]!.id;
        expect(outcome(await answer(store, id, ACCEPT))).toBe('counted');
        expect(outcome(await approverAnswer(store, id, 'rita', ACCEPT))).toBe('resume');
        expect((await store.listApproverAnswers([id])).map((a) => a.approverId)).toEqual([ANN, 'rita']);
        // Scoped: another owner does not find it that way.
        expect(outcome(await answer(store, id, ACCEPT, { ownerId: BOB }))).toBe('NOT_FOUND');
      });

      it('an approver answering again: the same answer is a duplicate, another one already_resolved; nothing changes', async ({
        store,
      }) => {
        const paused = await pausedTurn(store, { approval: TWO_REVIEWERS });
        const id = paused.elicitations[0]!.id;
        await approverAnswer(store, id, 'rita', ACCEPT, { now: at(10) });
        expect(outcome(await approverAnswer(store, id, 'rita', ACCEPT, { now: at(12) }))).toBe('duplicate');
        expect(outcome(await approverAnswer(store, id, 'rita', DECLINE, { now: at(12) }))).toBe('ALREADY_RESOLVED');
        expect(await store.listApproverAnswers([id])).toEqual([
          expect.objectContaining({ approverId: 'rita', action: 'ACCEPT', createdAt: at(10) }),
        ]);
        // Decided: the deciding approver gets the result again; a latecomer is already_resolved.
        await approverAnswer(store, id, 'sam', ACCEPT, { now: at(13) });
        expect(outcome(await approverAnswer(store, id, 'sam', ACCEPT, { now: at(14) }))).toBe('duplicate');
        expect(outcome(await approverAnswer(store, id, 'tom', ACCEPT, { now: at(14) }))).toBe('ALREADY_RESOLVED');
      });

      it('an edit restarts the count: the outdated approver answers anew, the edited arguments run', async ({
        store,
      }) => {
        const paused = await pausedTurn(store, { approval: TWO_REVIEWERS });
        const id = paused.elicitations[0]!.id;
        await approverAnswer(store, id, 'rita', ACCEPT, { now: at(10) });
        const edit = { action: 'ACCEPT' as const, content: null, arguments: { note: 'n9', tags: ['a'] } };
        expect(outcome(await approverAnswer(store, id, 'sam', edit, { now: at(11) }))).toBe('counted');
        const anew = { ...edit, arguments: { tags: ['a'], note: 'n9' } };
        const decided = await approverAnswer(store, id, 'rita', anew, { now: at(12) });
        expect(outcome(decided)).toBe('resume');
        expect(decided.ok && decided.kind === 'resume' && decided.elicitation).toMatchObject({
          status: 'ACCEPTED',
          response: { action: 'ACCEPT', content: null, arguments: { note: 'n9', tags: ['a'] } },
          resolvedBy: 'rita',
        });
        expect((await store.listApproverAnswers([id])).map((a) => [a.approverId, a.position])).toEqual([
          ['sam', 2],
          ['rita', 3],
        ]);
      });

      it('a DECLINE decides at once; a CANCEL closes the turn', async ({ store }) => {
        const declined = await pausedTurn(store, { approval: TWO_REVIEWERS });
        const result = await approverAnswer(store, declined.elicitations[0]!.id, 'rita', {
          action: 'DECLINE',
          content: { instructions: 'no' },
        });
        expect(result.ok && result.kind === 'resume' && result.elicitation).toMatchObject({
          status: 'DECLINED',
          resolvedBy: 'rita',
        });
        const cancelled = await pausedTurn(store, { approval: TWO_REVIEWERS });
        await approverAnswer(store, cancelled.elicitations[0]!.id, 'rita', ACCEPT);
        const cancel = await answer(store, cancelled.elicitations[0]!.id, CANCEL);
        expect(outcome(cancel)).toBe('cancelled');
        expect(cancel.ok && cancel.kind === 'cancelled' && cancel.turn.status).toBe('CANCELLED');
      });

      it('remembers only when every counted ACCEPT asked to, for the requester, bound to the policy', async ({
        store,
      }) => {
        const paused = await rememberablePause(store, { approval: TWO_REVIEWERS });
        const id = paused.elicitations[0]!.id;
        await approverAnswer(store, id, 'rita', acceptRemembering('AGENT', 600), { grantId: 'grt-a' });
        const done = await approverAnswer(store, id, 'sam', acceptRemembering('THREAD', 3600), { grantId: 'grt-b' });
        expect(done.ok && done.kind === 'resume' && done.elicitation.grantId).toBe('grt-b');
        expect(await store.getApprovalGrant('grt-b', ANN)).toMatchObject({
          ownerId: ANN,
          agentId: AGENT,
          scope: 'THREAD',
          threadId: paused.thread.id,
          expiresAt: at(610),
          approvers: approversKey(TWO_REVIEWERS),
        });
        expect(await store.getApprovalGrant('grt-a', ANN)).toBeNull();

        const forgetful = await rememberablePause(store, { approval: TWO_REVIEWERS });
        const other = forgetful.elicitations[0]!.id;
        await approverAnswer(store, other, 'rita', ACCEPT);
        const plain = await approverAnswer(store, other, 'sam', acceptRemembering('AGENT', 60), { grantId: 'grt-c' });
        expect(plain.ok && plain.kind === 'resume' && plain.elicitation.grantId).toBeNull();
        expect(await store.getApprovalGrant('grt-c', ANN)).toBeNull();
      });

      it('is never reached unscoped without a policy, nor after its expiry', async ({ store }) => {
        const plain = await pausedTurn(store);
        expect(outcome(await approverAnswer(store, plain.elicitations[0]!.id, 'rita', ACCEPT))).toBe('NOT_FOUND');
        const late = await pausedTurn(store, { approval: TWO_REVIEWERS, expiresAt: at(60) });
        const result = await approverAnswer(store, late.elicitations[0]!.id, 'rita', ACCEPT, { now: at(60) });
        expect(result).toMatchObject({ ok: false, code: 'EXPIRED', closed: { status: 'EXPIRED' } });
        expect(await store.listApproverAnswers([late.elicitations[0]!.id])).toEqual([]);
      });

      it("listElicitationsToAnswer: offered by role (an escalation role from its time), not the viewer's own, not answered", async ({
        store,
      }) => {
        const reviewed = await pausedTurn(store, { approval: REVIEWERS, now: at(0) }); // reviewer now, oncall at(900)
        const mine = await pausedTurn(store, { approval: REVIEWERS, ownerId: BOB, now: at(1) });
        await pausedTurn(store, { now: at(2) }); // no policy
        const id = reviewed.elicitations[0]!.id;
        const list = async (viewer: string, roles: string[], now = at(10)) =>
          (await store.listElicitationsToAnswer(viewer, roles, {}, now, 10, null)).items.map((e) => e.id);
        expect(await list(BOB, ['reviewer'])).toEqual([id]); // not his own request
        expect(await list('rita', ['reviewer', 'ops'])).toEqual([id, mine.elicitations[0]!.id]);
        expect(await list('ollie', ['oncall'])).toEqual([]);
        expect(await list('ollie', ['oncall'], at(900))).toEqual([id, mine.elicitations[0]!.id]);
        expect(await list('mallory', ['ops'])).toEqual([]);
        expect(await list('rita', ['reviewer'], at(3600))).toEqual([]); // expired
        const page = await store.listElicitationsToAnswer('rita', ['reviewer'], { agentId: AGENT }, at(10), 1, null);
        expect(page).toMatchObject({ totalCount: 2, hasNextPage: true });

        // Answered: gone from the approver's list, still on the others'.
        await approverAnswer(store, id, 'rita', ACCEPT, { now: at(11) });
        expect(await list('rita', ['reviewer'], at(12))).toEqual([mine.elicitations[0]!.id]);
        expect(await list(BOB, ['reviewer'], at(12))).toEqual([id]);
        // An edit outdates rita's ACCEPT: the request is hers to answer again.
        await approverAnswer(
          store,
          id,
          BOB,
          { action: 'ACCEPT', content: null, arguments: { note: 'x' } },
          { now: at(13) },
        );
        expect(await list('rita', ['reviewer'], at(14))).toEqual([id, mine.elicitations[0]!.id]);
        expect(await list(BOB, ['reviewer'], at(14))).toEqual([]);
      });

      it('a request no longer waiting is offered to no one: decided, cancelled with its turn, or expired', async ({
        store,
      }) => {
        const decided = await pausedTurn(store, { approval: { ...TWO_REVIEWERS, required: 1 } });
        const cancelled = await pausedTurn(store, { approval: TWO_REVIEWERS });
        const expiring = await pausedTurn(store, { approval: TWO_REVIEWERS, expiresAt: at(100) });
        const list = async (now: string) =>
          (await store.listElicitationsToAnswer('rita', ['reviewer'], {}, now, 10, null)).items.map((e) => e.id);
        expect(await list(at(10))).toHaveLength(3);
        await approverAnswer(store, decided.elicitations[0]!.id, 'sam', ACCEPT);
        await answer(store, cancelled.elicitations[0]!.id, CANCEL);
        expect(await list(at(10))).toEqual([expiring.elicitations[0]!.id]);
        expect(await store.expireDueTurns(at(100), 10)).toHaveLength(1);
        expect(await list(at(10))).toEqual([]);
      });

      it('N approvers accepting at the same instant from two stores: exactly the quorum, one resume', async ({
        store,
        second,
      }) => {
        const other = await second();
        const paused = await pausedTurn(store, { approval: { ...TWO_REVIEWERS, required: 3 } });
        const id = paused.elicitations[0]!.id;
        const approvers = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
        const results = await Promise.all(
          approvers.map((who, i) =>
            approverAnswer(i % 2 ? other : store, id, who, ACCEPT, { now: at(10), lease: lease(`host:${who}`) }),
          ),
        );
        const kinds = results.map(outcome);
        expect(kinds.filter((k) => k === 'resume')).toHaveLength(1);
        expect(kinds.filter((k) => k === 'counted')).toHaveLength(2);
        expect(kinds.filter((k) => k === 'ALREADY_RESOLVED')).toHaveLength(3);
        const answers = await store.listApproverAnswers([id]);
        expect(answers.map((a) => a.position)).toEqual([1, 2, 3]);
        const winner = approvers[kinds.indexOf('resume')]!;
        expect(answers.at(-1)!.approverId).toBe(winner);
        expect(await store.getElicitation(id, ANN)).toMatchObject({ status: 'ACCEPTED', resolvedBy: winner });
        expect(await store.listRunningLeases()).toEqual([
          expect.objectContaining({ turnId: paused.turn.id, owner: `host:${winner}` }),
        ]);
      });
    });
  });
}
