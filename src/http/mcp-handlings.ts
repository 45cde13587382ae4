// The MCP requests' handling still under way. A request the client or the closing server aborts is answered at once,
// while its handling may still read the store for a moment: whoever closes the store waits for it first.
import { settleBy } from './shutdown.js';

export interface Handlings {
  /** Given each request's handling as it starts; forgotten once it ends. */
  track(handling: Promise<unknown>): void;
  /** Resolves once every handling under way now has ended, or at `deadline` (epoch ms), whichever comes first. */
  settled(deadline: number): Promise<void>;
}

export function createHandlings(): Handlings {
  const underWay = new Set<Promise<unknown>>();
  return {
    track(handling) {
      underWay.add(handling);
      const ended = () => void underWay.delete(handling);
      handling.then(ended, ended);
    },
    async settled(deadline) {
      await settleBy(Promise.allSettled([...underWay]), deadline);
    },
  };
}
