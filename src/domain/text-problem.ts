// What is wrong with a piece of text a user or client sends (a message, an idempotency key): the same three problems
// everywhere, checked here once, and worded here once as the end of a sentence each entrance writes about the text.
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from './text.js';

export type TextProblem = { reason: 'EMPTY' } | { reason: 'UNSTORABLE' } | { reason: 'TOO_LONG'; max: number };

/** Why a user's text cannot be taken, or null. Its length is in characters as a user counts them (code points). */
export function textProblem(text: string, empty: boolean, max: number): TextProblem | null {
  if (empty) return { reason: 'EMPTY' };
  if (!isStorableText(text)) return { reason: 'UNSTORABLE' };
  // An emoji is one character, not two UTF-16 units; the spread only when the cheap count is over.
  if (text.length > max && [...text].length > max) return { reason: 'TOO_LONG', max };
  return null;
}

/** The problem as the end of a sentence about the text: "The message is empty.", `_meta "…" is empty`. */
export function textProblemWords(problem: TextProblem): string {
  switch (problem.reason) {
    case 'EMPTY':
      return 'is empty';
    case 'UNSTORABLE':
      return UNSTORABLE_TEXT_MESSAGE;
    case 'TOO_LONG':
      return `is longer than ${problem.max} characters`;
  }
}
