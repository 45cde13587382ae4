// A port held from the start of `toolgate serve` until the server listens on it: a port in use is refused before
// anything is spawned, connected or created (MCP servers, Redis, the database), and nothing takes it meanwhile.
import { createServer } from 'node:net';

export interface ReservedPort {
  /** The port held: the one asked for, or the one the system chose for port 0. */
  readonly port: number;
  /** Lets the port go; the server listens on it right after. */
  release(): Promise<void>;
}

/** Binds host:port; rejects with the error listening would (EADDRINUSE, EACCES, EADDRNOTAVAIL, …). */
export async function reservePort(port: number, host: string): Promise<ReservedPort> {
  // A connection while the server starts is cut at once, rather than left waiting with no answer.
  const holder = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen(port, host, () => {
      holder.off('error', reject);
      resolve();
    });
  });
  // Never what keeps the process alive: a start that fails exits.
  holder.unref();
  const address = holder.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    release: () => new Promise<void>((resolve) => holder.close(() => resolve())),
  };
}
