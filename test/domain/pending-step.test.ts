// A paused turn's step as stored: today's format, the format written before steps had a version, and garbage.
import { describe, expect, it } from 'vitest';
import { loadPendingStep, PENDING_STEP_VERSION, StoredStepError } from '../../src/domain/pending-step.js';
import type { PendingStep } from '../../src/domain/records.js';

/** A step exactly as the release before versions wrote it: JSON.stringify of `{ calls }`. */
const UNVERSIONED = JSON.stringify({
  calls: [
    {
      toolCall: { id: 'call_1', name: 'read_graph', toolId: 'demo:read_graph', arguments: {} },
      outcome: { kind: 'run' },
    },
    {
      toolCall: { id: 'call_2', name: 'delete_entities', toolId: 'demo:delete_entities', arguments: { names: ['a'] } },
      outcome: { kind: 'confirm', elicitationId: 'elc_0193' },
    },
    {
      toolCall: { id: 'call_3', name: 'wipe', toolId: 'demo:wipe', arguments: {} },
      outcome: { kind: 'vetoed', reason: 'policy' },
    },
    {
      toolCall: { id: 'call_4', name: 'nope', toolId: 'demo:nope', arguments: {} },
      outcome: { kind: 'rejected', text: 'Execution of nope failed: no such tool is available to this agent.' },
    },
  ],
});

describe('loadPendingStep', () => {
  it('loads a step written before steps had a version, as version 1 with the same calls', () => {
    const stored = JSON.parse(UNVERSIONED) as { calls: PendingStep['calls'] };
    const step = loadPendingStep(JSON.parse(UNVERSIONED), 'trn_old');
    expect(step).toEqual({ version: 1, calls: stored.calls });
    expect(step.version).toBe(PENDING_STEP_VERSION);
  });

  it('loads a current step unchanged', () => {
    const current = `{"version":1,${UNVERSIONED.slice(1)}`;
    expect(loadPendingStep(JSON.parse(current), 'trn_new')).toEqual(JSON.parse(current));
  });

  it("keeps a call's modelName (the name the model called it by, for its TOOL texts)", () => {
    const toolCall = { id: 'c', name: 'edit.note', toolId: 't:edit.note', arguments: {}, modelName: 't_edit_note' };
    const stored = { version: 1, calls: [{ toolCall, outcome: { kind: 'run' } }] };
    expect(loadPendingStep(stored, 't').calls[0]!.toolCall.modelName).toBe('t_edit_note');
  });

  it('what is written reads back the same', () => {
    const step: PendingStep = loadPendingStep(JSON.parse(UNVERSIONED), 't');
    expect(loadPendingStep(JSON.parse(JSON.stringify(step)), 't')).toEqual(step);
  });

  it.each([
    ['null', null],
    ['a string', 'calls'],
    ['an array', []],
    ['no calls', {}],
    ['calls that are not a list', { calls: 'nope' }],
    ['a call without its tool call', { version: 1, calls: [{ outcome: { kind: 'run' } }] }],
    [
      'an unknown gate outcome',
      { calls: [{ toolCall: { id: 'c', name: 'n', toolId: 's:n', arguments: {} }, outcome: { kind: 'maybe' } }] },
    ],
    [
      'a confirm outcome without its elicitation',
      {
        version: 1,
        calls: [{ toolCall: { id: 'c', name: 'n', toolId: 's:n', arguments: {} }, outcome: { kind: 'confirm' } }],
      },
    ],
    [
      'arguments that are not an object',
      { calls: [{ toolCall: { id: 'c', name: 'n', toolId: 's:n', arguments: 3 }, outcome: { kind: 'run' } }] },
    ],
  ])('rejects %s with an error naming the turn', (_what, stored) => {
    expect(() => loadPendingStep(stored, 'trn_bad')).toThrow(StoredStepError);
    expect(() => loadPendingStep(stored, 'trn_bad')).toThrow(/^The stored step of turn trn_bad cannot be read: /);
  });

  it('rejects a version it does not know (a newer release wrote it), saying so', () => {
    expect(() => loadPendingStep({ version: 2, calls: [] }, 'trn_future')).toThrow(
      'The stored step of turn trn_future cannot be read: its format version 2 is not one this server knows (1).',
    );
  });

  it('says where a step is wrong', () => {
    expect(() => loadPendingStep({ version: 1, calls: [{ toolCall: {}, outcome: { kind: 'run' } }] }, 't')).toThrow(
      /calls\[0\]\.toolCall\.id/,
    );
  });
});
