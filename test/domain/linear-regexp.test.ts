// The regular expression engine every ajv of toolgate uses (src/domain/linear-regexp.ts): patterns mean what
// ECMA-262 with the u flag says, checked against V8 on generated strings; a backtracking pattern is answered at once
// on any input; what cannot be matched in linear time is refused by name; and every keyword with a pattern
// (pattern, patternProperties, propertyNames) goes through it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileLinearPattern, linearPatterns, UnsupportedPatternError } from '../../src/domain/linear-regexp.js';

const ajv = new Ajv2020({ strict: true, addUsedSchema: false, code: linearPatterns() });

/** Where ECMA-262 and RE2 syntax read alike and mean different things, and the common cases. */
const PATTERNS = [
  '^/tmp/',
  '\\.\\.',
  '^(a+)+$',
  '^(a|ab)*$',
  '.',
  '^.+$',
  '\\s',
  '^\\S+$',
  '[^\\S\\n]',
  '[^]',
  '[]',
  '^[^]*$',
  '[[]',
  'a|',
  '^$',
  '\\bab\\b',
  '\\Bb',
  '\\p{Lu}',
  '^\\p{Letter}+$',
  '\\P{L}',
  '[\\p{L}\\d]',
  '\\p{Script=Latin}',
  '\\p{ASCII}',
  '[^\\p{ASCII}]',
  '^\\uD83D\\uDE00',
  '😀$',
  '^[😀-😂]$',
  '(?<y>\\d{2})-\\d',
  'a{2,3}?b',
  '^[^a]$',
  '\\D\\W',
  '[\\w\\s]+$',
  '(?:^|b)a',
  'a(?:$|b)',
  '[\\uD800-\\uDFFF]',
  '[\\s\\S]{3}',
  '\\cJ',
  '\\0',
];
const ALPHABET = ['a', 'b', 'A', ' ', '\n', '\r', '\t', '\v', '\u00a0', '\u2028', '\ufeff', '😀', '😁', '1', '-'];
const text = fc.array(fc.constantFrom(...ALPHABET, 'é', '_', '/', '.', 'Ω', '\uD800', '\uDC00'), { maxLength: 8 });

describe('linear-time patterns', () => {
  it.each(PATTERNS)('%s matches what V8 matches with the u flag', (pattern) => {
    const linear = compileLinearPattern(pattern);
    const native = new RegExp(pattern, 'u');
    fc.assert(
      fc.property(text, (chars) => {
        const input = chars.join('');
        expect(linear.test(input), JSON.stringify(input)).toBe(native.test(input));
      }),
      { numRuns: 500 },
    );
  });

  it('answers ^(a+)+$ on 40 and on 100,000 "a"s and a "!" (V8 would backtrack for hours)', () => {
    const validate = ajv.compile({ type: 'string', pattern: '^(a+)+$' });
    expect(validate('a'.repeat(40))).toBe(true);
    expect(validate(`${'a'.repeat(40)}!`)).toBe(false);
    expect(validate(`${'a'.repeat(100_000)}!`)).toBe(false);
  });

  it.each([
    [
      'a backreference',
      '^(\\w+)-\\1$',
      'the pattern "^(\\w+)-\\1$" uses a backreference, \\1, which cannot be matched in linear time',
    ],
    [
      'a named backreference',
      '(?<w>a)\\k<w>',
      'the pattern "(?<w>a)\\k<w>" uses a backreference, \\k<w>, which cannot be matched in linear time',
    ],
    [
      'a lookahead',
      '^(?!/etc/)',
      'the pattern "^(?!/etc/)" uses a lookahead, (?!/etc/), which cannot be matched in linear time',
    ],
    [
      'a lookbehind',
      '(?<=a)b',
      'the pattern "(?<=a)b" uses a lookbehind, (?<=a), which cannot be matched in linear time',
    ],
    [
      'a repeat count over 1000',
      'a{1001}',
      'the pattern "a{1001}" cannot be matched in linear time: invalid repeat count: `{1001}`',
    ],
    [
      'a property RE2 does not know',
      '\\p{ID_Start}',
      'the pattern "\\p{ID_Start}": the linear-time engine knows no Unicode property \\p{ID_Start}',
    ],
  ])('refuses %s, naming it', (_label, pattern, message) => {
    expect(() => compileLinearPattern(pattern)).toThrow(new UnsupportedPatternError(message));
  });

  it('refuses what ECMA-262 refuses with V8 own message', () => {
    expect(() => compileLinearPattern('(')).toThrow(
      new SyntaxError('Invalid regular expression: /(/u: Unterminated group'),
    );
    // RE2 syntax that is no ECMA-262 is not let through.
    expect(() => compileLinearPattern('\\Aa\\z')).toThrow(SyntaxError);
    expect(() => compileLinearPattern('(?i)a')).toThrow(SyntaxError);
  });

  it.each([
    ['pattern', { type: 'string', pattern: '(?=a)' }],
    ['patternProperties', { type: 'object', patternProperties: { '(?=a)': {} } }],
    ['propertyNames', { type: 'object', propertyNames: { pattern: '(?=a)' } }],
  ])('%s goes through it: ajv refuses an unsupported pattern there', (_keyword, schema) => {
    expect(() => ajv.compile(schema)).toThrow(/uses a lookahead, \(\?=a\), which cannot be matched in linear time/);
  });

  it('patternProperties and propertyNames match keys in linear time too', () => {
    const evil = `${'a'.repeat(40)}!`;
    const keys = ajv.compile({ type: 'object', patternProperties: { '^(a+)+$': { type: 'number' } } });
    expect(keys({ [evil]: 'not checked: the key does not match', aaa: 1 })).toBe(true);
    expect(keys({ aaa: 'x' })).toBe(false);
    const names = ajv.compile({ type: 'object', propertyNames: { pattern: '^(a+)+$' } });
    expect(names({ aaa: 1 })).toBe(true);
    expect(names({ [evil]: 1 })).toBe(false);
  });

  it('two patterns in one schema stay two (ajv keys compiled patterns by their text)', () => {
    const validate = ajv.compile({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^a$' }, b: { type: 'string', pattern: '^b$' } },
    });
    expect(validate({ a: 'a', b: 'b' })).toBe(true);
    expect(validate({ a: 'b', b: 'a' })).toBe(false);
  });
});
