// Every domain module registers its types and fields on the builder; this file only assembles them. Resolvers are
// thin: the input goes to a use case or a read of src/app/, its outcome becomes the payload (refusals.ts words it).
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
import './passkeys.js';
import { findNode } from '../app/reads.js';
import { NodeRef } from './node.js';

builder.queryField('node', (t) =>
  t.field({
    type: NodeRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => findNode(ctx.services, ctx.viewer, String(args.id)),
  }),
);

export const schema: GraphQLSchema = builder.toSchema();

/** The committed schema.graphql: sorted, so that its diff shows real changes only. */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
