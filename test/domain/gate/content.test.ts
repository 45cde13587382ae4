import { describe, expect, it } from 'vitest';
import { validateContent } from '../../../src/domain/gate/content.js';
import { CONFIRMATION_SCHEMA } from '../../../src/domain/gate/messages.js';

const MAX = 1000;
const check = (action: 'ACCEPT' | 'DECLINE' | 'CANCEL', content: unknown, schema = CONFIRMATION_SCHEMA) =>
  validateContent(schema, action, content, MAX);

describe('validateContent against the confirmation schema', () => {
  it.each([null, undefined, {}, { instructions: 'only the drafts' }, { instructions: '' }])('accepts %j', (content) => {
    expect(check('ACCEPT', content)).toBeNull();
    expect(check('DECLINE', content)).toBeNull();
  });

  it('CANCEL takes no content but accepts none', () => {
    expect(check('CANCEL', null)).toBeNull();
    expect(check('CANCEL', { instructions: 'x' })).toEqual({ path: [], message: 'CANCEL takes no content.' });
    expect(check('CANCEL', {})?.path).toEqual([]);
  });

  it('names an unknown property', () => {
    expect(check('ACCEPT', { instructions: 'x', force: true })?.path).toEqual(['force']);
  });

  it('names a property of the wrong type', () => {
    const problem = check('ACCEPT', { instructions: 42 });
    expect(problem?.path).toEqual(['instructions']);
    expect(problem?.message).toMatch(/string/);
  });

  it.each([
    ['a string', 'yes'],
    ['an array', ['x']],
    ['a number', 3],
    ['a boolean', true],
  ])('refuses %s as a whole', (_label, content) => {
    expect(check('ACCEPT', content)).toEqual({ path: [], message: 'content must be an object.' });
  });

  it('refuses content larger than the limit', () => {
    expect(check('ACCEPT', { instructions: 'x'.repeat(MAX) })?.message).toMatch(/larger than 1000 bytes/);
  });
});

describe('validateContent against other restricted schemas', () => {
  const schema = {
    type: 'object',
    properties: {
      reason: { type: 'string', minLength: 2, maxLength: 5, enum: ['ok', 'fine'] },
      count: { type: 'integer', minimum: 1, maximum: 3 },
      ratio: { type: 'number' },
      sure: { type: 'boolean' },
    },
    required: ['sure'],
  };
  it.each([
    [{ sure: true, reason: 'ok', count: 2, ratio: 0.5 }, null],
    [{ reason: 'ok' }, ['sure']],
    [{ sure: 'yes' }, ['sure']],
    [{ sure: true, reason: 'x' }, ['reason']],
    [{ sure: true, reason: 'toolong' }, ['reason']],
    [{ sure: true, reason: 'nope' }, ['reason']],
    [{ sure: true, count: 1.5 }, ['count']],
    [{ sure: true, count: 4 }, ['count']],
    [{ sure: true, count: 0 }, ['count']],
    [{ sure: true, ratio: 'x' }, ['ratio']],
  ])('%j → %j', (content, path) => {
    expect(validateContent(schema, 'ACCEPT', content, MAX)?.path ?? null).toEqual(path);
  });
});
