// A caller that stops waiting for a gateway call: it cancelled its request (notifications/cancelled), its response
// closed, or its session ended. When nothing can bring it back to the call (no idempotency key; a task's call never
// waits on its request), accepting the call later would run a tool whose result nobody receives, and a retry would
// make a second request: the call is withdrawn, through the use case that cancels a waiting call, so that the ledger
// decides (an answer that came first wins; a call let through runs: never both). A call that can come back stays
// pending.
import { cancelGatewayCall } from '../app/cancel-call.js';
import type { AppDeps } from '../app/deps.js';
import type { Viewer } from '../app/viewer.js';
import type { CallerWithdrawal } from '../domain/records.js';

/** The reason src/http/mcp-route.ts gives the cancellation it makes when a client closes its connection. */
export const CLIENT_CLOSED_CONNECTION = 'The client closed the connection';

/**
 * Why the caller stopped waiting, from its request's aborted signal; null when it did not, or when the server is
 * closing: then the instance goes away, not the caller, and the call stays pending for the inbox.
 */
export function withdrawalOf(signal: AbortSignal, serverClosing: boolean): CallerWithdrawal | null {
  if (!signal.aborted || serverClosing) return null;
  // The SDK aborts with the reason of notifications/cancelled, and with none when the session ends.
  return typeof signal.reason === 'string' && signal.reason !== CLIENT_CLOSED_CONNECTION ? 'CANCELLED' : 'DISCONNECTED';
}

export interface WithdrawnCall {
  app: AppDeps;
  viewer: Viewer;
  agentId: string;
  turnId: string;
}

/** Cancels the call on behalf of its caller; a call that moved on (answered, running, stopped) is left as it is. */
export async function withdrawCall(call: WithdrawnCall, reason: CallerWithdrawal): Promise<void> {
  const { app, viewer, agentId, turnId } = call;
  await cancelGatewayCall(app, viewer, { agentId, turnId, withdrawn: reason });
}
