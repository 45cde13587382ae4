// Waiting on what a test does not control: a condition that comes true in its own time (another process, a socket,
// Redis), polled, and whether a process is still there.

/**
 * Polls `probe` until it gives something other than undefined or false, and returns that; after `ms`, fails naming
 * `what` (and `detail()`, to show what there was instead).
 */
export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  ms = 10_000,
  detail?: () => string,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${detail ? `: ${detail()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Whether process `pid` still runs (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
