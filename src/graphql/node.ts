import { builder } from './builder.js';

export const ID_PREFIX = { Thread: 'thr_', Turn: 'trn_', Elicitation: 'elc_' } as const;

/** Ids carry their kind as a prefix (thr_, trn_, elc_); anything else is an agent id. */
export function kindOfId(id: string): 'Thread' | 'Turn' | 'Elicitation' | 'Agent' {
  for (const [kind, prefix] of Object.entries(ID_PREFIX))
    if (id.startsWith(prefix)) return kind as keyof typeof ID_PREFIX;
  return 'Agent';
}

export const NodeRef = builder.interfaceRef<{ id: string }>('Node').implement({
  resolveType: (value) => kindOfId(value.id),
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

/** `first` within 0..max; a caller asking for more gets max. */
export function clampFirst(first: number | null | undefined, fallback: number, max: number): number {
  if (first === null || first === undefined) return fallback;
  return Math.max(0, Math.min(first, max));
}
