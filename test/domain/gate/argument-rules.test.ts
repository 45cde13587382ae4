// What makes an argument rule unusable (config error at start, INVALID_INPUT from updateAgent), and matching.
import { describe, expect, it } from 'vitest';
import {
  argumentRuleProblems,
  MAX_RULE_REASON_LENGTH,
  MAX_RULES_PER_TOOL,
  ruleMatches,
} from '../../../src/domain/gate/argument-rules.js';
import type { ArgumentRule, JsonObject } from '../../../src/domain/records.js';

const never = (match: unknown): ArgumentRule => ({ match: match as JsonObject, mode: 'NEVER' });

describe('argumentRuleProblems', () => {
  it('accepts usable rules', () => {
    expect(
      argumentRuleProblems([
        never({ properties: { path: { type: 'string', pattern: '^/tmp/' } }, required: ['path'] }),
        { match: {}, mode: 'DENY', reason: 'nothing else' },
        { match: { $defs: { p: { type: 'string' } }, properties: { a: { $ref: '#/$defs/p' } } }, mode: 'ALWAYS' },
        never({ $id: 'https://example.com/a', type: 'object' }),
        never({ $id: 'https://example.com/a', type: 'object', required: ['x'] }),
      ]),
    ).toEqual([]);
  });

  it.each<[string, ArgumentRule, (string | number)[], RegExp]>([
    [
      'a misspelt keyword',
      never({ properties: { path: { patern: '^/tmp/' } } }),
      [0, 'match'],
      /unknown keyword: "patern"/,
    ],
    ['a wrong type name', never({ type: 'strin' }), [0, 'match'], /schema is invalid/],
    [
      'a broken regular expression',
      never({ properties: { a: { pattern: '(' } } }),
      [0, 'match'],
      /Invalid regular expression/,
    ],
    [
      'a format (none is loaded)',
      never({ properties: { a: { format: 'uri' } } }),
      [0, 'match'],
      /unknown format "uri"/,
    ],
    ['a remote $ref', never({ $ref: 'https://example.com/schema.json' }), [0, 'match'], /can't resolve reference/],
    ['an async schema', never({ $async: true, type: 'object' }), [0, 'match'], /\$async/],
    ['a match that is no object', never([1, 2]), [0, 'match'], /a JSON Schema object/],
    ['a match that is true', never(true), [0, 'match'], /a JSON Schema object/],
    ['a DENY without a reason', { match: {}, mode: 'DENY' }, [0, 'reason'], /DENY rule needs a reason/],
    [
      'a DENY with a blank reason',
      { match: {}, mode: 'DENY', reason: '  ' },
      [0, 'reason'],
      /DENY rule needs a reason/,
    ],
    [
      'a reason too long',
      { match: {}, mode: 'NEVER', reason: 'x'.repeat(MAX_RULE_REASON_LENGTH + 1) },
      [0, 'reason'],
      /at most 1000 characters/,
    ],
    ['an unknown mode', { match: {}, mode: 'SOMETIMES' as 'NEVER' }, [0, 'mode'], /one of ALWAYS, NEVER, DENY/],
    ['a NUL character', { match: { const: 'a\u0000b' }, mode: 'NEVER' }, [0], /NUL character/],
  ])('refuses %s, naming where', (_label, rule, path, message) => {
    const problems = argumentRuleProblems([rule]);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toEqual(path);
    expect(problems[0]!.message).toMatch(message);
  });

  it('names the rule by its index in the list', () => {
    const problems = argumentRuleProblems([never({}), never({}), never({ type: 'strin' })]);
    expect(problems.map((p) => p.path)).toEqual([[2, 'match']]);
  });

  it(`refuses more than ${MAX_RULES_PER_TOOL} rules for one tool`, () => {
    const problems = argumentRuleProblems(Array.from({ length: MAX_RULES_PER_TOOL + 1 }, () => never({})));
    expect(problems).toEqual([{ path: [], message: `at most ${MAX_RULES_PER_TOOL} rules per tool (51 given)` }]);
  });
});

describe('ruleMatches', () => {
  it('validates the arguments against the schema, also when the rule is read again as a new object', () => {
    const rule = never({ properties: { path: { pattern: '^/tmp/' } }, required: ['path'] });
    expect(ruleMatches(rule, { path: '/tmp/a' })).toBe(true);
    expect(ruleMatches(rule, { path: '/etc/a' })).toBe(false);
    const reread = structuredClone(rule);
    expect(ruleMatches(reread, { path: '/tmp/b' })).toBe(true);
    expect(ruleMatches(reread, {})).toBe(false);
  });

  it('a schema changed after its first use is matched as it is now, not as it was compiled', () => {
    const first = never({ properties: { n: { maximum: 3 } } });
    expect(ruleMatches(first, { n: 5 })).toBe(false);
    const changed = never({ properties: { n: { maximum: 10 } } });
    expect(ruleMatches(changed, { n: 5 })).toBe(true);
  });

  it('keeps matching right past the cache size (old validators are evicted and compiled again)', () => {
    const rules = Array.from({ length: 1100 }, (_, i) => never({ properties: { n: { const: i } }, required: ['n'] }));
    for (const [i, rule] of rules.entries()) expect(ruleMatches(rule, { n: i })).toBe(true);
    expect(ruleMatches(structuredClone(rules[0]!), { n: 0 })).toBe(true);
    expect(ruleMatches(structuredClone(rules[0]!), { n: 1 })).toBe(false);
  });
});
