// Graceful stop of the node:http server: take no new connections, let in-flight requests finish until a
// deadline, then cut what is left.
import type { Server } from 'node:http';

/** Waits for `promise`, but not past `deadline` (epoch ms). True when it settled in time. */
export async function settleBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Stops listening at once; idle keep-alive connections close now, busy ones as soon as their response is
 * sent; at `deadline` every connection still open is closed. Resolves when the server has no connection left.
 */
export async function closeHttpServer(server: Server, deadline: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A keep-alive connection turns idle when its response ends; close it then (Node does not by itself).
  const idleSweep = setInterval(() => server.closeIdleConnections(), 20);
  server.closeIdleConnections();
  try {
    if (!(await settleBy(closed, deadline))) server.closeAllConnections();
    await closed;
  } finally {
    clearInterval(idleSweep);
  }
}
