// What an upstream MCP server sends about one call while it runs (progress, log messages) and asks during it
// (elicitation/create, sampling/createMessage), on its way to the gateway client that made the call. The client's
// request names its relay here (relayingCalls), and the call's turn is bound to it once known, so that the tool's
// run finds it in this process wherever it starts: at once, or after an answer from the inbox while the client waits.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { JsonObject } from '../domain/records.js';

export interface CallRelay {
  /** The upstream's progress; absent when the client asked for none, or the call reports its own wait. */
  progress?(params: { progress: number; total?: number; message?: string }): void;
  log(params: JsonObject): void;
  /** elicitation/create, asked of the client; absent when it cannot elicit. */
  elicit?(params: JsonObject): Promise<JsonObject>;
  /** sampling/createMessage, asked of the client; absent when it offers no sampling. */
  sample?(params: JsonObject): Promise<JsonObject>;
}

interface PendingCall {
  relay: CallRelay;
  turnId: string | null;
  /** The call waited for a person, with the gateway's own progress: the upstream's would not follow on from it. */
  waited: boolean;
}

const requests = new AsyncLocalStorage<PendingCall>();
const byTurn = new Map<string, PendingCall>();

/** Runs a client's tools/call with its relay; the relay ends with the request. */
export function relayingCalls<T>(relay: CallRelay, run: () => Promise<T>): Promise<T> {
  const pending: PendingCall = { relay, turnId: null, waited: false };
  return requests.run(pending, run).finally(() => {
    if (pending.turnId !== null && byTurn.get(pending.turnId) === pending) byTurn.delete(pending.turnId);
  });
}

/**
 * Binds the current request's relay to its call's turn, once (a request makes one call), when the request waits for
 * the call's result; `paused`: it waits for a person first, reporting its own progress meanwhile.
 */
export function waitingCallRelay(turnId: string, { paused }: { paused: boolean }): void {
  const pending = bind(turnId);
  if (pending && paused) pending.waited = true;
}

function bind(turnId: string): PendingCall | null {
  const pending = requests.getStore();
  if (!pending || (pending.turnId !== null && pending.turnId !== turnId)) return null;
  pending.turnId = turnId;
  byTurn.set(turnId, pending);
  return pending;
}

/** The relay of the call whose turn this is; null when no client of this process waits for it. */
export function callRelayOf(turnId: string): CallRelay | null {
  // Else the call runs within its request, before the request learned its turn.
  const pending = byTurn.get(turnId) ?? bind(turnId);
  if (!pending) return null;
  return pending.waited ? { ...pending.relay, progress: undefined } : pending.relay;
}
