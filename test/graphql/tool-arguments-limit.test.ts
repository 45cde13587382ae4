// The size limit on the arguments of a model's tool call (limits.maxToolArgumentsBytes): a call over it does not run
// and is not asked about, its arguments are not kept, the model reads why in its TOOL message, and the turn goes on.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import { call, callStep, startScenario, testConfig, textStep, toolTexts, type Scenario } from '../support/scenario.js';
import { toolMessageFor } from '../support/transcript.js';

const TOOLS = [{ name: 'write_note' }];
const BIG = { text: 'x'.repeat(2000) }; // {"text":"xx…"}: 2,011 bytes of JSON
const REFUSED = 'Execution of write_note was refused: its arguments are 2011 bytes, over the limit of 1024 bytes.';

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

/** A listener that records the ids of the calls it is asked about. */
function recordingListener(seen: string[]): ToolPreExecuteListener {
  return {
    priority: 100,
    onToolPreExecute(event) {
      seen.push(event.toolCall.id);
    },
  };
}

describe('a tool call whose arguments are over maxToolArgumentsBytes', () => {
  it('is refused before the listeners and the user see it; the other call of its step asks and runs; the turn goes on', async () => {
    const seen: string[] = [];
    s = await startScenario({
      tools: TOOLS,
      limits: { maxToolArgumentsBytes: 1024 },
      listeners: [recordingListener(seen)],
      script: [
        callStep(call('write_note', BIG, 'c_big'), call('write_note', { text: 'small' }, 'c_small')),
        textStep('Wrote the small one.'),
      ],
    });
    const { turn, thread } = await s.start('write two notes');

    // Only the call within the limit asks; the refused one never reached a listener.
    expect(turn.status).toBe('PAUSED');
    expect(turn.pendingElicitations).toHaveLength(1);
    expect(turn.pendingElicitations[0].toolCall.arguments).toEqual({ text: 'small' });
    expect(seen).toEqual(['c_small']);
    // Its arguments were not kept: the saved answer of the model holds none for it.
    const assistant = turn.messages.find((m: any) => m.role === 'ASSISTANT');
    expect(assistant.toolCalls.map((c: any) => [c.id, c.arguments])).toEqual([
      ['c_big', {}],
      ['c_small', { text: 'small' }],
    ]);

    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe('Wrote the small one.');
    expect(s.tools.runs.get('write_note')).toEqual([{ text: 'small' }]);
    expect(toolTexts(resolved.turn.messages)).toEqual([REFUSED, 'write_note ran with {"text":"small"}']);
    // The model reads why, next to its call, which it gets back without the arguments.
    const next = s.model.requests[1]!.messages;
    expect(toolMessageFor(next, 'c_big')?.text).toBe(REFUSED);
    expect(next.flatMap((m) => m.toolCalls).find((c) => c.id === 'c_big')?.arguments).toEqual({});
    await s.expectConsistent(thread.id);
  });

  it('counts UTF-8 bytes of the JSON: exactly the limit (server.maxToolArgumentsBytes) runs, one character more is refused', async () => {
    s = await startScenario({
      tools: TOOLS,
      config: { ...testConfig({ requireToolConfirmation: false }), server: { maxToolArgumentsBytes: 64 } },
      script: [
        // {"text":"…"}: 11 bytes around the text, 2 per é: 26 é and an e are 64 bytes; 27 é are 65 (38 characters).
        callStep(
          call('write_note', { text: 'é'.repeat(26) + 'e' }, 'c_at'),
          call('write_note', { text: 'é'.repeat(27) }, 'c_over'),
        ),
        textStep('ok'),
      ],
    });
    const { turn, thread } = await s.start('write');
    expect(turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('write_note')).toEqual([{ text: 'é'.repeat(26) + 'e' }]);
    expect(toolTexts(turn.messages)[1]).toBe(
      'Execution of write_note was refused: its arguments are 65 bytes, over the limit of 64 bytes.',
    );
    await s.expectConsistent(thread.id);
  });

  it('stays refused when its turn is taken over after the step was saved: it never runs with the arguments dropped', async () => {
    s = await startScenario({
      tools: TOOLS,
      agent: { requireToolConfirmation: false },
      limits: { maxToolArgumentsBytes: 1024 },
      script: [callStep(call('write_note', BIG, 'c_big')), textStep('ok')],
      // Right after the model's answer was saved, another process takes the turn, and dies: its lease has run out.
      checkpoint: async (point, { turnId }) => {
        if (point !== 'stepSaved') return;
        const { store, runner } = s.h.server.services;
        const past = new Date(Date.now() - 1000).toISOString();
        await store.claimTurn(turnId, runner.leaseOwner, { owner: 'otherhost:1:other', until: past }, past);
      },
    });
    const { turn, thread } = await s.start('write a big note');
    expect(turn.status).toBe('RUNNING');
    const { runner } = s.h.server.services;
    expect(await runner.recover()).toEqual([turn.id]);
    await runner.idle();
    const after = await s.turn(turn.id);
    expect(after.status).toBe('COMPLETED');
    expect(s.tools.count('write_note')).toBe(0);
    expect(toolTexts(after.messages)).toEqual([REFUSED]);
    await s.expectConsistent(thread.id);
  });

  it('is 256 KiB by default', async () => {
    s = await startScenario({
      tools: TOOLS,
      agent: { requireToolConfirmation: false },
      script: [
        callStep(
          call('write_note', { text: 'x'.repeat(262_144 - 11) }, 'c_at'),
          call('write_note', { text: 'x'.repeat(262_144 - 10) }, 'c_over'),
        ),
        textStep('ok'),
      ],
    });
    const { turn } = await s.start('write');
    expect(s.tools.count('write_note')).toBe(1);
    expect(toolTexts(turn.messages)[1]).toBe(
      'Execution of write_note was refused: its arguments are 262145 bytes, over the limit of 262144 bytes.',
    );
  });
});
