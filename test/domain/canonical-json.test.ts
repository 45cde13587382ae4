import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson } from '../../src/domain/canonical-json.js';

/** The same object with its keys in reverse order, at every depth. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reversedKeys(v)]),
    );
  }
  return value;
}

describe('canonical JSON', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[2,{"c":2,"d":1}]}');
  });

  it('key order never matters', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => sameJson(value, reversedKeys(value))));
  });

  it('different values differ', () => {
    expect(sameJson({ a: 1 }, { a: '1' })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: null })).toBe(false);
  });

  it('null and absent are the same (an answer without content)', () => {
    expect(sameJson(null, undefined)).toBe(true);
  });
});
