// Each answer through the GraphQL API: what runs, the exact TOOL message, what the model sees next, how the turn goes on.
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptStep } from '../../src/models/scripted.js';
import { call, callStep, lastRequest, startScenario, textStep, toolTexts, type Scenario } from '../support/scenario.js';
import { toolMessageFor } from '../support/transcript.js';

const TOOLS = [
  { name: 'edit_note' },
  { name: 'archive_note' },
  { name: 'read_note', annotations: { readOnlyHint: true } },
];

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

async function pausedOnEdit(script: ScriptStep[] = [callStep(call('edit_note', { id: 'n1' })), textStep('Finished.')]) {
  s = await startScenario({ tools: TOOLS, script });
  const { turn, thread } = await s.start('edit n1');
  expect(turn.status).toBe('PAUSED');
  expect(s.tools.count('edit_note')).toBe(0);
  expect(s.model.requests).toHaveLength(1);
  return { turn, thread, elicitation: turn.pendingElicitations[0] };
}

describe('ACCEPT', () => {
  it('runs the tool exactly once with the shown arguments and continues the turn', async () => {
    const { thread, elicitation } = await pausedOnEdit();
    const resolved = await s.resolve(elicitation.id, 'ACCEPT');
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.elicitation).toMatchObject({
      status: 'ACCEPTED',
      response: { action: 'ACCEPT', content: null },
      resolvedBy: 'local',
    });
    expect(resolved.elicitation.resolvedAt).toBeTruthy();
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe('Finished.');
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }]);
    expect(toolTexts(resolved.turn.messages)).toEqual(['edit_note ran with {"id":"n1"}']);
    expect(toolMessageFor(lastRequest(s.model).messages, 'call_edit_note')?.text).toBe(
      'edit_note ran with {"id":"n1"}',
    );
    await s.expectConsistent(thread.id);
  });

  it('appends the user instructions to the tool output, and the model sees them', async () => {
    const { thread, elicitation } = await pausedOnEdit();
    const resolved = await s.resolve(elicitation.id, 'ACCEPT', { instructions: 'only change the title' });
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(s.tools.count('edit_note')).toBe(1);
    const [text] = toolTexts(resolved.turn.messages);
    expect(text).toMatch(/^edit_note ran with \{"id":"n1"\}/);
    expect(text).toMatch(/\nUser instructions for edit_note: only change the title$/);
    expect(toolMessageFor(lastRequest(s.model).messages, 'call_edit_note')?.text).toBe(text);
    expect(resolved.elicitation.response).toEqual({
      action: 'ACCEPT',
      content: { instructions: 'only change the title' },
    });
    await s.expectConsistent(thread.id);
  });

  it('blank instructions add nothing', async () => {
    const { thread, elicitation } = await pausedOnEdit();
    const resolved = await s.resolve(elicitation.id, 'ACCEPT', { instructions: '   ' });
    expect(toolTexts(resolved.turn.messages)).toEqual(['edit_note ran with {"id":"n1"}']);
    await s.expectConsistent(thread.id);
  });
});

describe('DECLINE', () => {
  it('without instructions: does not run, says exactly so, and the next model call sees it', async () => {
    const { thread, elicitation } = await pausedOnEdit();
    const resolved = await s.resolve(elicitation.id, 'DECLINE');
    expect(resolved.elicitation.status).toBe('DECLINED');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe('Finished.');
    expect(s.tools.count('edit_note')).toBe(0);
    expect(toolTexts(resolved.turn.messages)).toEqual(['User declined execution of edit_note.']);
    expect(s.model.requests).toHaveLength(2);
    expect(toolMessageFor(s.model.requests[1]!.messages, 'call_edit_note')?.text).toBe(
      'User declined execution of edit_note.',
    );
    await s.expectConsistent(thread.id);
  });

  it('with instructions: the exact text with them reaches the model, which can act on them', async () => {
    const { thread, elicitation } = await pausedOnEdit([
      callStep(call('edit_note', { id: 'n1' })),
      // The model follows the user's instructions: it reads instead.
      (request) => {
        const declined = request.messages.at(-1)?.text ?? '';
        return declined.includes('read it instead')
          ? callStep(call('read_note', { id: 'n1' }))
          : textStep('ignored the user');
      },
      textStep('Here is the note instead.'),
    ]);
    const resolved = await s.resolve(elicitation.id, 'DECLINE', { instructions: 'read it instead' });
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe('Here is the note instead.');
    expect(s.tools.count('edit_note')).toBe(0);
    expect(s.tools.count('read_note')).toBe(1);
    expect(toolTexts(resolved.turn.messages)).toEqual([
      'User declined execution of edit_note: read it instead',
      'read_note ran with {"id":"n1"}',
    ]);
    expect(toolMessageFor(s.model.requests[1]!.messages, 'call_edit_note')?.text).toBe(
      'User declined execution of edit_note: read it instead',
    );
    await s.expectConsistent(thread.id);
  });
});

describe('CANCEL', () => {
  it('cancels the turn: nothing runs, no more model calls, the exact text', async () => {
    const { thread, turn, elicitation } = await pausedOnEdit();
    expect(turn.text).toMatch(/^I need your confirmation/);
    const resolved = await s.resolve(elicitation.id, 'CANCEL');
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.elicitation.status).toBe('CANCELLED');
    expect(resolved.turn.status).toBe('CANCELLED');
    // The question is gone with the step: nothing waits for an answer.
    expect(resolved.turn.text).toBeNull();
    expect(resolved.turn.pendingElicitations).toEqual([]);
    expect(resolved.turn.expiresAt).toBeNull();
    expect(s.tools.count('edit_note')).toBe(0);
    expect(s.model.requests).toHaveLength(1);
    expect(toolTexts(resolved.turn.messages)).toEqual(['Execution of edit_note was cancelled by the user.']);
    expect((await s.turn(turn.id)).status).toBe('CANCELLED');
    await s.expectConsistent(thread.id);
  });

  it('closes every unanswered call of the step, including one that needed no confirmation', async () => {
    s = await startScenario({
      tools: TOOLS,
      script: [
        callStep(
          call('read_note', { id: 'n1' }, 'c1'),
          call('edit_note', { id: 'n1' }, 'c2'),
          call('archive_note', { id: 'n1' }, 'c3'),
        ),
        textStep('never'),
      ],
    });
    const { turn, thread } = await s.start('read, edit and archive n1');
    expect(turn.pendingElicitations).toHaveLength(2);
    const resolved = await s.resolve(turn.pendingElicitations[1].id, 'CANCEL');
    expect(resolved.turn.status).toBe('CANCELLED');
    expect(resolved.turn.elicitations.map((e: any) => e.status)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(toolTexts(resolved.turn.messages)).toEqual([
      'Execution of read_note was cancelled by the user.',
      'Execution of edit_note was cancelled by the user.',
      'Execution of archive_note was cancelled by the user.',
    ]);
    for (const name of ['read_note', 'edit_note', 'archive_note']) expect(s.tools.count(name)).toBe(0);
    expect(s.model.requests).toHaveLength(1);
    await s.expectConsistent(thread.id);
  });

  it('a call the user declined before the cancel keeps its decline text; an accepted one never runs', async () => {
    s = await startScenario({
      tools: TOOLS,
      script: [
        callStep(
          call('edit_note', { id: 'n1' }, 'c1'),
          call('archive_note', { id: 'n1' }, 'c2'),
          call('edit_note', { id: 'n2' }, 'c3'),
        ),
        textStep('never'),
      ],
    });
    const { turn, thread } = await s.start('three changes');
    const [first, second, third] = turn.pendingElicitations;
    expect((await s.resolve(first.id, 'DECLINE', { instructions: 'not that one' })).turn.status).toBe('PAUSED');
    expect((await s.resolve(second.id, 'ACCEPT')).turn.status).toBe('PAUSED');
    const resolved = await s.resolve(third.id, 'CANCEL');
    expect(resolved.turn.status).toBe('CANCELLED');
    expect(toolTexts(resolved.turn.messages)).toEqual([
      'User declined execution of edit_note: not that one',
      'Execution of archive_note was cancelled by the user.',
      'Execution of edit_note was cancelled by the user.',
    ]);
    expect(s.tools.count('edit_note') + s.tools.count('archive_note')).toBe(0);
    expect(resolved.turn.elicitations.map((e: any) => e.status)).toEqual(['DECLINED', 'ACCEPTED', 'CANCELLED']);
    await s.expectConsistent(thread.id);
  });

  it('leaves the thread usable: the next turn sees the cancelled call', async () => {
    const { thread, elicitation } = await pausedOnEdit([
      callStep(call('edit_note', { id: 'n1' })),
      textStep('OK, I will not edit it.'),
    ]);
    await s.resolve(elicitation.id, 'CANCEL');
    const next = await s.start('never mind', thread.id);
    expect(next.userErrors).toEqual([]);
    expect(next.turn.status).toBe('COMPLETED');
    const seen = lastRequest(s.model).messages;
    expect(seen.map((m) => m.role)).toEqual(['USER', 'ASSISTANT', 'TOOL', 'USER']);
    expect(seen[2]!.text).toBe('Execution of edit_note was cancelled by the user.');
    await s.expectConsistent(thread.id);
  });
});
