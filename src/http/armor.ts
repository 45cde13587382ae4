// Limits on what one GraphQL operation may ask for, as envelop plugins (they run for HTTP, SSE and WebSocket
// alike): graphql-armor's depth, alias, token, directive and cost limits, and introspection off by config.
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Tuned on the contract: its deepest legitimate selection, e.g.
 * `threads { edges { node { turns { pendingElicitations { toolCall { annotations { readOnlyHint } } } } } } }`,
 * is 8 levels; the cost of a full page of the largest connection (`pendingElicitations(first: 200)` with every
 * field of an elicitation) is about 40,000 in armor's units (objects 2, scalars 1, x1.5 per level, x`first`).
 * Anything past these is not a client, it is an attack on the database: every level of Thread.turns /
 * Turn.thread / Elicitation.turn is another round of queries.
 */
export const ARMOR_LIMITS = {
  maxDepth: 10,
  maxAliases: 15,
  maxDirectives: 20,
  maxTokens: 2_000,
  maxCost: 60_000,
} as const;

export interface ArmorOptions {
  /** Answer __schema / __type; off, GraphQL's own NoSchemaIntrospectionCustomRule refuses them. */
  introspection: boolean;
}

export function armorPlugins(options: ArmorOptions): Plugin[] {
  const plugins: Plugin[] = [
    EnvelopArmorPlugin({
      maxDepth: { n: ARMOR_LIMITS.maxDepth },
      maxAliases: { n: ARMOR_LIMITS.maxAliases },
      maxDirectives: { n: ARMOR_LIMITS.maxDirectives },
      maxTokens: { n: ARMOR_LIMITS.maxTokens },
      costLimit: { maxCost: ARMOR_LIMITS.maxCost },
      // "Did you mean ...?" would spell out a schema that introspection keeps private.
      blockFieldSuggestion: { enabled: !options.introspection },
    }) as Plugin,
  ];
  if (!options.introspection) {
    plugins.push({ onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) });
  }
  return plugins;
}
