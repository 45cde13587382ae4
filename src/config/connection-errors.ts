// Why a service named in the config (PostgreSQL, Redis) could not be reached at start, in words for the one-line
// start error: the socket-level causes every client reports the same way, by Node's error code.

/** The socket-level cause, or null when the error is the service's own (its caller words those). */
export function socketFailure(error: unknown): string | null {
  const code = codeOf(error);
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ETIMEDOUT') return 'connection timed out';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (code === 'ECONNRESET') return 'connection reset';
  return null;
}

/** The first line of an error's message: a service's own words, which name no secret. */
export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

/**
 * Why the server could not listen on HOST:PORT, as the one-line start error naming the variable at fault; null for
 * anything else (a fault of ours, reported with its stack).
 */
export function listenFailure(error: unknown, host: string, port: number): string | null {
  const code = codeOf(error);
  if (code === 'EADDRINUSE') return `PORT: ${port} is already in use on ${host}`;
  if (code === 'EACCES') return `PORT: listening on ${host}:${port} is not permitted to this process (EACCES)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `HOST: "${host}" is not a known host name`;
  if (code === 'EADDRNOTAVAIL') return `HOST: "${host}" is not an address of this machine`;
  return null;
}

/** Node's error code (`ECONNREFUSED`, `EADDRINUSE`, …) of an error, if it has one. */
function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}
