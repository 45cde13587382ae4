// Every domain module registers its types and fields on the builder; this file only assembles them.
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './viewer.js';
import './agents.js';
import './threads.js';
import './turns.js';
import './turn-events.js';
import './elicitations.js';
import './visible-text.js';
import './approvals.js';
import './webhooks.js';
import { kindOfId, NodeRef } from './node.js';

builder.queryField('node', (t) =>
  t.field({
    type: NodeRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = String(args.id);
      const { store } = ctx.services;
      switch (kindOfId(id)) {
        case 'Thread':
          return store.getThread(id, ctx.viewer.id);
        case 'Turn':
          return store.getTurn(id, ctx.viewer.id);
        case 'Elicitation':
          return store.getElicitation(id, ctx.viewer.id);
        case 'Agent':
          return store.getAgent(id);
      }
    },
  }),
);

export const schema: GraphQLSchema = builder.toSchema();

/** The committed schema.graphql: sorted, so that its diff shows real changes only. */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
