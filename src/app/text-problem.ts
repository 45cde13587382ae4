// The one check of a piece of text a user or client sends (a message, a key): the same three problems everywhere.
import { isStorableText } from '../domain/text.js';
import type { TextProblem } from './outcome.js';

/** Why a user's text cannot be taken, or null. Its length is in characters as a user counts them (code points). */
export function textProblem(text: string, empty: boolean, max: number): TextProblem | null {
  if (empty) return { reason: 'EMPTY' };
  if (!isStorableText(text)) return { reason: 'UNSTORABLE' };
  // An emoji is one character, not two UTF-16 units; the spread only when the cheap count is over.
  if (text.length > max && [...text].length > max) return { reason: 'TOO_LONG', max };
  return null;
}
