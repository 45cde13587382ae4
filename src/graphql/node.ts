import { nodeKind, type NodeKind } from '../app/reads.js';
import type { Page } from '../domain/records.js';
import { builder } from './builder.js';

const NODE_TYPES: Record<NodeKind, string> = {
  thread: 'Thread',
  turn: 'Turn',
  elicitation: 'Elicitation',
  agent: 'Agent',
};

export const NodeRef = builder.interfaceRef<{ id: string }>('Node').implement({
  resolveType: (value) => NODE_TYPES[nodeKind(value.id)],
  fields: (t) => ({ id: t.exposeID('id') }),
});

export const PageInfoRef = builder.objectRef<{ hasNextPage: boolean; endCursor: string | null }>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

/**
 * An optional ID argument as the stores take it: null when not given. An empty string is an id like any other (one
 * that nothing has: a filter by it matches nothing, a thread by it is NOT_FOUND), never taken for "not given".
 */
export function optionalId(id: string | number | null | undefined): string | null {
  return id === null || id === undefined ? null : String(id);
}

/** A Relay connection from a store page: each edge's cursor is its own position. */
export function connection<T>(page: Page<T>) {
  return {
    edges: page.items.map((node, i) => ({ cursor: page.cursors[i]!, node })),
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.endCursor },
  };
}
