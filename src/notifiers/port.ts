// The notifier port (docs/slack.md): a channel that tells people about requests where they already work (Slack today;
// Teams or email would be further channels). A channel consumes outbox rows of its own endpoint name, written by the
// store in the transaction of each change, exactly as webhook deliveries are: the use cases never know channels
// exist. The deliverer (deliverer.ts) claims the rows, hands each event to its channel and records the outcome.
import type { WebhookEvent, WebhookEventType, WebhookRetryPolicy } from '../domain/webhook-events.js';

/** What became of one event at a channel. */
export type NotifierResult =
  | { kind: 'done' }
  /** Try again later: after the backoff, and not before `afterMs` when the service said so (Slack's Retry-After). */
  | { kind: 'retry'; error: string; statusCode: number | null; afterMs?: number }
  /** Another process works on the same card now: tried again in a second. */
  | { kind: 'busy' };

export interface NotifierChannel {
  /** Its name in logs and in its own tables ("slack"). */
  readonly name: string;
  /** The outbox endpoint its rows are written for: never a URL, so no webhook endpoint can take them. */
  readonly endpoint: string;
  /** The events it is told of. */
  readonly events: readonly WebhookEventType[];
  readonly retry: WebhookRetryPolicy;
  /** Longest one delivery may take (the claim is held for the batch's worst case). */
  readonly timeoutMs: number;
  /** Brings what the channel shows up to date with the event's request; idempotent (an event may come twice). */
  deliver(event: WebhookEvent): Promise<NotifierResult>;
  /** The process is stopping: calls in flight end now (their events go back to the queue). */
  abort?(): void;
}
