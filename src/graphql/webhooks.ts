// The webhook outbox for administrators (docs/webhooks.md): every delivery with its status, attempts and last error.
import { GraphQLError } from 'graphql';
import { listWebhookDeliveries } from '../app/webhook-deliveries.js';
import type { WebhookDeliveryRecord } from '../domain/webhook-events.js';
import { builder } from './builder.js';
import { connection, PageInfoRef } from './node.js';

const WebhookDeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  values: {
    PENDING: { description: 'Not delivered yet: waiting for its first attempt or a retry (see nextAttemptAt).' },
    DELIVERED: { description: 'The endpoint answered 2xx.' },
    FAILED: { description: 'Every attempt failed (maxAttempts of the endpoint); it is not tried again.' },
  },
});

const WebhookDeliveryRef = builder.objectRef<WebhookDeliveryRecord>('WebhookDelivery').implement({
  description: 'One event for one endpoint, as kept in the outbox.',
  fields: (t) => ({
    id: t.exposeID('id', {
      description: 'The webhook-id header: the same on every attempt, for the receiver to deduplicate on.',
    }),
    endpoint: t.exposeString('endpoint', { description: 'The URL it is POSTed to.' }),
    eventType: t.exposeString('eventType', { description: 'e.g. elicitation.requested, turn.completed.' }),
    status: t.field({ type: WebhookDeliveryStatusEnum, resolve: (d) => d.status }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made so far.' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it is tried next; null once DELIVERED or FAILED.',
      resolve: (d) => (d.status === 'PENDING' ? d.nextAttemptAt : null),
    }),
    lastError: t.exposeString('lastError', {
      nullable: true,
      description: 'Why the last attempt failed ("HTTP 500", "connection refused", a timeout); null after a 2xx.',
    }),
    lastStatusCode: t.exposeInt('lastStatusCode', {
      nullable: true,
      description: "The last attempt's HTTP status; null before any attempt or when there was no response.",
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
    finishedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it was DELIVERED or FAILED.',
      resolve: (d) => d.finishedAt,
    }),
    payload: t.field({
      type: 'JSON',
      description: 'The body sent: {type, timestamp, data}.',
      resolve: (d) => d.payload,
    }),
  }),
});

const WebhookDeliveryEdgeRef = builder
  .objectRef<{ cursor: string; node: WebhookDeliveryRecord }>('WebhookDeliveryEdge')
  .implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: WebhookDeliveryRef, resolve: (e) => e.node }),
    }),
  });

type WebhookDeliveryConnection = ReturnType<typeof connection<WebhookDeliveryRecord>> & { totalCount: number };

const WebhookDeliveryConnectionRef = builder
  .objectRef<WebhookDeliveryConnection>('WebhookDeliveryConnection')
  .implement({
    fields: (t) => ({
      edges: t.field({ type: [WebhookDeliveryEdgeRef], resolve: (c) => c.edges }),
      pageInfo: t.field({ type: PageInfoRef, resolve: (c) => c.pageInfo }),
      totalCount: t.exposeInt('totalCount'),
    }),
  });

builder.queryField('webhookDeliveries', (t) =>
  t.field({
    type: WebhookDeliveryConnectionRef,
    nullable: true,
    description:
      'Administrators: the webhook deliveries, oldest first, optionally of one status (FAILED: those given up on). ' +
      'Anyone else gets null and an error with extensions.code FORBIDDEN.',
    args: {
      status: t.arg({ type: WebhookDeliveryStatusEnum }),
      first: t.arg.int({ defaultValue: 50 }),
      after: t.arg.string(),
    },
    resolve: async (_root, args, ctx) => {
      const outcome = await listWebhookDeliveries(ctx.services, ctx.viewer, {
        status: args.status ?? null,
        first: args.first,
        after: args.after,
      });
      // A query has no userErrors: refused like updateAgent (the same code, FORBIDDEN), as a GraphQL error.
      if (!outcome.ok) {
        throw new GraphQLError('Only administrators may list webhook deliveries.', {
          extensions: { code: outcome.code },
        });
      }
      return { ...connection(outcome.page), totalCount: outcome.page.totalCount };
    },
  }),
);
