// What goes wrong inside the loop: failing tools, unknown tools, runaway models, failing models, odd call ids.
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/models/model.js';
import { call, callStep, lastRequest, startScenario, textStep, toolTexts, type Scenario } from '../support/scenario.js';
import { toolMessageFor } from '../support/transcript.js';

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

describe('tool errors', () => {
  it('a tool that throws becomes a TOOL message saying it failed and why; the turn goes on', async () => {
    s = await startScenario({
      tools: [
        {
          name: 'flaky',
          annotations: { readOnlyHint: true },
          run: () => {
            throw new Error('disk is full');
          },
        },
      ],
      script: [callStep(call('flaky')), textStep('The tool failed; sorry.')],
    });
    const { turn, thread } = await s.start('try it');
    expect(turn.status).toBe('COMPLETED');
    expect(turn.text).toBe('The tool failed; sorry.');
    expect(toolTexts(turn.messages)).toEqual(['Execution of flaky failed: disk is full']);
    expect(toolMessageFor(lastRequest(s.model).messages, 'call_flaky')?.text).toBe(
      'Execution of flaky failed: disk is full',
    );
    await s.expectConsistent(thread.id);
  });

  it('a tool that throws after ACCEPT fails the same way', async () => {
    s = await startScenario({
      tools: [
        {
          name: 'flaky',
          run: () => {
            throw new Error('permission denied');
          },
        },
      ],
      script: [callStep(call('flaky')), textStep('It failed.')],
    });
    const { turn, thread } = await s.start('try it');
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT', { instructions: 'go' });
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(toolTexts(resolved.turn.messages)[0]).toMatch(/^Execution of flaky failed: permission denied/);
    expect(s.tools.count('flaky')).toBe(1);
    await s.expectConsistent(thread.id);
  });

  it('a call of a tool the agent does not have gets a TOOL message; the turn goes on', async () => {
    s = await startScenario({
      tools: [{ name: 'real' }],
      script: [callStep(call('imaginary', { a: 1 })), textStep('No such tool.')],
    });
    const { turn, thread } = await s.start('use the imaginary tool');
    expect(turn.status).toBe('COMPLETED');
    expect(turn.elicitations).toEqual([]);
    expect(toolTexts(turn.messages)).toEqual([
      'Execution of imaginary failed: no such tool is available to this agent.',
    ]);
    expect(s.model.requests).toHaveLength(2);
    await s.expectConsistent(thread.id);
  });
});

describe('maxIterations', () => {
  it('a model that never stops calling tools ends the turn FAILED with a clear error', async () => {
    s = await startScenario({
      tools: [{ name: 'ping', annotations: { readOnlyHint: true } }],
      agent: { maxIterations: 3 },
      // The same step forever, with the same call id each time (some models reuse ids).
      script: [callStep(call('ping', {}, 'call_0'))],
    });
    const { turn, thread } = await s.start('ping forever');
    expect(turn.status).toBe('FAILED');
    expect(turn.error).toBe('The agent stopped after 3 model calls without a final answer (maxIterations is 3).');
    expect(turn.iterations).toBe(3);
    expect(s.model.requests).toHaveLength(3);
    expect(s.tools.count('ping')).toBe(3);
    expect(toolTexts(turn.messages)).toEqual(['ping ran with {}', 'ping ran with {}', 'ping ran with {}']);
    await s.expectConsistent(thread.id);

    const next = await s.start('stop now', thread.id);
    expect(next.userErrors).toEqual([]);
    expect(next.turn.status).toBe('FAILED'); // the script still only pings: the limit applies per turn
    expect(next.turn.iterations).toBe(3);
  });
});

describe('call ids from the model', () => {
  it('a reused or empty id gets an id of ours, so every call keeps exactly one TOOL message', async () => {
    s = await startScenario({
      tools: [{ name: 'ping', annotations: { readOnlyHint: true } }],
      script: [
        callStep(call('ping', { n: 1 }, 'same'), call('ping', { n: 2 }, 'same')),
        callStep(call('ping', { n: 3 }, '')),
        textStep('pinged'),
        callStep(call('ping', { n: 4 }, 'same')),
        textStep('pinged again'),
      ],
    });
    const first = await s.start('ping');
    expect(first.turn.status).toBe('COMPLETED');
    const second = await s.start('ping again', first.thread.id);
    expect(second.turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('ping')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const { messages } = await s.thread(first.thread.id);
    const ids = messages.flatMap((m: any) => m.toolCalls.map((c: any) => c.id));
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect(ids[0]).toBe('same');
    expect(ids.every((id: string) => id.length > 0)).toBe(true);
    await s.expectConsistent(first.thread.id);
  });
});

describe('model failures', () => {
  it('a model that throws ends the turn FAILED with a readable error, and the thread stays usable', async () => {
    let calls = 0;
    s = await startScenario({
      script: [
        () => {
          calls++;
          throw new Error('upstream answered 503 Service Unavailable');
        },
        (request: ModelRequest) => {
          calls++;
          return textStep(`I see ${request.messages.length} messages now.`);
        },
      ],
    });
    const failed = await s.start('hello');
    expect(failed.userErrors).toEqual([]);
    expect(failed.turn.status).toBe('FAILED');
    expect(failed.turn.error).toBe('The model call failed: upstream answered 503 Service Unavailable');
    expect(failed.turn.iterations).toBe(1);

    const next = await s.start('hello again', failed.thread.id);
    expect(next.turn.status).toBe('COMPLETED');
    expect(next.turn.text).toBe('I see 2 messages now.');
    expect(lastRequest(s.model).messages.map((m) => m.text)).toEqual(['hello', 'hello again']);
    expect(calls).toBe(2);
    await s.expectConsistent(failed.thread.id);
  });

  it('a model that throws after a tool ran keeps the tool result and a valid transcript', async () => {
    s = await startScenario({
      tools: [{ name: 'ping', annotations: { readOnlyHint: true } }],
      script: [
        callStep(call('ping')),
        () => {
          throw new Error('timeout after 30000 ms');
        },
        textStep('recovered'),
      ],
    });
    const failed = await s.start('ping');
    expect(failed.turn.status).toBe('FAILED');
    expect(failed.turn.error).toBe('The model call failed: timeout after 30000 ms');
    expect(toolTexts(failed.turn.messages)).toEqual(['ping ran with {}']);
    expect(s.tools.count('ping')).toBe(1);
    const next = await s.start('again', failed.thread.id);
    expect(next.turn.status).toBe('COMPLETED');
    await s.expectConsistent(failed.thread.id);
  });

  it('a model that throws after an ACCEPT: the tool ran once, the turn FAILED, the thread is usable', async () => {
    s = await startScenario({
      tools: [{ name: 'edit_note' }],
      script: [
        callStep(call('edit_note')),
        () => {
          throw new Error('connection reset');
        },
        textStep('fine'),
      ],
    });
    const { turn, thread } = await s.start('edit');
    const resolved = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.turn.status).toBe('FAILED');
    expect(resolved.turn.error).toBe('The model call failed: connection reset');
    expect(s.tools.count('edit_note')).toBe(1);
    expect((await s.start('and now?', thread.id)).turn.status).toBe('COMPLETED');
    await s.expectConsistent(thread.id);
  });
});
