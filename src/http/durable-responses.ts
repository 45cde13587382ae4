// A mutation's response is sent only once what it wrote survives power loss (store.flush()), over HTTP and
// WebSocket alike. The store commits without an fsync per commit and syncs here, once for all the requests
// waiting at that moment (group commit, src/db/sqlite/wal-sync.ts): "it succeeded" is never taken back by a power cut.
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Lifecycle } from '../domain/store.js';

export function useDurableResponses(store: Pick<Lifecycle, 'flush'>): Plugin {
  return {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return undefined;
      return { onExecuteDone: () => store.flush() };
    },
  };
}
