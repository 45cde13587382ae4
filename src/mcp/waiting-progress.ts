// The progress both revisions of /mcp send while a call waits for a person, each through its own SDK.
/** A type, not an interface: the SDKs' notification params take it only with an implicit index signature. */
export type WaitingProgress = { progressToken: string | number; progress: number; message: string };

/**
 * notifications/progress while a call waits for a person, when the client asked for them (they keep its request
 * alive); `send` is the revision's way to notify on the request's own stream. Undefined without a progress token.
 */
export function waitingProgress(
  progressToken: string | number | undefined,
  send: (params: WaitingProgress) => Promise<void>,
): ((waitedMs: number) => void) | undefined {
  if (progressToken === undefined) return undefined;
  let progress = 0;
  return (waitedMs) => {
    // Progress must increase with each notification.
    progress = Math.max(waitedMs, progress + 1);
    const message = `Waiting for confirmation (${Math.round(waitedMs / 1000)} s)`;
    send({ progressToken, progress, message }).catch(() => {});
  };
}
