// Several calls in one step: all asked at once, the turn resumes after the last answer, and the calls then run
// in their original order whatever the order of the answers.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import { dataOf } from '../support/harness.js';
import { call, callStep, lastRequest, startScenario, textStep, toolTexts, type Scenario } from '../support/scenario.js';

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

const order: string[] = [];
const recorded = (name: string, annotations = {}) => ({
  name,
  annotations,
  run: (args: Record<string, unknown>) => {
    order.push(`${name}(${String(args.id)})`);
    return `${name} did ${String(args.id)}`;
  },
});

const TWO_ASKED = [
  callStep(call('edit_note', { id: 'a' }, 'c1'), call('archive_note', { id: 'b' }, 'c2')),
  textStep('All answered.'),
];

describe('two calls in one step that both need confirmation', () => {
  it('asks both at once; the first answer leaves the turn PAUSED; after the last, accepted ones run and declined ones say so', async () => {
    order.length = 0;
    s = await startScenario({ tools: [recorded('edit_note'), recorded('archive_note')], script: TWO_ASKED });
    const { turn, thread } = await s.start('edit a, archive b');
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations.map((e: any) => e.toolCall.name)).toEqual(['edit_note', 'archive_note']);
    expect(turn.text).toContain('these 2 actions');
    const listed = dataOf(
      await s.h.gql('{ pendingElicitations { totalCount edges { node { id } } } }'),
    ).pendingElicitations;
    expect(listed.edges.map((e: any) => e.node.id)).toEqual(turn.pendingElicitations.map((e: any) => e.id));

    const firstAnswer = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(firstAnswer.userErrors).toEqual([]);
    expect(firstAnswer.elicitation.status).toBe('ACCEPTED');
    expect(firstAnswer.turn.status).toBe('PAUSED');
    expect(firstAnswer.turn.pendingElicitations.map((e: any) => e.id)).toEqual([turn.pendingElicitations[1].id]);
    expect(order).toEqual([]); // nothing runs before the last answer
    expect(s.model.requests).toHaveLength(1);

    const lastAnswer = await s.resolve(turn.pendingElicitations[1].id, 'DECLINE', { instructions: 'keep b' });
    expect(lastAnswer.turn.status).toBe('COMPLETED');
    expect(order).toEqual(['edit_note(a)']);
    expect(toolTexts(lastAnswer.turn.messages)).toEqual([
      'edit_note did a',
      'User declined execution of archive_note: keep b',
    ]);
    const seen = lastRequest(s.model)
      .messages.filter((m) => m.role === 'TOOL')
      .map((m) => [m.toolCallId, m.text]);
    expect(seen).toEqual([
      ['c1', 'edit_note did a'],
      ['c2', 'User declined execution of archive_note: keep b'],
    ]);
    await s.expectConsistent(thread.id);
  });

  it('answers in reverse order still run the calls in their original order', async () => {
    order.length = 0;
    s = await startScenario({ tools: [recorded('edit_note'), recorded('archive_note')], script: TWO_ASKED });
    const { turn, thread } = await s.start('edit a, archive b');
    const [first, second] = turn.pendingElicitations;
    expect((await s.resolve(second.id, 'ACCEPT')).turn.status).toBe('PAUSED');
    const done = await s.resolve(first.id, 'ACCEPT', { instructions: 'carefully' });
    expect(done.turn.status).toBe('COMPLETED');
    expect(order).toEqual(['edit_note(a)', 'archive_note(b)']);
    expect(done.turn.messages.filter((m: any) => m.role === 'TOOL').map((m: any) => m.toolCallId)).toEqual([
      'c1',
      'c2',
    ]);
    expect(toolTexts(done.turn.messages)[0]).toMatch(/User instructions for edit_note: carefully$/);
    await s.expectConsistent(thread.id);
  });

  it('a mixed step: a free call, a vetoed call and two asked calls answer in the original order after the last answer', async () => {
    order.length = 0;
    const veto: ToolPreExecuteListener = {
      priority: 10,
      onToolPreExecute: (e) => {
        if (e.toolCall.arguments.id === 'x') e.setVeto('x is frozen');
      },
    };
    s = await startScenario({
      tools: [recorded('read_note', { readOnlyHint: true }), recorded('edit_note'), recorded('archive_note')],
      listeners: [veto],
      script: [
        callStep(
          call('read_note', { id: 'r' }, 'c1'),
          call('edit_note', { id: 'x' }, 'c2'),
          call('edit_note', { id: 'e' }, 'c3'),
          call('archive_note', { id: 'z' }, 'c4'),
        ),
        textStep('Step done.'),
      ],
    });
    const { turn, thread } = await s.start('do four things');
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations.map((e: any) => e.toolCall.arguments.id)).toEqual(['e', 'z']);
    expect(order).toEqual([]); // the free call waits for the step too
    expect(toolTexts(turn.messages)).toEqual([]);

    await s.resolve(turn.pendingElicitations[1].id, 'DECLINE');
    const done = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(done.turn.status).toBe('COMPLETED');
    expect(order).toEqual(['read_note(r)', 'edit_note(e)']);
    expect(done.turn.messages.filter((m: any) => m.role === 'TOOL').map((m: any) => [m.toolCallId, m.text])).toEqual([
      ['c1', 'read_note did r'],
      ['c2', 'Execution of edit_note was denied: x is frozen'],
      ['c3', 'edit_note did e'],
      ['c4', 'User declined execution of archive_note.'],
    ]);
    expect(s.model.requests).toHaveLength(2);
    await s.expectConsistent(thread.id);
  });

  it('a step that needs no confirmation runs at once, in order', async () => {
    order.length = 0;
    s = await startScenario({
      tools: [recorded('read_note', { readOnlyHint: true }), recorded('edit_note')],
      agent: { requireToolConfirmation: false },
      script: [
        callStep(
          call('edit_note', { id: 1 }, 'c1'),
          call('read_note', { id: 2 }, 'c2'),
          call('edit_note', { id: 3 }, 'c3'),
        ),
        textStep('ok'),
      ],
    });
    const { turn, thread } = await s.start('go');
    expect(turn.status).toBe('COMPLETED');
    expect(order).toEqual(['edit_note(1)', 'read_note(2)', 'edit_note(3)']);
    await s.expectConsistent(thread.id);
  });

  it('one paused step after another in the same turn', async () => {
    order.length = 0;
    s = await startScenario({
      tools: [recorded('edit_note')],
      script: [
        callStep(call('edit_note', { id: 1 }, 'c1')),
        callStep(call('edit_note', { id: 2 }, 'c2')),
        textStep('Both edits done.'),
      ],
    });
    const { turn, thread } = await s.start('edit 1 then 2');
    const afterFirst = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(afterFirst.turn.status).toBe('PAUSED');
    expect(afterFirst.turn.id).toBe(turn.id);
    expect(afterFirst.turn.pendingElicitations).toHaveLength(1);
    expect(afterFirst.turn.pendingElicitations[0].toolCall.arguments).toEqual({ id: 2 });
    const done = await s.resolve(afterFirst.turn.pendingElicitations[0].id, 'ACCEPT');
    expect(done.turn.status).toBe('COMPLETED');
    expect(done.turn.iterations).toBe(3);
    expect(done.turn.elicitations).toHaveLength(2);
    expect(order).toEqual(['edit_note(1)', 'edit_note(2)']);
    await s.expectConsistent(thread.id);
  });
});
