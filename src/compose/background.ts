// The work a server does with no request, on the core (core.ts): recovery of the turns a dead process left
// running, the sweeper (expiry, escalation, retention, recovery again) and the webhook deliverer.
import { Sweeper, type SweepReport } from '../agent/sweeper.js';
import { WebhookDeliverer, type WebhookDelivererOptions } from '../webhooks/deliverer.js';
import type { PublicUrl } from '../identity/public-url.js';
import { NotifierDeliverer, type NotifierDelivererOptions } from '../notifiers/deliverer.js';
import type { NotifierChannel } from '../notifiers/port.js';
import { SlackNotifier } from '../notifiers/slack/slack-notifier.js';
import type { Core } from './core.js';

export interface BackgroundOptions {
  /** Seconds between sweeps (expiry, retention, recovery); 0 turns the timer off. Default: config `sweeper`, else 5. */
  sweepIntervalSeconds?: number;
  /** Rows per sweeper batch. Default: config `sweeper`, else 100. */
  sweepBatchSize?: number;
  /** Days an expired confirmation request is kept before the sweeper deletes it. Default: config `sweeper`, else 30. */
  retentionDays?: number;
  /** How the webhook deliverer polls and batches (tests, embedding); the endpoints come from the config's `webhooks`. */
  webhookDelivery?: Pick<WebhookDelivererOptions, 'pollIntervalMs' | 'batchSize' | 'concurrency'>;
  /** How the notifier deliverer (Slack cards) polls and batches, and how long a card is held while written. */
  notifierDelivery?: Pick<NotifierDelivererOptions, 'pollIntervalMs' | 'batchSize'> & { cardLeaseMs?: number };
}

export interface Background {
  /** Runs one sweep now (expiry, retention, recovery) and reports what it did. */
  sweep(): Promise<SweepReport>;
  /** Stops the sweeper's timer and waits for a sweep under way. */
  stopSweeps(): Promise<void>;
  /** Ends the deliveries in flight: they stay in the outbox for the next process (or another instance). */
  stopDeliveries(): Promise<void>;
}

export async function startBackground(
  core: Core,
  options: BackgroundOptions,
  publicUrl?: PublicUrl,
): Promise<Background> {
  const { onError, logger, storage } = core;
  const { runner, store, clock } = core.services;

  // Turns a dead process left RUNNING continue from their last persisted step (turns another live process runs are
  // left to it: leases, docs/durability.md); the sweeper repeats this, so a turn of a process that dies later is taken over too.
  await runner.recover();

  const sweeper = sweeperOf(core, options);
  sweeper.start();

  // Webhooks go out in the background, told of each commit that wrote some; requests never wait for them.
  const deliverer = new WebhookDeliverer({
    store,
    endpoints: core.webhookEndpoints,
    owner: runner.leaseOwner,
    clock,
    onError,
    logger,
    ...options.webhookDelivery,
  });
  // Notifier channels (Slack cards) consume their own outbox rows the same way (docs/slack.md).
  const channels: NotifierChannel[] = [];
  if (core.slack) {
    channels.push(
      new SlackNotifier({
        settings: core.slack,
        store,
        cards: storage.notifierCards,
        owner: runner.leaseOwner,
        clock,
        inboxUrl: () => {
          const url = publicUrl?.get();
          return url ? `${url}/inbox` : null;
        },
        logger,
        flush: () => store.flush(),
        ...(options.notifierDelivery?.cardLeaseMs !== undefined && {
          cardLeaseMs: options.notifierDelivery.cardLeaseMs,
        }),
      }),
    );
  }
  const notifiers = new NotifierDeliverer({
    store,
    channels,
    owner: runner.leaseOwner,
    clock,
    onError,
    logger,
    ...options.notifierDelivery,
  });
  const stopListening = storage.webhooks.onWritten(() => {
    deliverer.nudge();
    notifiers.nudge();
  });
  deliverer.start();
  notifiers.start();

  return {
    sweep: () => sweeper.sweepOnce(),
    stopSweeps: () => sweeper.stop(),
    stopDeliveries() {
      stopListening();
      return Promise.all([deliverer.stop(), notifiers.stop()]).then(() => {});
    },
  };
}

/** The sweeper of the options, else of the config's `sweeper` section; not started (a test sweeps with sweepOnce). */
export function sweeperOf(core: Core, options: BackgroundOptions): Sweeper {
  const { config, onError } = core;
  const { runner, store, clock } = core.services;
  return new Sweeper(runner, store, clock, {
    intervalSeconds: options.sweepIntervalSeconds ?? config.sweeper?.intervalSeconds,
    batchSize: options.sweepBatchSize ?? config.sweeper?.batchSize,
    retentionDays: options.retentionDays ?? config.sweeper?.retentionDays,
    idempotencyKeyHours: config.sweeper?.idempotencyKeyHours,
    cards: core.storage.notifierCards,
    onError,
  });
}
