import { describe, expect, it } from 'vitest';
import { closeStep } from '../../../src/domain/gate/closing.js';
import type { PendingStep } from '../../../src/domain/records.js';
import { toolCall } from '../../support/definitions.js';

// One call of each gate outcome, in a fixed order.
const step: PendingStep = {
  version: 1,
  calls: [
    { toolCall: toolCall('runs'), outcome: { kind: 'run' } },
    { toolCall: toolCall('vetoed'), outcome: { kind: 'vetoed', reason: 'policy' } },
    {
      toolCall: toolCall('unknown'),
      outcome: { kind: 'rejected', text: 'Execution of unknown failed: no such tool is available to this agent.' },
    },
    { toolCall: toolCall('asked'), outcome: { kind: 'confirm', elicitationId: 'elc_1' } },
    { toolCall: toolCall('declined'), outcome: { kind: 'confirm', elicitationId: 'elc_2' } },
    { toolCall: toolCall('accepted'), outcome: { kind: 'confirm', elicitationId: 'elc_3' } },
  ],
};
const answers = {
  elc_2: { action: 'DECLINE' as const, content: { instructions: 'not now' } },
  elc_3: { action: 'ACCEPT' as const, content: null },
};

describe('closeStep: the TOOL messages of a step that will not run', () => {
  it.each([
    ['cancelled', 'Execution of {name} was cancelled by the user.'],
    ['expired', 'Execution of {name} was not confirmed before the request expired.'],
    ['superseded', 'Execution of {name} was cancelled: the user sent a new message instead.'],
  ] as const)('%s: one message per call, in order, with docs/design.md texts', (reason, template) => {
    const drafts = closeStep(step, reason, answers);
    expect(drafts.map((d) => d.toolCallId)).toEqual(step.calls.map((c) => c.toolCall.id));
    const text = (name: string) => template.replace('{name}', name);
    expect(drafts.map((d) => d.text)).toEqual([
      text('runs'),
      'Execution of vetoed was denied: policy',
      'Execution of unknown failed: no such tool is available to this agent.',
      text('asked'),
      // A call the user already declined keeps the user's decision: the model must learn it was declined.
      'User declined execution of declined: not now',
      // An accepted call never ran: the step closed before it could.
      text('accepted'),
    ]);
  });

  it('without answers every asked call gets the closing text', () => {
    const drafts = closeStep(step, 'cancelled');
    expect(drafts[4]!.text).toBe('Execution of declined was cancelled by the user.');
  });
});
