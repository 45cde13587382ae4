// The notifier deliverer: the outbox's second consumer. It claims the due rows of the notifier channels' endpoints
// under a lease (the webhook deliverer's claim, FOR UPDATE SKIP LOCKED on PostgreSQL), hands each event to its channel
// in the order written, and records the outcome: done, retried with exponential backoff (never sooner than the
// channel's service asked, Slack's Retry-After), FAILED after maxAttempts, or back to the queue uncounted when another
// process holds the card. Requests never wait for any of it.
import type { Lifecycle, WebhookDeliveries } from '../domain/store.js';
import { afterFailedAttempt, type WebhookDeliveryRecord, type WebhookEvent } from '../domain/webhook-events.js';
import type { Logger } from '../observability/logger.js';
import type { NotifierChannel, NotifierResult } from './port.js';

/** How soon an event whose card another process holds is tried again. */
const BUSY_RETRY_MS = 1000;

export interface NotifierDelivererOptions {
  store: Pick<WebhookDeliveries, 'claimWebhookDeliveries' | 'recordWebhookAttempt'> & Pick<Lifecycle, 'flush'>;
  channels: readonly NotifierChannel[];
  owner: string;
  clock: () => Date;
  onError: (error: unknown) => void;
  logger?: Logger;
  /** Milliseconds between polls (retries come due without a commit to announce them). Default 1000. */
  pollIntervalMs?: number;
  /** Rows claimed at a time. Default 10. */
  batchSize?: number;
  random?: () => number;
}

export class NotifierDeliverer {
  readonly #o: NotifierDelivererOptions;
  readonly #channels: Map<string, NotifierChannel>;
  readonly #leaseMs: number;
  readonly #batchSize: number;
  #stopped = false;
  #timer: NodeJS.Timeout | null = null;
  #draining: Promise<void> | null = null;
  #again = false;

  constructor(options: NotifierDelivererOptions) {
    this.#o = options;
    this.#channels = new Map(options.channels.map((channel) => [channel.endpoint, channel]));
    this.#batchSize = options.batchSize ?? 10;
    this.#leaseMs = this.#batchSize * Math.max(0, ...options.channels.map((c) => c.timeoutMs)) + 5_000;
  }

  start(): void {
    if (this.#channels.size === 0 || this.#timer || this.#stopped) return;
    this.#timer = setInterval(() => this.nudge(), this.#o.pollIntervalMs ?? 1000).unref();
    this.nudge();
  }

  nudge(): void {
    if (this.#channels.size === 0 || this.#stopped) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = this.#drain()
      .catch(this.#o.onError)
      .finally(() => {
        this.#draining = null;
        if (this.#again) {
          this.#again = false;
          this.nudge();
        }
      });
  }

  /** Stops polling and ends the channels' calls in flight: their events go back to the queue, due at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    for (const channel of this.#channels.values()) channel.abort?.();
    await this.#draining;
  }

  async #drain(): Promise<void> {
    const endpoints = [...this.#channels.keys()];
    for (;;) {
      if (this.#stopped) return;
      const now = this.#o.clock();
      const claimed = await this.#o.store.claimWebhookDeliveries(
        this.#o.owner,
        endpoints,
        now.toISOString(),
        new Date(now.getTime() + this.#leaseMs).toISOString(),
        this.#batchSize,
      );
      if (claimed.length === 0) return;
      // A card never shows what a power loss could take back (SQLite's WAL fsync covers the change and its row).
      await this.#o.store.flush();
      for (const row of claimed) {
        if (this.#stopped) {
          await this.#o.store.recordWebhookAttempt(
            row.id,
            this.#o.owner,
            { kind: 'released' },
            this.#o.clock().toISOString(),
          );
          continue;
        }
        await this.#deliver(row);
      }
      if (claimed.length < this.#batchSize) return;
    }
  }

  async #deliver(row: WebhookDeliveryRecord): Promise<void> {
    const channel = this.#channels.get(row.endpoint)!;
    let result: NotifierResult;
    try {
      result = await channel.deliver(row.payload as unknown as WebhookEvent);
    } catch (error) {
      this.#o.onError(error);
      result = { kind: 'retry', error: error instanceof Error ? error.message : String(error), statusCode: null };
    }
    const now = this.#o.clock();
    const at = now.toISOString();
    if (this.#stopped && result.kind !== 'done') {
      // Cut short by the stop, not a failure of the channel: not counted, for this or another process.
      await this.#o.store.recordWebhookAttempt(row.id, this.#o.owner, { kind: 'released' }, at);
      return;
    }
    if (result.kind === 'done') {
      await this.#o.store.recordWebhookAttempt(row.id, this.#o.owner, { kind: 'delivered', statusCode: 200 }, at);
      return;
    }
    if (result.kind === 'busy') {
      // Soon, not at once: the other process's call is under way (or its lease lapses after a crash).
      const soon = new Date(now.getTime() + BUSY_RETRY_MS).toISOString();
      const outcome = {
        kind: 'retry',
        at: soon,
        error: 'the card is being written by another process',
        statusCode: null,
      } as const;
      await this.#o.store.recordWebhookAttempt(row.id, this.#o.owner, outcome, at);
      return;
    }
    const attempt = row.attempts + 1;
    const next = afterFailedAttempt(attempt, channel.retry, now, (this.#o.random ?? Math.random)());
    const fields = {
      notifier: channel.name,
      deliveryId: row.id,
      eventType: row.eventType,
      attempt,
      error: result.error,
    };
    if (next.kind === 'failed') {
      this.#o.logger?.error(fields, 'notification failed for good');
      const outcome = { kind: 'failed', error: result.error, statusCode: result.statusCode } as const;
      await this.#o.store.recordWebhookAttempt(row.id, this.#o.owner, outcome, at);
      return;
    }
    // Never sooner than the service asked (Slack's Retry-After); the backoff's own time when that is later.
    const asked = result.afterMs !== undefined ? now.getTime() + result.afterMs : 0;
    const retryAt = new Date(Math.max(Date.parse(next.at), asked)).toISOString();
    this.#o.logger?.warn({ ...fields, retryAt }, 'notification not delivered; retrying');
    const outcome = { kind: 'retry', at: retryAt, error: result.error, statusCode: result.statusCode } as const;
    await this.#o.store.recordWebhookAttempt(row.id, this.#o.owner, outcome, at);
  }
}
