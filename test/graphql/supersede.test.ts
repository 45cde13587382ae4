// A new message on a thread with a PAUSED turn supersedes it; a thread with a RUNNING turn is busy.
import { afterEach, describe, expect, it } from 'vitest';
import type { Model, ModelRequest, ModelResponse } from '../../src/models/model.js';
import { dataOf } from '../support/harness.js';
import {
  call,
  callStep,
  deferred,
  lastRequest,
  startScenario,
  textStep,
  toolTexts,
  type Scenario,
} from '../support/scenario.js';

const SUPERSEDED = 'Execution of edit_note was cancelled: the user sent a new message instead.';

let s: Scenario;
afterEach(async () => {
  await s?.close();
});

/** Polls the turn until it leaves RUNNING (background turns). */
async function settled(turnId: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const turn = await s.turn(turnId);
    if (turn.status !== 'RUNNING') return turn;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`turn ${turnId} is still RUNNING`);
}

describe('supersede', () => {
  it('cancels the paused turn and its elicitations, closes its calls, and runs the new turn on the full transcript', async () => {
    s = await startScenario({
      tools: [{ name: 'edit_note' }],
      script: [callStep(call('edit_note', { id: 'n1' }, 'c1')), textStep('Sure, I left it alone.')],
    });
    const first = await s.start('edit n1');
    expect(first.turn.status).toBe('PAUSED');
    const elicitationId = first.turn.pendingElicitations[0].id;

    const second = await s.start('actually, leave it', first.thread.id);
    expect(second.userErrors).toEqual([]);
    expect(second.thread.id).toBe(first.thread.id);
    expect(second.turn.status).toBe('COMPLETED');
    expect(second.turn.text).toBe('Sure, I left it alone.');

    const old = await s.turn(first.turn.id);
    expect(old.status).toBe('CANCELLED');
    expect(old.text).toBeNull();
    expect(old.pendingElicitations).toEqual([]);
    expect(old.elicitations.map((e: any) => e.status)).toEqual(['CANCELLED']);
    expect(toolTexts(old.messages)).toEqual([SUPERSEDED]);

    // The model saw everything: the first message, its call, the closing text and the new message.
    const seen = lastRequest(s.model).messages;
    expect(seen.map((m) => [m.role, m.text])).toEqual([
      ['USER', 'edit n1'],
      ['ASSISTANT', null],
      ['TOOL', SUPERSEDED],
      ['USER', 'actually, leave it'],
    ]);
    expect(seen[1]!.toolCalls.map((c) => c.id)).toEqual(['c1']);

    // The old request can no longer be answered, and nothing ran.
    const late = await s.resolve(elicitationId, 'ACCEPT');
    expect(late.userErrors.map((e: any) => e.code)).toEqual(['ALREADY_RESOLVED']);
    expect(s.tools.count('edit_note')).toBe(0);
    expect(dataOf(await s.h.gql('{ pendingElicitations { totalCount } }')).pendingElicitations.totalCount).toBe(0);
    const threadTurns = (await s.thread(first.thread.id)).turns.map((t: any) => t.status);
    expect(threadTurns).toEqual(['CANCELLED', 'COMPLETED']);
    await s.expectConsistent(first.thread.id);
  });

  it('closes every call of a paused step, partly answered or not, each with one message', async () => {
    s = await startScenario({
      tools: [{ name: 'edit_note' }, { name: 'read_note', annotations: { readOnlyHint: true } }],
      script: [
        callStep(
          call('read_note', {}, 'c1'),
          call('edit_note', { id: 'a' }, 'c2'),
          call('edit_note', { id: 'b' }, 'c3'),
        ),
        textStep('ok'),
      ],
    });
    const first = await s.start('go');
    await s.resolve(first.turn.pendingElicitations[0].id, 'ACCEPT');
    const second = await s.start('stop', first.thread.id);
    expect(second.turn.status).toBe('COMPLETED');
    const old = await s.turn(first.turn.id);
    expect(old.status).toBe('CANCELLED');
    expect(old.elicitations.map((e: any) => e.status)).toEqual(['ACCEPTED', 'CANCELLED']);
    expect(toolTexts(old.messages)).toEqual([
      'Execution of read_note was cancelled: the user sent a new message instead.',
      SUPERSEDED,
      SUPERSEDED,
    ]);
    expect(s.tools.count('read_note') + s.tools.count('edit_note')).toBe(0);
    await s.expectConsistent(first.thread.id);
  });
});

describe('THREAD_BUSY', () => {
  it('refuses a new message while a background turn runs a slow tool, and accepts it afterwards', async () => {
    const release = deferred();
    s = await startScenario({
      tools: [
        {
          name: 'slow',
          annotations: { readOnlyHint: true },
          run: async () => {
            await release.promise;
            return 'slow done';
          },
        },
      ],
      script: [callStep(call('slow')), textStep('Finished slowly.'), textStep('Second answer.')],
    });
    const first = await s.start('go slow', null, { background: true });
    expect(first.userErrors).toEqual([]);
    expect(first.turn.status).toBe('RUNNING');
    while (s.tools.count('slow') === 0) await new Promise((r) => setTimeout(r, 5));

    const busy = await s.start('are you done?', first.thread.id);
    expect(busy.turn).toBeNull();
    expect(busy.userErrors).toEqual([expect.objectContaining({ code: 'THREAD_BUSY', field: ['input', 'threadId'] })]);

    release.resolve();
    const done = await settled(first.turn.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.text).toBe('Finished slowly.');
    // The refused message left no trace.
    const thread = await s.thread(first.thread.id);
    expect(thread.messages.filter((m: any) => m.role === 'USER').map((m: any) => m.text)).toEqual(['go slow']);

    const again = await s.start('are you done now?', first.thread.id);
    expect(again.turn.status).toBe('COMPLETED');
    expect(s.tools.count('slow')).toBe(1);
    await s.expectConsistent(first.thread.id);
  });

  it('refuses a new message while the model is still thinking', async () => {
    const gate = deferred();
    const requests: ModelRequest[] = [];
    const model: Model = {
      async generate(request): Promise<ModelResponse> {
        requests.push(request);
        if (requests.length === 1) await gate.promise;
        return textStep(`answer ${requests.length}`);
      },
    };
    s = await startScenario({ model });
    const first = await s.start('think hard', null, { background: true });
    expect(first.turn.status).toBe('RUNNING');
    while (requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const busy = await s.start('hello?', first.thread.id);
    expect(busy.userErrors.map((e: any) => e.code)).toEqual(['THREAD_BUSY']);
    gate.resolve();
    expect((await settled(first.turn.id)).text).toBe('answer 1');
    const next = await s.start('hello again', first.thread.id);
    expect(next.turn.text).toBe('answer 2');
    expect(requests).toHaveLength(2);
    await s.expectConsistent(first.thread.id);
  });

  it('concurrent new messages on a paused thread: exactly one supersedes it, the others get THREAD_BUSY', async () => {
    const gate = deferred();
    let calls = 0;
    const model: Model = {
      async generate(): Promise<ModelResponse> {
        calls++;
        if (calls === 1) return callStep(call('edit_note', { id: 'n1' }, 'c1'));
        await gate.promise; // the superseding turn stays RUNNING while the others arrive
        return textStep('ok');
      },
    };
    s = await startScenario({ tools: [{ name: 'edit_note' }], model });
    const first = await s.start('edit n1');
    expect(first.turn.status).toBe('PAUSED');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => s.start(`message ${i}`, first.thread.id, { background: true })),
    );
    const accepted = results.filter((r) => r.userErrors.length === 0);
    expect(accepted).toHaveLength(1);
    expect(results.filter((r) => r.userErrors[0]?.code === 'THREAD_BUSY')).toHaveLength(9);
    gate.resolve();
    expect((await settled(accepted[0].turn.id)).status).toBe('COMPLETED');
    const thread = await s.thread(first.thread.id);
    expect(thread.turns.map((t: any) => t.status)).toEqual(['CANCELLED', 'COMPLETED']);
    expect(thread.messages.filter((m: any) => m.role === 'USER')).toHaveLength(2);
    expect(s.tools.count('edit_note')).toBe(0);
    await s.expectConsistent(first.thread.id);
  });

  it('another thread of the same user is not busy', async () => {
    const gate = deferred();
    let calls = 0;
    const model: Model = {
      async generate() {
        if (++calls === 1) await gate.promise;
        return textStep('hi');
      },
    };
    s = await startScenario({ model });
    const first = await s.start('one', null, { background: true });
    const other = await s.start('two');
    expect(other.userErrors).toEqual([]);
    expect(other.turn.status).toBe('COMPLETED');
    gate.resolve();
    expect((await settled(first.turn.id)).status).toBe('COMPLETED');
  });
});
