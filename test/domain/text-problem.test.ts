// A user's text (a message, an idempotency key): its three problems, checked and worded once for every entrance.
import { describe, expect, it } from 'vitest';
import { idempotencyKeyProblem, MAX_IDEMPOTENCY_KEY_LENGTH } from '../../src/domain/idempotency.js';
import { textProblem, textProblemWords } from '../../src/domain/text-problem.js';

describe('textProblem and its words', () => {
  it.each([
    ['empty', textProblem('', true, 5), 'is empty'],
    [
      'unstorable',
      textProblem('a\u0000b', false, 5),
      'contains a NUL character or an unpaired UTF-16 surrogate, which is not text',
    ],
    ['too long', textProblem('abcdef', false, 5), 'is longer than 5 characters'],
  ])('%s', (_what, problem, words) => {
    expect(textProblemWords(problem!)).toBe(words);
  });

  it('counts characters as a user does: five emoji are five characters', () => {
    expect(textProblem('😀'.repeat(5), false, 5)).toBeNull();
    expect(textProblem('😀'.repeat(6), false, 5)).toEqual({ reason: 'TOO_LONG', max: 5 });
  });
});

describe('idempotencyKeyProblem: a key is a name, any non-empty storable one up to the limit', () => {
  it.each([
    ['', { reason: 'EMPTY' }],
    [' ', null],
    ['\uD800', { reason: 'UNSTORABLE' }],
    ['k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH), null],
    ['k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1), { reason: 'TOO_LONG', max: MAX_IDEMPOTENCY_KEY_LENGTH }],
  ])('%j', (key, problem) => {
    expect(idempotencyKeyProblem(key)).toEqual(problem);
  });
});
