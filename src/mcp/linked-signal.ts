// A request's own abort signal, tied to the signals it depends on only while it is open: the MCP SDK cancels a request
// whenever the signal it was given aborts, even once answered, so what it was given must stop hearing the others when
// its work is done. (Node 20's AbortSignal.any cannot be detached, and may be collected.)

export interface LinkedSignal {
  /** Aborted when one of the outer signals is (or already was), or by `abort()`, until `release()`. */
  signal: AbortSignal;
  abort(): void;
  /** Done: the outer signals no longer reach `signal`. */
  release(): void;
}

export function linkedSignal(outer: readonly (AbortSignal | undefined)[]): LinkedSignal {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const signals = outer.filter((signal): signal is AbortSignal => signal !== undefined);
  for (const signal of signals) {
    signal.addEventListener('abort', abort, { once: true });
    if (signal.aborted) abort();
  }
  return {
    signal: controller.signal,
    abort,
    release: () => {
      for (const signal of signals) signal.removeEventListener('abort', abort);
    },
  };
}
