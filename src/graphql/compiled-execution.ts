// Queries and mutations that clients send again and again (a poll, the same mutation with new variables) run
// compiled: graphql-jit turns the document into plain JavaScript once, and each run after that allocates half as
// much and takes ~25 % less CPU than the executor (a page of 20 pending requests, docs/bench.md). A document is
// compiled on its `after`-th run, not its first: compiling costs ~1.5 ms for a typical operation and ~14 ms for one
// near the armor limits, so a client sending a stream of new documents would otherwise make the server compile each
// one for a single run. Variables that do not fit the operation are refused by the executor, as on the first runs
// (graphql-jit's errors for them have no locations). Subscription events keep the executor (useSharedEventExecution
// runs each once anyway).
import { useGraphQlJit } from '@envelop/graphql-jit';
import { getOperationAST, getVariableValues, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export function useCompiledExecution(options: { after: number }): Plugin {
  // Yoga parses each distinct query string once (its document cache), so the same text is the same document object.
  const runs = new WeakMap<DocumentNode, number>();
  const jit = useGraphQlJit({}, {
    enableIf: ({ schema, document, operationName, variableValues }) => {
      const count = (runs.get(document) ?? 0) + 1;
      runs.set(document, count);
      if (count < options.after) return false;
      const operation = getOperationAST(document, operationName);
      return !operation || !('errors' in getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 1 }));
    },
  });
  return { onExecute: jit.onExecute };
}
