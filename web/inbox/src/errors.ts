// What the API says, in words a person understands.
import type { CombinedError } from '@urql/core';

export interface UserErrorLike {
  code: string;
  message: string;
}

const WORDS: Record<string, string> = {
  EXPIRED: 'This request has expired: the agent stopped waiting for an answer, and nothing ran.',
  ALREADY_RESOLVED:
    'This request was already answered (perhaps in another tab or by a webhook); the first answer stands.',
  NOT_FOUND: 'This request no longer exists, or it is not yours.',
  THREAD_BUSY: 'The agent is still working in this thread. Wait for its turn to end, then send your message again.',
  FORBIDDEN: 'You are not allowed to do that here.',
};

/** One sentence for a userErrors entry; INVALID_* keep the server's own words, which name the field at fault. */
export function describeUserError(error: UserErrorLike): string {
  const words = WORDS[error.code];
  if (words) return words;
  if (error.code === 'INVALID_CONTENT') return `The server did not accept what you entered: ${error.message}`;
  if (error.code === 'INVALID_INPUT') return `That answer is not possible here: ${error.message}`;
  return error.message;
}

/** A transport or GraphQL error of a whole request. */
export function describeRequestError(error: CombinedError): string {
  const codes = error.graphQLErrors.map((e) => e.extensions?.code);
  if (codes.includes('UNAUTHENTICATED') || error.response?.status === 401)
    return 'The server did not accept your token. Sign out and enter a valid one.';
  if (error.networkError) return 'The server cannot be reached. Check that toolgate is running, then try again.';
  return error.graphQLErrors[0]?.message ?? error.message;
}

export function isUnauthenticated(error: CombinedError | undefined): boolean {
  if (!error) return false;
  return error.response?.status === 401 || error.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');
}
