// How a use case says no. A refusal is the caller's mistake (the request changes nothing): a code from the list
// below, the input field at fault in the use case's own words (`field`, and `at` inside it), and what the caller
// needs to be told, as data. The words shown to a person and an API's paths are the entrance's (src/graphql/refusals.ts).

/** Every code a use case refuses with; the GraphQL API's UserErrorCode enum is this list. */
export const REFUSAL_CODES = [
  'NOT_FOUND',
  'EXPIRED',
  'ALREADY_RESOLVED',
  'INVALID_CONTENT',
  'INVALID_INPUT',
  'THREAD_BUSY',
  'FORBIDDEN',
  'IDEMPOTENCY_KEY_REUSED',
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** What a use case returns: `ok: true` with its result, or `ok: false` with one of its refusals. */
export type Outcome<Result extends object, Refusal extends { code: RefusalCode }> =
  ({ ok: true } & Result) | ({ ok: false } & Refusal);

/** What is wrong with a piece of text a user sent (a message, a key): the same three problems everywhere. */
export type TextProblem = { reason: 'EMPTY' } | { reason: 'UNSTORABLE' } | { reason: 'TOO_LONG'; max: number };
