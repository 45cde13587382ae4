// Whether the MCP client that made a gateway call still waits for it, kept on the call's pending requests so that
// every instance reads the same: a waiting request marks them "waited for until now + lease" and renews that while it
// waits, and marks them "until now" when it stops. An instance killed mid-wait marks nothing more, and its mark lapses
// with the lease. A request never marked reads as unknown: its call was just made (the mark follows the pause), or it
// is a task's, whose client polls.
import type { AppDeps } from './deps.js';
import type { Viewer } from './viewer.js';

/** How long one mark holds; it is renewed at half of it, so a caller that vanished reads as gone within this. */
export const CALLER_WAITING_LEASE_MS = 30_000;

export interface CallerPresence {
  /**
   * The caller stopped waiting: the mark ends now (a request answered meanwhile is left as it is). `clear: false`
   * (the server is closing, its store with it): renewals stop, and the mark lapses.
   */
  stop(options?: { clear?: boolean }): Promise<void>;
}

/** Marks the viewer's call `turnId` as waited for until `stop()`. */
export function markCallerWaiting(
  app: AppDeps,
  viewer: Viewer,
  turnId: string,
  options: { onError: (error: unknown) => void; leaseMs?: number },
): CallerPresence {
  const leaseMs = options.leaseMs ?? CALLER_WAITING_LEASE_MS;
  const mark = (until: string) => app.store.markCallerWaiting(turnId, viewer.id, until);
  const renew = () => mark(new Date(app.clock().getTime() + leaseMs).toISOString()).catch(options.onError);
  let renewed = renew();
  const timer = setInterval(() => (renewed = renew()), leaseMs / 2);
  // Waiting never keeps the process alive.
  timer.unref();
  return {
    async stop({ clear = true } = {}) {
      clearInterval(timer);
      if (!clear) return;
      // After the last renewal, so that it cannot mark the call again once ended.
      await renewed;
      await mark(app.clock().toISOString()).catch(options.onError);
    },
  };
}

/**
 * Whether a pending request's caller waits for it at `now`: null for a request that is not a gateway call's, no longer
 * pending, or never marked.
 */
export function callerConnected(
  elicitation: { callerWaitingUntil: string | null },
  pendingGatewayCall: boolean,
  now: Date,
): boolean | null {
  if (!pendingGatewayCall) return null;
  const until = elicitation.callerWaitingUntil;
  return until === null ? null : Date.parse(until) > now.getTime();
}
