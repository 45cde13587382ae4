// The background webhook deliverer (docs/webhooks.md): claims due deliveries from the outbox under a lease, puts in each
// elicitation event the signed decision record of its outcome (docs/receipts.md), signs each per Standard Webhooks (the
// `standardwebhooks` package), POSTs it with a per-attempt timeout and records the outcome: 2xx delivered, anything
// else retried with exponential backoff until the endpoint's maxAttempts, then FAILED. It runs beside the requests and
// never in their way: a change only writes its outbox rows; sending happens here, later.
import { Webhook } from 'standardwebhooks';
import type { WebhookEndpoint } from '../config/webhooks.js';
import type { Lifecycle, Reads, WebhookDeliveries } from '../domain/store.js';
import {
  afterFailedAttempt,
  receiptTurnIds,
  withReceipt,
  type WebhookDeliveryRecord,
} from '../domain/webhook-events.js';
import type { Logger } from '../observability/logger.js';

export interface WebhookDelivererOptions {
  store: Pick<WebhookDeliveries, 'claimWebhookDeliveries' | 'recordWebhookAttempt'> &
    Pick<Lifecycle, 'flush'> &
    Pick<Reads, 'listDecisionsOfTurns'>;
  endpoints: readonly WebhookEndpoint[];
  /** This process, as it claims deliveries ("host:pid:nonce", the runner's lease owner). */
  owner: string;
  clock: () => Date;
  onError: (error: unknown) => void;
  logger?: Logger;
  /** Milliseconds between polls for due deliveries (retries come due without a commit to announce them). Default 1000. */
  pollIntervalMs?: number;
  /** Deliveries claimed at a time. Default 10. */
  batchSize?: number;
  /** Endpoints sent to at the same time (each endpoint's deliveries go one after the other). Default 4. */
  concurrency?: number;
}

/** What one POST came to. */
type AttemptResult =
  { delivered: true; statusCode: number } | { delivered: false; error: string; statusCode: number | null };

export class WebhookDeliverer {
  readonly #store: WebhookDelivererOptions['store'];
  readonly #endpoints: Map<string, { endpoint: WebhookEndpoint; signer: Webhook }>;
  readonly #owner: string;
  readonly #clock: () => Date;
  readonly #onError: (error: unknown) => void;
  readonly #logger: Logger | undefined;
  readonly #pollIntervalMs: number;
  readonly #batchSize: number;
  readonly #concurrency: number;
  /** How long a claim holds: long enough for a batch whose every attempt times out, one after the other. */
  readonly #leaseMs: number;
  /** Aborted by stop(): the attempts in flight end, and their deliveries go back to the queue. */
  readonly #stopping = new AbortController();
  #timer: NodeJS.Timeout | null = null;
  #draining: Promise<void> | null = null;
  #again = false;

  constructor(options: WebhookDelivererOptions) {
    this.#store = options.store;
    this.#endpoints = new Map(
      options.endpoints.map((endpoint) => [endpoint.url, { endpoint, signer: new Webhook(endpoint.secret) }]),
    );
    this.#owner = options.owner;
    this.#clock = options.clock;
    this.#onError = options.onError;
    this.#logger = options.logger;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#batchSize = options.batchSize ?? 10;
    this.#concurrency = options.concurrency ?? 4;
    const longest = Math.max(0, ...options.endpoints.map((e) => e.timeoutMs));
    this.#leaseMs = this.#batchSize * longest + 5_000;
  }

  /** Polls from now on (nothing to do without endpoints). */
  start(): void {
    if (this.#endpoints.size === 0 || this.#timer || this.#stopping.signal.aborted) return;
    this.#timer = setInterval(() => this.nudge(), this.#pollIntervalMs).unref();
    this.nudge();
  }

  /** Look for due deliveries now (after a commit that wrote some); a pass under way runs once more after it ends. */
  nudge(): void {
    if (this.#endpoints.size === 0 || this.#stopping.signal.aborted) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = this.#drain()
      .catch(this.#onError)
      .finally(() => {
        this.#draining = null;
        if (this.#again) {
          this.#again = false;
          this.nudge();
        }
      });
  }

  /**
   * Stops polling and ends the attempts in flight: their deliveries go back to the queue, due at once, for this or
   * another process to send (at least once: a receiver may have got one whose response was cut off).
   */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#stopping.abort();
    await this.#draining;
  }

  /** Claims and sends batches until none is full. */
  async #drain(): Promise<void> {
    const urls = [...this.#endpoints.keys()];
    for (;;) {
      if (this.#stopping.signal.aborted) return;
      const now = this.#clock();
      const claimed = await this.#store.claimWebhookDeliveries(
        this.#owner,
        urls,
        now.toISOString(),
        new Date(now.getTime() + this.#leaseMs).toISOString(),
        this.#batchSize,
      );
      if (claimed.length === 0) return;
      // What a delivery reports must survive power loss before a receiver acts on it, as for a mutation's response.
      await this.#store.flush();
      // The receipts the bodies carry: committed with the rows just claimed (one transaction wrote both).
      const records = await this.#store.listDecisionsOfTurns(receiptTurnIds(claimed));
      await this.#sendAll(claimed.map((delivery) => withReceipt(delivery, records)));
      if (claimed.length < this.#batchSize) return;
    }
  }

  /** Each endpoint's deliveries in order (oldest first), up to `concurrency` endpoints at a time. */
  async #sendAll(claimed: WebhookDeliveryRecord[]): Promise<void> {
    const byEndpoint = new Map<string, WebhookDeliveryRecord[]>();
    for (const delivery of claimed) {
      const queue = byEndpoint.get(delivery.endpoint) ?? [];
      queue.push(delivery);
      byEndpoint.set(delivery.endpoint, queue);
    }
    const queues = [...byEndpoint.values()];
    const worker = async () => {
      for (let queue = queues.shift(); queue; queue = queues.shift()) {
        for (const delivery of queue) await this.#deliver(delivery).catch(this.#onError);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, queues.length) }, worker));
  }

  async #deliver(delivery: WebhookDeliveryRecord): Promise<void> {
    const { endpoint, signer } = this.#endpoints.get(delivery.endpoint)!;
    const attempt = delivery.attempts + 1;
    let result: AttemptResult;
    try {
      if (this.#stopping.signal.aborted) throw this.#stopping.signal.reason;
      result = await this.#attempt(delivery, endpoint, signer);
    } catch (error) {
      if (this.#stopping.signal.aborted) {
        // Cut off by stop(): not counted as an attempt; back to the queue, due at once.
        await this.#record(delivery, { kind: 'released' }, this.#clock());
        return;
      }
      result = { delivered: false, error: describeFailure(error, endpoint), statusCode: null };
    }
    const now = this.#clock();
    const log = { event: 'webhookAttempt', webhookId: delivery.id, eventType: delivery.eventType, attempt };
    if (result.delivered) {
      await this.#record(delivery, { kind: 'delivered', statusCode: result.statusCode }, now);
      this.#logger?.debug({ ...log, endpoint: shown(endpoint.url) }, 'webhook delivered');
      return;
    }
    const failure = { error: result.error, statusCode: result.statusCode };
    const next = afterFailedAttempt(attempt, endpoint, now, Math.random());
    if (next.kind === 'retry') {
      await this.#record(delivery, { kind: 'retry', at: next.at, ...failure }, now);
      this.#logger?.warn(
        { ...log, endpoint: shown(endpoint.url), error: failure.error, nextAttemptAt: next.at },
        'webhook attempt failed; will retry',
      );
    } else {
      await this.#record(delivery, { kind: 'failed', ...failure }, now);
      this.#logger?.error(
        { ...log, endpoint: shown(endpoint.url), error: failure.error },
        `webhook delivery failed after ${attempt} attempts`,
      );
    }
  }

  /** One POST, signed now. */
  async #attempt(delivery: WebhookDeliveryRecord, endpoint: WebhookEndpoint, signer: Webhook): Promise<AttemptResult> {
    const body = JSON.stringify(delivery.payload);
    // Signed at each attempt, on this host's clock (not the database's): receivers refuse a webhook-timestamp more
    // than 5 minutes off their own clock.
    const sentAt = new Date();
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'toolgate-webhooks',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': signer.sign(delivery.id, sentAt, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(endpoint.timeoutMs), this.#stopping.signal]),
    });
    // The status is the answer; the body is not read (a receiver's large or endless body costs nothing).
    await response.body?.cancel().catch(() => {});
    if (response.status >= 200 && response.status < 300) return { delivered: true, statusCode: response.status };
    return { delivered: false, error: `HTTP ${response.status}`, statusCode: response.status };
  }

  async #record(
    delivery: WebhookDeliveryRecord,
    outcome: Parameters<WebhookDeliveries['recordWebhookAttempt']>[2],
    now: Date,
  ): Promise<void> {
    // False: the claim lapsed and another process took the delivery over; its record is the one that counts.
    await this.#store.recordWebhookAttempt(delivery.id, this.#owner, outcome, now.toISOString());
  }
}

/** An attempt's error in words: a timeout, the socket's error code, or the message. */
function describeFailure(error: unknown, endpoint: WebhookEndpoint): string {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError') return `no response within ${endpoint.timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ECONNRESET' || cause?.code === 'UND_ERR_SOCKET') return 'connection closed before a response';
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

/** The URL as logged: no query string (it may carry a token). */
function shown(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
