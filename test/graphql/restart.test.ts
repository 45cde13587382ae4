// A paused turn lives in the database: a fresh server on the same SQLite file answers it and runs the tool once.
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../src/models/scripted.js';
import { dataOf, RESOLVE, startHarness, type Harness } from '../support/harness.js';
import {
  call,
  callStep,
  MODEL_ID,
  startScenario,
  testConfig,
  textStep,
  THREAD_QUERY,
  toolTexts,
  TURN_QUERY,
  type Scenario,
} from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';
import { expectValidModelRequests, expectValidTranscript } from '../support/transcript.js';

const TOOLS = [{ name: 'edit_note' }, { name: 'archive_note' }];

let first: Scenario | null = null;
let second: Harness | null = null;
afterEach(async () => {
  await first?.close().catch(() => {});
  await second?.close();
  first = second = null;
});

async function restart(database: string, script = [textStep('Done after the restart.')]) {
  const model = new ScriptedModel(script);
  const tools = new CountingToolSource('t', TOOLS);
  second = await startHarness({ database, config: testConfig(), models: { [MODEL_ID]: model }, toolSources: [tools] });
  return { h: second, model, tools };
}

describe('a paused turn reloaded by a fresh server on the same file', () => {
  it('is still pending, and one ACCEPT runs the tool once and completes the turn', async () => {
    first = await startScenario({
      tools: TOOLS,
      script: [callStep(call('edit_note', { id: 'n1' }, 'c1')), textStep('never used')],
    });
    const { turn, thread } = await first.start('edit n1');
    expect(turn.status).toBe('PAUSED');
    const database = first.h.database;
    await first.close();

    const next = await restart(database);
    const pending = dataOf(
      await next.h.gql('{ pendingElicitations { totalCount edges { node { id status toolCall { arguments } } } } }'),
    ).pendingElicitations;
    expect(pending.totalCount).toBe(1);
    expect(pending.edges[0].node).toEqual({
      id: turn.pendingElicitations[0].id,
      status: 'PENDING',
      toolCall: { arguments: { id: 'n1' } },
    });
    const reloaded = dataOf(await next.h.gql(TURN_QUERY, { id: turn.id })).turn;
    expect(reloaded.status).toBe('PAUSED');
    expect(reloaded.expiresAt).toBe(turn.expiresAt);

    const resolved = dataOf(
      await next.h.gql(RESOLVE, { input: { elicitationId: pending.edges[0].node.id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe('Done after the restart.');
    expect(next.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }]);
    expect(first.tools.count('edit_note')).toBe(0);

    // The new process's model saw the whole transcript, including what the first process wrote.
    expect(next.model.requests).toHaveLength(1);
    expect(next.model.requests[0]!.messages.map((m) => [m.role, m.toolCallId ?? m.text])).toEqual([
      ['USER', 'edit n1'],
      ['ASSISTANT', null],
      ['TOOL', 'c1'],
    ]);
    expectValidModelRequests(next.model.requests);

    // Answering again on the new server does nothing twice.
    const again = dataOf(
      await next.h.gql(RESOLVE, { input: { elicitationId: pending.edges[0].node.id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(again.userErrors).toEqual([]);
    expect(again.turn.status).toBe('COMPLETED');
    expect(next.tools.count('edit_note')).toBe(1);
    const { messages } = dataOf(await next.h.gql(THREAD_QUERY, { id: thread.id })).thread;
    expectValidTranscript(messages);
    expect(toolTexts(messages)).toEqual(['edit_note ran with {"id":"n1"}']);
  });

  it('keeps answers given before the restart: a step half answered finishes on the new server', async () => {
    first = await startScenario({
      tools: TOOLS,
      script: [
        callStep(call('edit_note', { id: 'a' }, 'c1'), call('archive_note', { id: 'b' }, 'c2')),
        textStep('never used'),
      ],
    });
    const { turn, thread } = await first.start('edit a, archive b');
    const [a, b] = turn.pendingElicitations;
    expect((await first.resolve(a.id, 'DECLINE', { instructions: 'not a' })).turn.status).toBe('PAUSED');
    const database = first.h.database;
    await first.close();

    const next = await restart(database);
    const resolved = dataOf(
      await next.h.gql(RESOLVE, { input: { elicitationId: b.id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(toolTexts(resolved.turn.messages)).toEqual([
      'User declined execution of edit_note: not a',
      'archive_note ran with {"id":"b"}',
    ]);
    expect(next.tools.count('edit_note')).toBe(0);
    expect(next.tools.count('archive_note')).toBe(1);
    expectValidTranscript(dataOf(await next.h.gql(THREAD_QUERY, { id: thread.id })).thread.messages);
  });
});
