import { describe, expect, it } from 'vitest';
import { ToolPreExecuteEvent } from '../../src/agent/event.js';
import { requiresConfirmation, ToolConfirmationListener } from '../../src/agent/gating.js';
import { CONFIRMATION_SCHEMA, META_TOOL_CALL_KEY } from '../../src/agent/messages.js';
import type { ToolAnnotations, ToolConfirmationMode } from '../../src/domain/records.js';
import { agent, tool, toolCall } from '../support/definitions.js';

const annotationCases: [string, ToolAnnotations][] = [
  ['readOnlyHint true', { readOnlyHint: true }],
  ['readOnlyHint false', { readOnlyHint: false }],
  ['unannotated', {}],
];
const modes: ToolConfirmationMode[] = ['ALWAYS', 'NEVER', 'BY_ANNOTATION'];

/** docs/design.md's gating table, written out independently of the code under test. */
function expected(agentOn: boolean, mode: ToolConfirmationMode, annotations: ToolAnnotations): boolean {
  if (!agentOn) return false;
  if (mode === 'ALWAYS') return true;
  if (mode === 'NEVER') return false;
  return annotations.readOnlyHint !== true;
}

describe('requiresConfirmation: the gating matrix', () => {
  for (const agentOn of [false, true]) {
    for (const mode of modes) {
      for (const [label, annotations] of annotationCases) {
        it(`agent ${agentOn ? 'on' : 'off'} × ${mode} × ${label} → ${expected(agentOn, mode, annotations) ? 'asks' : 'runs'}`, () => {
          const a = agent({ requireToolConfirmation: agentOn, toolConfirmation: { 's:x': mode } });
          expect(requiresConfirmation(a, tool('x', annotations))).toBe(expected(agentOn, mode, annotations));
        });
      }
    }
  }

  it('a tool without an override is BY_ANNOTATION; an override of another tool does not apply', () => {
    const a = agent({ toolConfirmation: { 's:other': 'NEVER' } });
    expect(requiresConfirmation(a, tool('x'))).toBe(true);
    expect(requiresConfirmation(a, tool('x', { readOnlyHint: true }))).toBe(false);
  });

  it('destructiveHint false alone does not make a tool read-only', () => {
    expect(requiresConfirmation(agent(), tool('x', { destructiveHint: false }))).toBe(true);
  });
});

describe('ToolConfirmationListener', () => {
  const event = (annotations: ToolAnnotations, args = {}) =>
    new ToolPreExecuteEvent(agent(), 'thr_1', 'trn_1', tool('x', annotations), toolCall('x', args));

  it('runs at priority 0', () => {
    expect(new ToolConfirmationListener().priority).toBe(0);
  });

  it('sets an MCP-shaped request carrying the call in _meta when the matrix says so', () => {
    const e = event({ destructiveHint: true }, { ids: [1, 2] });
    new ToolConfirmationListener().onToolPreExecute(e);
    const request = e.getElicitationRequest();
    expect(request?.requestedSchema).toEqual(CONFIRMATION_SCHEMA);
    expect(request?._meta[META_TOOL_CALL_KEY]).toEqual({
      name: 'x',
      toolId: 's:x',
      arguments: { ids: [1, 2] },
      annotations: { destructiveHint: true },
    });
    expect(e.isVetoed()).toBe(false);
  });

  it('leaves a read-only call alone', () => {
    const e = event({ readOnlyHint: true });
    new ToolConfirmationListener().onToolPreExecute(e);
    expect(e.getElicitationRequest()).toBeNull();
  });

  it('does not ask for a call already vetoed', () => {
    const e = event({});
    e.setVeto('no');
    new ToolConfirmationListener().onToolPreExecute(e);
    expect(e.getElicitationRequest()).toBeNull();
  });

  it('keeps a request another listener set before it', () => {
    const e = event({});
    const custom = { message: 'custom', requestedSchema: { type: 'object', properties: {} }, _meta: {} };
    e.setElicitationRequest(custom);
    new ToolConfirmationListener().onToolPreExecute(e);
    expect(e.getElicitationRequest()).toBe(custom);
  });
});
