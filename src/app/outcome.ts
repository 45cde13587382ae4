// How a use case says no. A refusal is the caller's mistake (the request changes nothing): a refusal of the domain's
// vocabulary (src/domain/refusals.ts: a code, and what the caller needs to be told as data), with the input field at
// fault in the use case's own words added here (`field`, and `at` inside it). A refusal of the store or the runner
// keeps what they said and gains its field. The words shown to a person and an API's paths are the entrance's
// (src/graphql/refusals.ts, src/mcp/refusals.ts).
import type { RefusalCode } from '../domain/refusals.js';

/** What a use case returns: `ok: true` with its result, or `ok: false` with one of its refusals. */
export type Outcome<Result extends object, Refusal extends { code: RefusalCode }> =
  ({ ok: true } & Result) | ({ ok: false } & Refusal);
