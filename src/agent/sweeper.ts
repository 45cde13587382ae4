// The background sweeper: on a timer, with no request needed, it expires paused turns whose time has passed,
// escalates the requests whose escalation time has come (docs/approvers.md), deletes long-expired state after the
// retention period, and takes over turns whose process died. It works in small batches (each one short transaction)
// and yields to the event loop between them, so requests are served while it works; a sweep never overlaps the
// previous one. See docs/durability.md.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { IDEMPOTENCY_KEY_RETENTION_MS } from '../domain/idempotency.js';
import type { NotifierCards } from '../domain/notifier-cards.js';
import type { Retention } from '../domain/store.js';
import type { AgentRunner } from './runner.js';

export interface SweeperOptions {
  /** Seconds between sweeps; 0: no timer (sweepOnce still works). Default 5. */
  intervalSeconds?: number;
  /** Rows per batch (turns to expire, requests to escalate, elicitations to delete). Default 100. */
  batchSize?: number;
  /** Days an EXPIRED elicitation is kept before it is deleted. Default 30. */
  retentionDays?: number;
  /** Hours an idempotency key is kept: a retry with it within that time gets the first request's turn. Default 24. */
  idempotencyKeyHours?: number;
  /** The notifiers' chat cards, deleted after the retention period once their request is decided. */
  cards?: Pick<NotifierCards, 'deleteCardsBefore'>;
  onError?: (error: unknown) => void;
}

export interface SweepReport {
  /** Paused turns this sweep expired. */
  expiredTurns: number;
  /** Waiting requests it marked escalated (and told their escalation roles about). */
  escalatedElicitations: number;
  /** Long-expired elicitations it deleted. */
  deletedElicitations: number;
  /** Webhook deliveries delivered before the retention period, and approval grants revoked or expired before it. */
  deletedDeliveries: number;
  deletedGrants: number;
  /** Idempotency keys claimed longer ago than they are kept. */
  deletedIdempotencyKeys: number;
  /** Chat cards (Slack) of requests decided before the retention period. */
  deletedCards: number;
  /** Orphaned RUNNING turns it took over. */
  recoveredTurns: number;
  /** Batches (transactions) it took. */
  batches: number;
}

export class Sweeper {
  readonly #runner: AgentRunner;
  readonly #store: Retention;
  readonly #clock: () => Date;
  readonly #cards: SweeperOptions['cards'];
  readonly #options: Required<Omit<SweeperOptions, 'onError' | 'cards'>> & Pick<SweeperOptions, 'onError'>;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<SweepReport> | null = null;
  #stopped = false;

  constructor(runner: AgentRunner, store: Retention, clock: () => Date, options: SweeperOptions = {}) {
    const { cards, ...timings } = options;
    this.#runner = runner;
    this.#store = store;
    this.#cards = cards;
    this.#clock = clock;
    this.#options = {
      intervalSeconds: 5,
      batchSize: 100,
      retentionDays: 30,
      idempotencyKeyHours: IDEMPOTENCY_KEY_RETENTION_MS / 3_600_000,
      ...definedOnly(timings),
    };
  }

  start(): void {
    if (this.#options.intervalSeconds <= 0 || this.#timer) return;
    this.#timer = setInterval(() => {
      if (!this.#running) this.sweepOnce().catch((error) => this.#options.onError?.(error));
    }, this.#options.intervalSeconds * 1000).unref();
  }

  /** One full sweep now; if one is under way, the same one. */
  sweepOnce(): Promise<SweepReport> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  /** Stops the timer and waits for a sweep under way (at most one batch more), so the store can close. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running?.catch(() => {});
  }

  async #sweep(): Promise<SweepReport> {
    const report: SweepReport = {
      expiredTurns: 0,
      escalatedElicitations: 0,
      deletedElicitations: 0,
      deletedDeliveries: 0,
      deletedGrants: 0,
      deletedIdempotencyKeys: 0,
      deletedCards: 0,
      recoveredTurns: 0,
      batches: 0,
    };
    const { batchSize, retentionDays, idempotencyKeyHours } = this.#options;
    // Expire paused turns past their time: turn EXPIRED, elicitations EXPIRED, open calls get docs/design.md's text, published.
    for (;;) {
      if (this.#stopped) return report;
      const expired = await this.#runner.expireDue(batchSize);
      report.batches++;
      report.expiredTurns += expired.length;
      if (expired.length < batchSize) break;
      await yieldToEventLoop();
    }
    // Escalate the waiting requests whose escalation time has passed, after the expiry: a request past its expiry is
    // expired above, never escalated (the store's WHERE holds to that too, for another instance's expiry).
    for (;;) {
      if (this.#stopped) return report;
      await yieldToEventLoop();
      const escalated = await this.#runner.escalateDue(batchSize);
      report.batches++;
      report.escalatedElicitations += escalated.length;
      if (escalated.length < batchSize) break;
    }
    // Retention: an EXPIRED elicitation (never answered) is deleted `retentionDays` after it expired. The turn
    // (EXPIRED, with its prose question) and the messages (the conversation) stay.
    const before = new Date(this.#clock().getTime() - retentionDays * 86_400_000).toISOString();
    // So are webhook deliveries delivered that long ago (FAILED ones stay for the admin query) and approval grants
    // revoked or expired that long ago (their uses stay in the execution journal).
    // Idempotency keys are kept their own, shorter time: a retry comes within minutes, not days.
    const keysBefore = new Date(this.#clock().getTime() - idempotencyKeyHours * 3_600_000).toISOString();
    const retention = [
      ['deletedElicitations', () => this.#store.deleteExpiredElicitations(before, batchSize)],
      ['deletedDeliveries', () => this.#store.deleteDeliveredWebhooks(before, batchSize)],
      ['deletedGrants', () => this.#store.deleteLapsedGrants(before, batchSize)],
      ['deletedIdempotencyKeys', () => this.#store.deleteIdempotencyKeys(keysBefore, batchSize)],
      ['deletedCards', () => this.#cards?.deleteCardsBefore(before, batchSize) ?? Promise.resolve(0)],
    ] as const;
    for (const [counter, deleteBatch] of retention) {
      for (;;) {
        if (this.#stopped) return report;
        await yieldToEventLoop();
        const deleted = await deleteBatch();
        report.batches++;
        report[counter] += deleted;
        if (deleted < batchSize) break;
      }
    }
    if (!this.#stopped) report.recoveredTurns = (await this.#runner.recover()).length;
    return report;
  }
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
