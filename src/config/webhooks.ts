// The config's `webhooks` section as the server uses it: secrets resolved (`env:NAME`) and checked, defaults applied.
import { notifierSubscription, type WebhookSubscription } from '../domain/webhook-events.js';
import { ConfigError, resolveSecret } from './load.js';
import type { ToolgateConfig, WebhookConfig } from './schema.js';
import { isWebhookSecret, WEBHOOK_SECRET_FORMAT } from './webhook-secret.js';

/** One endpoint, ready to deliver to. */
export interface WebhookEndpoint extends WebhookSubscription {
  secret: string;
  maxAttempts: number;
  timeoutMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export const WEBHOOK_DEFAULTS = {
  maxAttempts: 12,
  timeoutMs: 10_000,
  initialBackoffSeconds: 5,
  maxBackoffSeconds: 3600,
} as const;

/** Resolves every endpoint; a missing or malformed secret is a ConfigError naming `webhooks[i].secret`. */
export function resolveWebhooks(webhooks: readonly WebhookConfig[] | undefined, where: string): WebhookEndpoint[] {
  return (webhooks ?? []).map((webhook, i) => {
    const at = `${where}: webhooks[${i}].secret`;
    const secret = resolveSecret(webhook.secret, at);
    if (!isWebhookSecret(secret)) {
      // Never the value itself: it is a secret, even when malformed.
      const source = webhook.secret.startsWith('env:')
        ? `the environment variable ${webhook.secret.slice(4)} does not hold`
        : 'the secret is not';
      throw new ConfigError(`${at}: ${source} ${WEBHOOK_SECRET_FORMAT}`);
    }
    return {
      url: webhook.url,
      events: webhook.events,
      secret,
      maxAttempts: webhook.maxAttempts ?? WEBHOOK_DEFAULTS.maxAttempts,
      timeoutMs: webhook.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs,
      initialBackoffMs: (webhook.initialBackoffSeconds ?? WEBHOOK_DEFAULTS.initialBackoffSeconds) * 1000,
      maxBackoffMs: (webhook.maxBackoffSeconds ?? WEBHOOK_DEFAULTS.maxBackoffSeconds) * 1000,
    };
  });
}

/** What the store needs of the endpoints: which events go where. */
export function webhookSubscriptions(endpoints: readonly WebhookEndpoint[]): WebhookSubscription[] {
  return endpoints.map(({ url, events }) => ({ url, events }));
}

/** The notifier channel the config's `slack` section turns on (docs/slack.md). */
export const SLACK_NOTIFIER = 'slack';

/**
 * Everything the store writes to the outbox for this config: the webhook endpoints' events, and the notifier
 * channels' (Slack). openStorage must be given exactly these (createServer checks).
 */
export function outboxSubscriptions(
  config: Pick<ToolgateConfig, 'webhooks' | 'slack'> | undefined,
): WebhookSubscription[] {
  return [
    ...(config?.webhooks ?? []).map(({ url, events }) => ({ url, events })),
    ...(config?.slack ? [notifierSubscription(SLACK_NOTIFIER)] : []),
  ];
}
