// The names the model calls tools by, through the API: a tool whose own name its API would refuse reaches it as
// `<source>_<name>` made valid, and every TOOL text names the call that way (docs/design.md, "Tool names"), while
// the API's toolCall keeps the tool's own name.
import { afterEach, describe, expect, it } from 'vitest';
import { call, callStep, startScenario, textStep, toolTexts, type Scenario } from '../support/scenario.js';
import { toolMessageFor } from '../support/transcript.js';

// "edit.note" is not a valid function name for the model's API: it is offered as "t_edit_note".
const TOOLS = [{ name: 'edit.note' }];
const CALLED = 't_edit_note';

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

describe('TOOL texts name the call as the model called it', () => {
  it('a DECLINE: "User declined execution of t_edit_note.", what the model reads next; toolCall.name is the own name', async () => {
    s = await startScenario({ tools: TOOLS, script: [callStep(call(CALLED, { id: 'n1' })), textStep('fine')] });
    expect(s.model.requests).toHaveLength(0);
    const { turn, thread } = await s.start('edit n1');
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations[0].toolCall).toMatchObject({ name: 'edit.note', toolId: 't:edit.note' });
    const declined = await s.resolve(turn.pendingElicitations[0].id, 'DECLINE');
    expect(declined.turn.status).toBe('COMPLETED');
    expect(toolTexts(declined.turn.messages)).toEqual([`User declined execution of ${CALLED}.`]);
    expect(s.model.requests[0]!.tools.map((t) => t.name)).toEqual([CALLED]);
    expect(toolMessageFor(s.model.requests[1]!.messages, `call_${CALLED}`)?.text).toBe(
      `User declined execution of ${CALLED}.`,
    );
    expect(s.tools.count('edit.note')).toBe(0);
    await s.expectConsistent(thread.id);
  });

  it('a paused call superseded by a new message (the stored step): "Execution of t_edit_note was cancelled: …"', async () => {
    s = await startScenario({
      tools: TOOLS,
      script: [callStep(call(CALLED, { id: 'n1' })), textStep('what now?')],
    });
    const first = await s.start('edit n1');
    expect(first.turn.status).toBe('PAUSED');
    const second = await s.start('never mind', first.thread.id);
    expect(second.turn.status).toBe('COMPLETED');
    const thread = await s.thread(first.thread.id);
    expect(toolTexts(thread.messages)).toEqual([
      `Execution of ${CALLED} was cancelled: the user sent a new message instead.`,
    ]);
    expect(s.tools.count('edit.note')).toBe(0);
  });

  it('an ACCEPT of a tool that fails: "Execution of t_edit_note failed: …"', async () => {
    s = await startScenario({
      tools: [
        {
          name: 'edit.note',
          run: () => {
            throw new Error('disk full');
          },
        },
      ],
      script: [callStep(call(CALLED, { id: 'n1' })), textStep('sorry')],
    });
    const { turn } = await s.start('edit n1');
    const accepted = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(accepted.turn.status).toBe('COMPLETED');
    expect(toolTexts(accepted.turn.messages)).toEqual([`Execution of ${CALLED} failed: disk full`]);
  });
});
