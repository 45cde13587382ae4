// Answers are idempotent by elicitation id: the same answer returns the recorded result, a different one gets
// ALREADY_RESOLVED, and concurrent answers over HTTP run the tool at most once.
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE } from '../support/harness.js';
import type { ScriptStep } from '../../src/models/scripted.js';
import type { CountingTool } from '../support/tools.js';
import { call, callStep, startScenario, textStep, toolTexts, type Scenario } from '../support/scenario.js';

const slowly = (ms: number) => async (args: Record<string, unknown>) => {
  await new Promise((r) => setTimeout(r, ms));
  return `edited ${String(args.id)}`;
};

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

async function paused(
  tools: CountingTool[] = [{ name: 'edit_note' }],
  script: ScriptStep[] = [callStep(call('edit_note', { id: 'n1' })), textStep('Edited.')],
) {
  s = await startScenario({ tools, script });
  const { turn, thread } = await s.start('edit n1');
  expect(turn.status).toBe('PAUSED');
  return { turn, thread };
}

describe('the same answer twice', () => {
  it.each([
    ['ACCEPT', undefined],
    ['ACCEPT', { instructions: 'be brief' }],
    ['DECLINE', { instructions: 'no' }],
    ['CANCEL', undefined],
  ] as const)('%s %j: returns the recorded result and does nothing twice', async (action, content) => {
    const { turn, thread } = await paused();
    const first = await s.resolve(turn.pendingElicitations[0].id, action, content);
    expect(first.userErrors).toEqual([]);
    const requestsAfterFirst = s.model.requests.length;
    const messagesAfterFirst = (await s.thread(thread.id)).messages.length;

    const second = await s.resolve(turn.pendingElicitations[0].id, action, content);
    expect(second.userErrors).toEqual([]);
    expect(second.elicitation).toEqual(first.elicitation);
    expect(second.turn.status).toBe(first.turn.status);
    expect(second.turn.text).toBe(first.turn.text);
    expect(second.turn.messages).toEqual(first.turn.messages);
    expect(s.tools.count('edit_note')).toBe(action === 'ACCEPT' ? 1 : 0);
    expect(s.model.requests.length).toBe(requestsAfterFirst);
    expect((await s.thread(thread.id)).messages.length).toBe(messagesAfterFirst);
    await s.expectConsistent(thread.id);
  });
});

describe('a different answer after the first', () => {
  it.each([
    ['ACCEPT', undefined, 'DECLINE', undefined],
    ['DECLINE', undefined, 'ACCEPT', undefined],
    ['ACCEPT', undefined, 'CANCEL', undefined],
    ['ACCEPT', { instructions: 'a' }, 'ACCEPT', { instructions: 'b' }],
    ['DECLINE', undefined, 'DECLINE', { instructions: 'now with a reason' }],
  ] as const)(
    '%s %j then %s %j: ALREADY_RESOLVED, nothing changes',
    async (action, content, otherAction, otherContent) => {
      const { turn, thread } = await paused();
      const id = turn.pendingElicitations[0].id;
      const first = await s.resolve(id, action, content);
      const before = await s.thread(thread.id);
      const second = await s.resolve(id, otherAction, otherContent);
      expect(second.elicitation).toBeNull();
      expect(second.turn).toBeNull();
      expect(second.userErrors).toEqual([
        expect.objectContaining({ code: 'ALREADY_RESOLVED', field: ['input', 'elicitationId'] }),
      ]);
      expect(await s.thread(thread.id)).toEqual(before);
      const stored = dataOf(
        await s.h.gql(`query($id: ID!) { elicitation(id: $id) { status response { action content } } }`, { id }),
      ).elicitation;
      expect(stored.response).toEqual(first.elicitation.response);
      expect(s.tools.count('edit_note')).toBe(action === 'ACCEPT' ? 1 : 0);
    },
  );
});

describe('concurrent answers over HTTP', () => {
  const N = 20;
  const answerAll = (id: string, actions: string[]) =>
    Promise.all(
      actions.map((action) =>
        s.h.gql(RESOLVE, { input: { elicitationId: id, action } }).then((r) => dataOf(r).resolveElicitation),
      ),
    );

  it(`${N} identical ACCEPTs: the tool runs once and every answer reports the same recorded result`, async () => {
    const { turn, thread } = await paused([{ name: 'edit_note', run: slowly(30) }]);
    const results = await answerAll(turn.pendingElicitations[0].id, Array(N).fill('ACCEPT'));
    expect(s.tools.count('edit_note')).toBe(1);
    for (const result of results) {
      expect(result.userErrors).toEqual([]);
      expect(result.elicitation.status).toBe('ACCEPTED');
      expect(result.elicitation.response).toEqual({ action: 'ACCEPT', content: null });
      // Answers that arrive while the first is still running may see it RUNNING; none sees anything else.
      expect(['RUNNING', 'COMPLETED']).toContain(result.turn.status);
      if (result.turn.status === 'COMPLETED') expect(result.turn.text).toBe('Edited.');
    }
    expect(results.filter((r) => r.turn.status === 'COMPLETED').length).toBeGreaterThan(0);
    const final = await s.turn(turn.id);
    expect(final.status).toBe('COMPLETED');
    expect(toolTexts(final.messages)).toEqual(['edited n1']);
    expect(s.model.requests).toHaveLength(2);
    await s.expectConsistent(thread.id);
  });

  it(`${N} mixed ACCEPT/DECLINE: one answer wins, the same ones succeed, the others get ALREADY_RESOLVED`, async () => {
    const { turn, thread } = await paused([{ name: 'edit_note', run: slowly(10) }]);
    const actions = Array.from({ length: N }, (_, i) => (i % 2 ? 'DECLINE' : 'ACCEPT'));
    const results = await answerAll(turn.pendingElicitations[0].id, actions);
    const stored = await s.turn(turn.id);
    const winner = stored.elicitations[0].response.action as string;
    results.forEach((result, i) => {
      if (actions[i] === winner) {
        expect(result.userErrors).toEqual([]);
        expect(result.elicitation.response.action).toBe(winner);
      } else {
        expect(result.userErrors.map((e: any) => e.code)).toEqual(['ALREADY_RESOLVED']);
      }
    });
    expect(s.tools.count('edit_note')).toBe(winner === 'ACCEPT' ? 1 : 0);
    expect(stored.status).toBe('COMPLETED');
    expect(s.model.requests).toHaveLength(2);
    await s.expectConsistent(thread.id);
  });

  it('concurrent answers to both elicitations of one step: each tool runs once, the turn resumes once', async () => {
    const { turn, thread } = await paused(
      [
        { name: 'edit_note', run: slowly(10) },
        { name: 'archive_note', run: slowly(10) },
      ],
      [
        callStep(call('edit_note', { id: 'n1' }, 'c1'), call('archive_note', { id: 'n2' }, 'c2')),
        textStep('Both done.'),
      ],
    );
    const [a, b] = turn.pendingElicitations;
    await Promise.all([answerAll(a.id, Array(N / 2).fill('ACCEPT')), answerAll(b.id, Array(N / 2).fill('ACCEPT'))]);
    const final = await s.turn(turn.id);
    expect(final.status).toBe('COMPLETED');
    expect(s.tools.count('edit_note')).toBe(1);
    expect(s.tools.count('archive_note')).toBe(1);
    expect(s.model.requests).toHaveLength(2);
    expect(toolTexts(final.messages)).toEqual(['edited n1', 'edited n2']);
    await s.expectConsistent(thread.id);
  });
});
