import { describe, expect, it } from 'vitest';
import { ToolPreExecuteEvent } from '../../../src/domain/gate/listeners.js';
import {
  editAllowed,
  gateDecision,
  requiresConfirmation,
  ToolConfirmationListener,
  UNUSABLE_RULE_REASON,
  type GateDecision,
} from '../../../src/domain/gate/gating.js';
import { CONFIRMATION_SCHEMA, META_TOOL_CALL_KEY } from '../../../src/domain/gate/messages.js';
import type {
  Agent,
  ArgumentRule,
  JsonObject,
  ToolAnnotations,
  ToolConfirmationMode,
} from '../../../src/domain/records.js';
import { agent, tool, toolCall } from '../../support/definitions.js';

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

// ---- argument rules (issue 15) --------------------------------------------------------------------------------

const TMP_ONLY = {
  properties: { path: { type: 'string', pattern: '^/tmp/', not: { pattern: '\\.\\.' } } },
  required: ['path'],
};
const ETC = { properties: { path: { pattern: '^/etc/' } }, required: ['path'] };
const RECURSIVE = { properties: { recursive: { const: true } }, required: ['recursive'] };

describe('gateDecision: argument rules before the matrix', () => {
  const writeFile = tool('write_file');
  const rulesAgent = (rules: ArgumentRule[], changes: Partial<Agent> = {}) =>
    agent({ toolRules: { 's:write_file': rules }, ...changes });

  it('the example of docs/argument-rules.md: runs unasked under /tmp/, asks elsewhere (the tool is unannotated)', () => {
    const a = rulesAgent([{ match: TMP_ONLY, mode: 'NEVER' }]);
    expect(gateDecision(a, writeFile, { path: '/tmp/out.txt' })).toEqual({ action: 'run', ruleIndex: 0 });
    expect(gateDecision(a, writeFile, { path: '/etc/hosts' })).toEqual({
      action: 'ask',
      ruleIndex: null,
      grantable: true,
    });
  });

  // The table of examples of docs/argument-rules.md, row by row.
  it.each<[string, ArgumentRule, JsonObject, GateDecision['action'] | 'no match']>([
    ['/tmp/ file', { match: TMP_ONLY, mode: 'NEVER' }, { path: '/tmp/out.txt' }, 'run'],
    ['/tmp/ with ..', { match: TMP_ONLY, mode: 'NEVER' }, { path: '/tmp/../etc/passwd' }, 'no match'],
    ['/tmp/ as a number', { match: TMP_ONLY, mode: 'NEVER' }, { path: 7 }, 'no match'],
    ['/etc/', { match: ETC, mode: 'DENY', reason: 'system files are off limits' }, { path: '/etc/hosts' }, 'deny'],
    ['/etc/ elsewhere in the path', { match: ETC, mode: 'DENY', reason: 'r' }, { path: '/home/etc/x' }, 'no match'],
    ['recursive: true', { match: RECURSIVE, mode: 'ALWAYS' }, { path: '/data', recursive: true }, 'ask'],
    ['recursive: false', { match: RECURSIVE, mode: 'ALWAYS' }, { path: '/data', recursive: false }, 'no match'],
    ['at most 3 ids', { match: { properties: { ids: { maxItems: 3 } } }, mode: 'NEVER' }, { ids: [1, 2] }, 'run'],
    [
      'more than 3 ids',
      { match: { properties: { ids: { maxItems: 3 } } }, mode: 'NEVER' },
      { ids: [1, 2, 3, 4] },
      'no match',
    ],
    [
      'a property rule without required',
      { match: { properties: { path: { pattern: '^/tmp/' } } }, mode: 'NEVER' },
      {},
      'run',
    ],
    ['{} matches every call', { match: {}, mode: 'DENY', reason: 'not today' }, { anything: [1] }, 'deny'],
  ])('%s', (_label, rule, args, expected) => {
    // Under NEVER for the tool, an unmatched call runs, so "no match" is told apart from every rule's action.
    const a = rulesAgent([rule], { toolConfirmation: { 's:write_file': 'ALWAYS' } });
    const decision = gateDecision(a, writeFile, args);
    if (expected === 'no match') expect(decision).toEqual({ action: 'ask', ruleIndex: null, grantable: false });
    else expect(decision).toMatchObject({ action: expected, ruleIndex: 0 });
  });

  it('the first matching rule decides, in order', () => {
    const a = rulesAgent([
      { match: ETC, mode: 'DENY', reason: 'system files' },
      { match: { required: ['path'] }, mode: 'NEVER' },
      { match: {}, mode: 'ALWAYS' },
    ]);
    expect(gateDecision(a, writeFile, { path: '/etc/x' })).toEqual({
      action: 'deny',
      ruleIndex: 0,
      reason: 'system files',
    });
    expect(gateDecision(a, writeFile, { path: '/home/x' })).toEqual({ action: 'run', ruleIndex: 1 });
    expect(gateDecision(a, writeFile, {})).toEqual({ action: 'ask', ruleIndex: 2, grantable: false });
  });

  it('rules override the mode both ways: NEVER under ALWAYS runs, ALWAYS under NEVER asks', () => {
    const never = rulesAgent([{ match: TMP_ONLY, mode: 'NEVER' }], { toolConfirmation: { 's:write_file': 'ALWAYS' } });
    expect(gateDecision(never, writeFile, { path: '/tmp/a' }).action).toBe('run');
    const always = rulesAgent([{ match: RECURSIVE, mode: 'ALWAYS' }], {
      toolConfirmation: { 's:write_file': 'NEVER' },
    });
    expect(gateDecision(always, writeFile, { recursive: true })).toEqual({
      action: 'ask',
      ruleIndex: 0,
      grantable: false,
    });
    expect(gateDecision(always, writeFile, { recursive: false })).toEqual({ action: 'run', ruleIndex: null });
  });

  it('with the master toggle off a DENY still vetoes, and nothing asks', () => {
    const a = rulesAgent(
      [
        { match: TMP_ONLY, mode: 'NEVER' },
        { match: ETC, mode: 'DENY', reason: 'system files' },
        { match: {}, mode: 'ALWAYS' },
      ],
      { requireToolConfirmation: false },
    );
    expect(gateDecision(a, writeFile, { path: '/etc/x' })).toEqual({
      action: 'deny',
      ruleIndex: 1,
      reason: 'system files',
    });
    expect(gateDecision(a, writeFile, { path: '/tmp/x' })).toEqual({ action: 'run', ruleIndex: 0 });
    expect(gateDecision(a, writeFile, { path: '/home/x' })).toEqual({ action: 'run', ruleIndex: 2 });
  });

  it('a DENY after a matching rule does not apply: order decides with the toggle off too', () => {
    const a = rulesAgent(
      [
        { match: TMP_ONLY, mode: 'NEVER' },
        { match: {}, mode: 'DENY', reason: 'only /tmp/' },
      ],
      { requireToolConfirmation: false },
    );
    expect(gateDecision(a, writeFile, { path: '/tmp/x' }).action).toBe('run');
    expect(gateDecision(a, writeFile, { path: '/x' })).toMatchObject({ action: 'deny', reason: 'only /tmp/' });
  });

  it('grantable: an ask from BY_ANNOTATION may take a remembered approval, one from mode ALWAYS may not', () => {
    expect(gateDecision(agent(), writeFile, {})).toEqual({ action: 'ask', ruleIndex: null, grantable: true });
    expect(gateDecision(agent({ toolConfirmation: { 's:write_file': 'BY_ANNOTATION' } }), writeFile, {})).toEqual({
      action: 'ask',
      ruleIndex: null,
      grantable: true,
    });
    expect(gateDecision(agent({ toolConfirmation: { 's:write_file': 'ALWAYS' } }), writeFile, {})).toEqual({
      action: 'ask',
      ruleIndex: null,
      grantable: false,
    });
  });

  it("another tool's rules do not apply", () => {
    const a = agent({ toolRules: { 's:other': [{ match: {}, mode: 'DENY', reason: 'no' }] } });
    expect(gateDecision(a, writeFile, {}).action).toBe('ask');
    expect(gateDecision(a, tool('other'), {}).action).toBe('deny');
  });

  it('a stored rule that cannot be evaluated vetoes the call (fail closed)', () => {
    const a = rulesAgent([{ match: { properties: { path: { patern: '^/tmp/' } } }, mode: 'NEVER' }]);
    expect(gateDecision(a, writeFile, { path: '/tmp/x' })).toEqual({
      action: 'deny',
      ruleIndex: 0,
      reason: UNUSABLE_RULE_REASON,
    });
  });

  it('the matrix is unchanged without rules: gateDecision agrees with requiresConfirmation everywhere', () => {
    for (const requireToolConfirmation of [false, true])
      for (const mode of modes)
        for (const [, annotations] of annotationCases) {
          const a = agent({ requireToolConfirmation, toolConfirmation: { 's:x': mode } });
          const t = tool('x', annotations);
          expect(gateDecision(a, t, { any: 1 }).action).toBe(requiresConfirmation(a, t) ? 'ask' : 'run');
        }
  });

  it('a rule never changes the arguments it looks at', () => {
    const a = rulesAgent([{ match: { properties: { n: { type: 'integer', default: 5 } } }, mode: 'NEVER' }]);
    const args = { n: '3' };
    gateDecision(a, writeFile, args);
    expect(args).toEqual({ n: '3' });
  });
});

describe('editAllowed', () => {
  it("the tool's own setting, else the agent's", () => {
    expect(editAllowed(agent(), 's:x')).toBe(true);
    expect(editAllowed(agent({ allowEdit: false }), 's:x')).toBe(false);
    expect(editAllowed(agent({ allowEdit: false, toolAllowEdit: { 's:x': true } }), 's:x')).toBe(true);
    expect(editAllowed(agent({ allowEdit: true, toolAllowEdit: { 's:x': false } }), 's:x')).toBe(false);
    expect(editAllowed(agent({ allowEdit: true, toolAllowEdit: { 's:y': false } }), 's:x')).toBe(true);
  });
});

describe('ToolConfirmationListener with argument rules', () => {
  const rulesAgent = agent({
    toolRules: {
      's:x': [
        { match: ETC, mode: 'DENY', reason: 'system files are off limits' },
        { match: TMP_ONLY, mode: 'NEVER' },
      ],
    },
  });
  const event = (args: JsonObject) =>
    new ToolPreExecuteEvent(rulesAgent, 'thr_1', 'trn_1', tool('x'), toolCall('x', args));

  it('a DENY rule vetoes with its reason and asks nothing', () => {
    const e = event({ path: '/etc/hosts' });
    new ToolConfirmationListener().onToolPreExecute(e);
    expect(e.getVetoReason()).toBe('system files are off limits');
    expect(e.getElicitationRequest()).toBeNull();
  });

  it('a DENY rule vetoes even when an earlier listener asked: a veto beats a confirmation request', () => {
    const e = event({ path: '/etc/hosts' });
    e.setElicitationRequest({ message: 'custom', requestedSchema: { type: 'object', properties: {} }, _meta: {} });
    new ToolConfirmationListener().onToolPreExecute(e);
    expect(e.getVetoReason()).toBe('system files are off limits');
  });

  it('a NEVER rule leaves the call alone; no rule matching asks per the matrix', () => {
    const run = event({ path: '/tmp/a' });
    new ToolConfirmationListener().onToolPreExecute(run);
    expect(run.isVetoed()).toBe(false);
    expect(run.getElicitationRequest()).toBeNull();
    const ask = event({ path: '/home/a' });
    new ToolConfirmationListener().onToolPreExecute(ask);
    expect(ask.getElicitationRequest()?._meta[META_TOOL_CALL_KEY]).toMatchObject({ arguments: { path: '/home/a' } });
  });

  it('keeps the veto an earlier listener set', () => {
    const e = event({ path: '/etc/hosts' });
    e.setVeto('plugin says no');
    new ToolConfirmationListener().onToolPreExecute(e);
    expect(e.getVetoReason()).toBe('plugin says no');
  });
});
