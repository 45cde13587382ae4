// Answers (resolveElicitation): which answer resumes the turn and under whose lease, duplicates and conflicting
// answers, a CANCEL closing the turn, and answers at or after the pause's expiry.
import { describe, expect } from 'vitest';
import { toolText } from '../../../src/domain/gate/messages.js';
import type { ElicitationAnswer } from '../../../src/domain/records.js';
import {
  at,
  ANN,
  BOB,
  ACCEPT,
  DECLINE,
  CANCEL,
  lease,
  outcome,
  pausedTurn,
  answer,
  toolAnswers,
  closing,
  stateOf,
  ids,
  statusesOf,
} from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerAnswersSpec({ it }: StoreSpec): void {
  describe('answers (resolveElicitation)', () => {
    it('ACCEPT of the only elicitation resumes: the turn RUNNING with the step, held by the given lease', async ({
      store,
    }) => {
      const paused = await pausedTurn(store, { lease: lease('host:1:old') });
      const content = { instructions: 'only the title' };
      const result = await answer(
        store,
        paused.elicitations[0]!.id,
        { action: 'ACCEPT', content },
        {
          now: at(10),
          lease: lease('host:2:new', at(40)),
        },
      );
      expect(result).toEqual({
        ok: true,
        kind: 'resume',
        elicitation: {
          ...paused.elicitations[0],
          status: 'ACCEPTED',
          response: { action: 'ACCEPT', content },
          resolvedBy: ANN,
          resolvedAt: at(10),
        },
        turn: { ...paused.turn, status: 'RUNNING', text: null, expiresAt: null, updatedAt: at(10) },
        elicitations: [expect.objectContaining({ id: paused.elicitations[0]!.id, status: 'ACCEPTED' })],
      });
      if (!result.ok || result.kind !== 'resume') return;
      expect(result.elicitations).toEqual([result.elicitation]);
      expect(await store.loadTurn(paused.turn.id)).toEqual(result.turn);
      expect(await store.getElicitation(result.elicitation.id, ANN)).toEqual(result.elicitation);
      expect(await store.holdsLease(paused.turn.id, 'host:2:new')).toBe(true);
      expect(await store.holdsLease(paused.turn.id, 'host:1:old')).toBe(false);
      expect(await store.listRunningLeases()).toEqual([
        { turnId: paused.turn.id, owner: 'host:2:new', expiresAt: at(40), recoveries: 0 },
      ]);
      expect(ids(await store.listRunningTurns())).toEqual([paused.turn.id]);
    });

    it('DECLINE of the last elicitation resumes too (the step runs and answers it with the decline)', async ({
      store,
    }) => {
      const paused = await pausedTurn(store);
      const result = await answer(store, paused.elicitations[0]!.id, DECLINE);
      expect(outcome(result)).toBe('resume');
      expect(result.ok && result.kind === 'resume' && result.elicitation.status).toBe('DECLINED');
      expect(await toolAnswers(store, paused.turn.id)).toEqual([]);
    });

    it('with two elicitations: the first answer is recorded (turn still PAUSED), the second resumes', async ({
      store,
    }) => {
      const paused = await pausedTurn(store, { elicitations: 2 });
      const [first, second] = paused.elicitations;
      const recorded = await answer(store, first!.id, DECLINE, { now: at(10) });
      expect(outcome(recorded)).toBe('recorded');
      if (!recorded.ok || recorded.kind !== 'recorded') return;
      expect(recorded.elicitation).toMatchObject({ id: first!.id, status: 'DECLINED', response: DECLINE });
      const stillPaused = { ...paused.turn, updatedAt: expect.any(String) };
      expect(recorded.turn).toEqual(stillPaused);
      expect(await store.loadTurn(paused.turn.id)).toEqual(stillPaused);

      const resumed = await answer(store, second!.id, ACCEPT, { now: at(11), lease: lease('host:1:a') });
      expect(outcome(resumed)).toBe('resume');
      expect(resumed.ok && resumed.kind === 'resume' && resumed.turn).toMatchObject({
        status: 'RUNNING',
        updatedAt: at(11),
      });
      expect(await statusesOf(store, paused.turn.id)).toEqual([
        [first!.id, 'DECLINED'],
        [second!.id, 'ACCEPTED'],
      ]);
      expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(true);
    });

    it('the same answer again is a duplicate (content compared as JSON) and changes nothing, not even the lease', async ({
      store,
    }) => {
      const paused = await pausedTurn(store);
      const id = paused.elicitations[0]!.id;
      const given = { action: 'ACCEPT', content: { instructions: 'carefully', extra: { a: 1, b: [1, 2] } } } as const;
      const first = await answer(store, id, given, { now: at(10), lease: lease('host:1:a') });
      expect(outcome(first)).toBe('resume');
      const state = await stateOf(store, paused.turn.id);
      const again = await answer(
        store,
        id,
        { action: 'ACCEPT', content: { extra: { b: [1, 2], a: 1 }, instructions: 'carefully' } },
        { now: at(20), lease: lease('host:2:b') },
      );
      expect(outcome(again)).toBe('duplicate');
      expect(again.ok && again.kind === 'duplicate' && again.elicitation).toEqual(
        first.ok && first.kind === 'resume' && first.elicitation,
      );
      expect(again.ok && again.kind === 'duplicate' && again.turn.status).toBe('RUNNING');
      expect(await stateOf(store, paused.turn.id)).toEqual(state);
      expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(true);
    });

    it('a different answer after the first is already_resolved: the first answer stands', async ({ store }) => {
      const paused = await pausedTurn(store, { elicitations: 2 });
      const id = paused.elicitations[0]!.id;
      await answer(store, id, { action: 'ACCEPT', content: { instructions: 'x' } });
      const state = await stateOf(store, paused.turn.id);
      for (const different of [
        DECLINE,
        CANCEL,
        ACCEPT,
        { action: 'ACCEPT', content: { instructions: 'y' } },
      ] satisfies ElicitationAnswer[]) {
        const result = await answer(store, id, different, { now: at(20) });
        expect(result).toEqual({ ok: false, code: 'ALREADY_RESOLVED', status: 'ACCEPTED' });
        expect((await store.getElicitation(id, ANN))!.response).toEqual({
          action: 'ACCEPT',
          content: { instructions: 'x' },
        });
      }
      expect(await stateOf(store, paused.turn.id)).toEqual(state);
    });

    it('CANCEL cancels the turn: its other elicitations closed, answers given kept, one TOOL message per call', async ({
      store,
    }) => {
      const paused = await pausedTurn(store, { elicitations: 3, mixed: true });
      const [e1, e2, e3] = paused.elicitations;
      const declined: ElicitationAnswer = { action: 'DECLINE', content: { instructions: 'not that one' } };
      expect(outcome(await answer(store, e1!.id, declined, { now: at(10) }))).toBe('recorded');
      const result = await answer(store, e2!.id, CANCEL, { now: at(11) });
      expect(outcome(result)).toBe('cancelled');
      if (!result.ok || result.kind !== 'cancelled') return;
      expect(result.turn).toMatchObject({ id: paused.turn.id, status: 'CANCELLED', step: null, updatedAt: at(11) });
      expect(result.elicitation).toMatchObject({
        id: e2!.id,
        status: 'CANCELLED',
        response: CANCEL,
        resolvedBy: ANN,
      });
      expect(await store.loadTurn(paused.turn.id)).toEqual(result.turn);
      expect(await statusesOf(store, paused.turn.id)).toEqual([
        [e1!.id, 'DECLINED'],
        [e2!.id, 'CANCELLED'],
        [e3!.id, 'CANCELLED'],
      ]);
      const expected = closing(paused.step, 'cancelled', { [e1!.id]: declined, [e2!.id]: CANCEL });
      expect(await toolAnswers(store, paused.turn.id)).toEqual(expected);
      expect(expected.map(([, text]) => text)).toEqual([
        toolText.cancelledByUser('lookup'),
        toolText.denied('wipe', 'policy says no'),
        toolText.declined('edit_1', 'not that one'),
        toolText.cancelledByUser('edit_2'),
        toolText.cancelledByUser('edit_3'),
      ]);
      expect(await store.listRunningTurns()).toEqual([]);

      expect(outcome(await answer(store, e2!.id, CANCEL, { now: at(12) }))).toBe('duplicate');
      expect(outcome(await answer(store, e3!.id, ACCEPT, { now: at(12) }))).toBe('ALREADY_RESOLVED');
      expect(await toolAnswers(store, paused.turn.id)).toHaveLength(5);
    });

    it('an answer at or after expiresAt is expired: it expires the turn once (changed), then reports it (unchanged)', async ({
      store,
    }) => {
      const paused = await pausedTurn(store, { elicitations: 2, expiresAt: at(60) });
      const [e1, e2] = paused.elicitations;
      const first = await answer(store, e1!.id, ACCEPT, { now: at(60), lease: lease('host:1:a') });
      expect(first).toMatchObject({
        ok: false,
        code: 'EXPIRED',
        expiresAt: at(60),
        closed: { id: paused.turn.id, status: 'EXPIRED', step: null },
      });
      expect(await store.getElicitation(e1!.id, ANN)).toMatchObject({ id: e1!.id, status: 'EXPIRED', response: null });
      expect(await statusesOf(store, paused.turn.id)).toEqual([
        [e1!.id, 'EXPIRED'],
        [e2!.id, 'EXPIRED'],
      ]);
      expect(await toolAnswers(store, paused.turn.id)).toEqual(closing(paused.step, 'expired'));
      expect(await store.holdsLease(paused.turn.id, 'host:1:a')).toBe(false);

      const state = await stateOf(store, paused.turn.id);
      const later = await answer(store, e2!.id, DECLINE, { now: at(61) });
      expect(later).toEqual({ ok: false, code: 'EXPIRED', expiresAt: at(60), closed: null });
      expect(await store.loadTurn(paused.turn.id)).toMatchObject({ status: 'EXPIRED' });
      const again = await answer(store, e1!.id, ACCEPT, { now: at(62) });
      expect(again).toEqual({ ok: false, code: 'EXPIRED', expiresAt: at(60), closed: null });
      expect(await stateOf(store, paused.turn.id)).toEqual(state);
    });

    it('an answer just before expiresAt counts', async ({ store }) => {
      const paused = await pausedTurn(store, { expiresAt: at(60) });
      const result = await answer(store, paused.elicitations[0]!.id, ACCEPT, {
        now: new Date(Date.parse(at(60)) - 1).toISOString(),
      });
      expect(outcome(result)).toBe('resume');
    });

    it("another owner's answer and an unknown id are not_found, and change nothing", async ({ store }) => {
      const paused = await pausedTurn(store);
      const state = await stateOf(store, paused.turn.id);
      const notFound = { ok: false, code: 'NOT_FOUND', of: 'elicitation' };
      expect(await answer(store, paused.elicitations[0]!.id, ACCEPT, { ownerId: BOB })).toEqual(notFound);
      expect(await answer(store, paused.elicitations[0]!.id, CANCEL, { ownerId: BOB })).toEqual(notFound);
      expect(await answer(store, 'elc-unknown', ACCEPT)).toEqual(notFound);
      expect(await stateOf(store, paused.turn.id)).toEqual(state);
    });
  });
}
