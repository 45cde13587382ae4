// Expiry with an injectable clock: an answer after expiresAt runs nothing, and the turn, its elicitations and
// its open calls end as docs/design.md says.
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf } from '../support/harness.js';
import { call, callStep, manualClock, startScenario, textStep, toolTexts, type Scenario } from '../support/scenario.js';

const TTL = 60;
const EXPIRED_TEXT = (name: string) => `Execution of ${name} was not confirmed before the request expired.`;
const PENDING = `query { pendingElicitations { totalCount edges { node { id } } } }`;
const ELICITATION = `query($id: ID!) { elicitation(id: $id) { id status resolvedAt } }`;

let s: Scenario;
let clock: ReturnType<typeof manualClock>;
afterEach(async () => {
  await s?.close();
});

async function paused(script = [callStep(call('edit_note', { id: 'n1' })), textStep('Edited.')]) {
  clock = manualClock();
  s = await startScenario({
    tools: [{ name: 'edit_note' }, { name: 'archive_note' }],
    script,
    agent: { pauseTtlSeconds: TTL },
    clock: clock.now,
  });
  const { turn, thread } = await s.start('edit n1');
  expect(turn.status).toBe('PAUSED');
  return { turn, thread };
}

describe('expiry', () => {
  it('the turn and its elicitations carry expiresAt = pause + pauseTtlSeconds', async () => {
    const { turn } = await paused();
    const expected = new Date(clock.now().getTime() + TTL * 1000).toISOString();
    expect(turn.expiresAt).toBe(expected);
    expect(turn.pendingElicitations[0].expiresAt).toBe(expected);
  });

  it('an answer just before expiresAt still runs the tool', async () => {
    const { turn, thread } = await paused();
    clock.advance(TTL - 1);
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(s.tools.count('edit_note')).toBe(1);
    await s.expectConsistent(thread.id);
  });

  it('an answer after expiresAt gets EXPIRED: nothing runs, the turn and elicitation are EXPIRED, the call says so', async () => {
    const { turn, thread } = await paused();
    const id = turn.pendingElicitations[0].id;
    clock.advance(TTL + 1);

    // Before anyone answers, the expired request is no longer pending (never fail open), nor asked in the turn's text.
    expect(dataOf(await s.h.gql(PENDING)).pendingElicitations).toEqual({ totalCount: 0, edges: [] });
    expect(await s.turn(turn.id)).toMatchObject({ status: 'EXPIRED', text: null });
    expect(dataOf(await s.h.gql(ELICITATION, { id })).elicitation.status).toBe('EXPIRED');

    for (const action of ['ACCEPT', 'ACCEPT', 'DECLINE'] as const) {
      const resolved = await s.resolve(id, action);
      expect(resolved.elicitation).toBeNull();
      expect(resolved.userErrors).toEqual([
        expect.objectContaining({ code: 'EXPIRED', field: ['input', 'elicitationId'] }),
      ]);
    }
    expect(s.tools.count('edit_note')).toBe(0);
    expect(s.model.requests).toHaveLength(1);

    const after = await s.turn(turn.id);
    expect(after.status).toBe('EXPIRED');
    expect(after.text).toBeNull();
    expect(after.expiresAt).toBeNull();
    expect(after.pendingElicitations).toEqual([]);
    expect(after.elicitations.map((e: any) => e.status)).toEqual(['EXPIRED']);
    expect(toolTexts(after.messages)).toEqual([EXPIRED_TEXT('edit_note')]);
    expect(dataOf(await s.h.gql(PENDING)).pendingElicitations.totalCount).toBe(0);
    await s.expectConsistent(thread.id);
  });

  it('a step with two calls: an early ACCEPT does not save it; both calls end with the expiry text, a DECLINE keeps its own', async () => {
    const { turn, thread } = await paused([
      callStep(
        call('edit_note', { id: 'n1' }, 'c1'),
        call('archive_note', { id: 'n1' }, 'c2'),
        call('edit_note', { id: 'n2' }, 'c3'),
      ),
      textStep('never'),
    ]);
    const [a, b, c] = turn.pendingElicitations;
    clock.advance(10);
    expect((await s.resolve(a.id, 'ACCEPT')).turn.status).toBe('PAUSED');
    expect((await s.resolve(b.id, 'DECLINE')).turn.status).toBe('PAUSED');
    clock.advance(TTL);
    expect((await s.resolve(c.id, 'ACCEPT')).userErrors[0].code).toBe('EXPIRED');
    const after = await s.turn(turn.id);
    expect(after.status).toBe('EXPIRED');
    expect(after.elicitations.map((e: any) => e.status)).toEqual(['ACCEPTED', 'DECLINED', 'EXPIRED']);
    expect(toolTexts(after.messages)).toEqual([
      EXPIRED_TEXT('edit_note'),
      'User declined execution of archive_note.',
      EXPIRED_TEXT('edit_note'),
    ]);
    expect(s.tools.count('edit_note') + s.tools.count('archive_note')).toBe(0);
    await s.expectConsistent(thread.id);
  });

  it('a new message on a thread whose paused turn expired marks it EXPIRED (not superseded) and goes on', async () => {
    const { turn, thread } = await paused([callStep(call('edit_note', { id: 'n1' })), textStep('Fine.')]);
    clock.advance(TTL + 1);
    const next = await s.start('forget it', thread.id);
    expect(next.userErrors).toEqual([]);
    expect(next.turn.status).toBe('COMPLETED');
    const old = await s.turn(turn.id);
    expect(old.status).toBe('EXPIRED');
    expect(old.elicitations.map((e: any) => e.status)).toEqual(['EXPIRED']);
    expect(toolTexts(old.messages)).toEqual([EXPIRED_TEXT('edit_note')]);
    await s.expectConsistent(thread.id);
  });

  it('the sweep expires a paused turn without any answer', async () => {
    const { turn, thread } = await paused();
    clock.advance(TTL + 1);
    await s.h.server.services.runner.expireDue();
    const after = await s.turn(turn.id);
    expect(after.status).toBe('EXPIRED');
    expect(toolTexts(after.messages)).toEqual([EXPIRED_TEXT('edit_note')]);
    expect((await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT')).userErrors[0].code).toBe('EXPIRED');
    expect(s.tools.count('edit_note')).toBe(0);
    await s.expectConsistent(thread.id);
  });
});
