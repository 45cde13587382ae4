import { describe, expect, it } from 'vitest';
import { isStorableText, toStorableJson, toStorableText } from '../../src/domain/text.js';

describe('storable text', () => {
  it('takes any Unicode text, emoji (paired surrogates) included', () => {
    expect(isStorableText('héllo 👋 世界\n\t')).toBe(true);
    expect(toStorableText('👋')).toBe('👋');
  });

  it.each([
    ['a NUL character', 'a\u0000b', 'a\uFFFDb'],
    ['a lone high surrogate', 'a\uD83D', 'a\uFFFD'],
    ['a lone low surrogate', '\uDC4Bb', '\uFFFDb'],
    ['two high surrogates', '\uD83D\uD83D\uDC4B', '\uFFFD👋'],
  ])('refuses %s and replaces it with U+FFFD', (_label, text, storable) => {
    expect(isStorableText(text)).toBe(false);
    expect(toStorableText(text)).toBe(storable);
    expect(isStorableText(toStorableText(text))).toBe(true);
  });

  it('makes every string of a JSON value storable, keys included, and keeps the rest', () => {
    expect(toStorableJson({ 'k\u0000': ['x\uD800', 1, null, true], n: { s: 'ok' } })).toEqual({
      'k\uFFFD': ['x\uFFFD', 1, null, true],
      n: { s: 'ok' },
    });
  });

  it('returns a storable value itself, and copies only what it changes, leaving the given value as it was', () => {
    const storable = { a: ['x', { b: 'y' }], c: 1 };
    expect(toStorableJson(storable)).toBe(storable);
    const nested = { ok: { s: 'fine' }, bad: ['a', 'b\u0000'] };
    const result = toStorableJson(nested);
    expect(result).toEqual({ ok: { s: 'fine' }, bad: ['a', 'b\uFFFD'] });
    expect(result.ok).toBe(nested.ok);
    expect(nested.bad[1]).toBe('b\u0000');
    const withProto = JSON.parse('{"__proto__": "x\\u0000", "k": 1}') as object;
    expect(Object.keys(toStorableJson(withProto))).toEqual(['__proto__', 'k']);
  });
});
