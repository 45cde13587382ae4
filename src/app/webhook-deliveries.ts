// The webhook outbox (docs/webhooks.md), for administrators: every delivery with its status, attempts and last error.
import type { Page } from '../domain/records.js';
import {
  receiptTurnIds,
  withReceipt,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
} from '../domain/webhook-events.js';
import type { AppDeps } from './deps.js';
import { type Outcome } from './outcome.js';
import { pageSize, type PageRequest } from './reads.js';
import type { Viewer } from './viewer.js';

export type ListWebhookDeliveriesRefusal = { code: 'FORBIDDEN'; reason: 'ADMIN_ONLY' };

/** Oldest first, optionally of one status. 50 by default, at most 200. */
export async function listWebhookDeliveries(
  app: AppDeps,
  viewer: Viewer,
  request: PageRequest & { status: WebhookDeliveryStatus | null },
): Promise<Outcome<{ page: Page<WebhookDeliveryRecord> & { totalCount: number } }, ListWebhookDeliveriesRefusal>> {
  if (!viewer.isAdmin) return { ok: false, code: 'FORBIDDEN', reason: 'ADMIN_ONLY' };
  const page = await app.store.listWebhookDeliveries(
    { status: request.status },
    pageSize(request.first, 50, 200),
    request.after ?? null,
  );
  // Each payload as the deliverer sends it: with the receipt of its request's outcome.
  const records = await app.store.listDecisionsOfTurns(receiptTurnIds(page.items));
  return { ok: true, page: { ...page, items: page.items.map((delivery) => withReceipt(delivery, records)) } };
}
