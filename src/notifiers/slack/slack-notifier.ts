// The Slack channel of the notifier port (docs/slack.md): for each outbox event of a request, the request's cards
// (one per Slack channel it goes to) are brought up to date: posted once (chat.postMessage), then edited
// (chat.update). The card shows the request as it is when the card is written, read after taking the card's lease, so
// events handled late, twice or out of order still leave it showing the latest state, and two processes never write
// one card at once.
import { createHash } from 'node:crypto';
import {
  ErrorCode,
  type WebAPIHTTPError,
  type WebAPIPlatformError,
  type WebAPIRateLimitedError,
  type WebAPIRequestError,
  WebClient,
} from '@slack/web-api';
import type { SlackSettings } from '../../config/slack.js';
import { SLACK_NOTIFIER } from '../../config/webhooks.js';
import { mayEdit, mayRemember } from '../../domain/approvers.js';
import { isGateway } from '../../domain/gateway.js';
import type { CardKey, NotifierCards } from '../../domain/notifier-cards.js';
import type { ElicitationRecord } from '../../domain/records.js';
import type { Store } from '../../domain/store.js';
import {
  NOTIFIER_EVENTS,
  notifierEndpoint,
  type WebhookEvent,
  type WebhookEventType,
} from '../../domain/webhook-events.js';
import type { Logger } from '../../observability/logger.js';
import type { NotifierChannel, NotifierResult } from '../port.js';
import { slackCard, type CardView, type SlackMessage } from './card.js';

export { SLACK_NOTIFIER };
/** The message metadata every card carries: how a process that died mid-post finds the card it may have posted. */
export const SLACK_METADATA_EVENT = 'toolgate_request';

export type SlackStore = Pick<Store, 'loadElicitation' | 'listApproverAnswers' | 'listAcceptedDecisions' | 'getAgent'>;

export interface SlackNotifierOptions {
  settings: SlackSettings;
  store: SlackStore;
  cards: NotifierCards;
  /** This process, as it holds card leases. */
  owner: string;
  clock: () => Date;
  /** The inbox's URL (`<publicUrl>/inbox`), once the server's public URL is known. */
  inboxUrl: () => string | null;
  logger?: Logger;
  /** How long a card is held while it is posted or updated (default: the settings' timeoutMs × 3 + 5 s). */
  cardLeaseMs?: number;
  /** Makes the card's POSTING mark durable before the post (SQLite's WAL fsync), so a power loss cannot repost. */
  flush?: () => Promise<void>;
}

/**
 * A Web API client whose retries are the outbox's: none of its own, and a 429 comes back with its Retry-After. Its
 * calls end early when `stopping` aborts.
 */
export function slackClient(settings: SlackSettings, stopping?: AbortSignal): WebClient {
  return new WebClient(settings.botToken, {
    ...(stopping && {
      fetch: (url: string | URL | Request, init?: RequestInit) =>
        fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, stopping]) : stopping }),
    }),
    slackApiUrl: settings.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: settings.timeoutMs,
    allowAbsoluteUrls: false,
    logger: silentLogger(),
  });
}

export class SlackNotifier implements NotifierChannel {
  readonly name = SLACK_NOTIFIER;
  readonly endpoint = notifierEndpoint(SLACK_NOTIFIER);
  readonly events: readonly WebhookEventType[] = NOTIFIER_EVENTS;
  readonly retry;
  readonly timeoutMs: number;
  readonly #o: SlackNotifierOptions;
  readonly #client: WebClient;
  readonly #leaseMs: number;

  readonly #stopping = new AbortController();

  constructor(options: SlackNotifierOptions) {
    this.#o = options;
    this.#client = slackClient(options.settings, this.#stopping.signal);
    const { settings } = options;
    this.retry = {
      maxAttempts: settings.maxAttempts,
      initialBackoffMs: settings.initialBackoffMs,
      maxBackoffMs: settings.maxBackoffMs,
    };
    // A card's work is up to three calls (look for a lost post, post, update).
    this.timeoutMs = settings.timeoutMs * 3;
    this.#leaseMs = options.cardLeaseMs ?? settings.timeoutMs * 3 + 5_000;
  }

  abort(): void {
    this.#stopping.abort();
  }

  async deliver(event: WebhookEvent): Promise<NotifierResult> {
    const elicitationId = event.data.elicitationId;
    if (typeof elicitationId !== 'string') return { kind: 'done' };
    const found = await this.#o.store.loadElicitation(elicitationId);
    // Deleted since (retention): nothing is left to show.
    if (!found) return { kind: 'done' };
    for (const target of slackTargets(found, this.#o.settings)) {
      const result = await this.#bringUpToDate({ notifier: SLACK_NOTIFIER, elicitationId, target });
      if (result.kind !== 'done') return result;
    }
    return { kind: 'done' };
  }

  /** Posts the card to `target` when it is not there, else updates it to show the request as it is now. */
  async #bringUpToDate(key: CardKey): Promise<NotifierResult> {
    const { cards, owner, clock } = this.#o;
    const now = clock();
    const card = await cards.takeCard(
      key,
      owner,
      now.toISOString(),
      new Date(now.getTime() + this.#leaseMs).toISOString(),
    );
    if (!card) return { kind: 'busy' };
    if (card.fresh) await this.#o.flush?.();
    // True only while a post is the call under way: a refusal of it (and only of it) proves no card exists.
    let postingNow = false;
    try {
      // Read under the lease: whoever holds the card next reads a state at least as new.
      const view = await this.#view(key.elicitationId);
      if (!view) {
        // The request is gone (retention): a card that was never posted is forgotten, a posted one stays as it is.
        await cards.releaseCard(key, owner, card.fresh);
        return { kind: 'done' };
      }
      const message = slackCard(view);
      const digest = digestOf(message);
      if (card.state === 'POSTING') {
        // Taken over from a process that died mid-post (or whose post's outcome was unknown): that post may have
        // gone through; the channel's recent messages say.
        const lost = card.fresh ? null : await this.#findPosted(key, card.postingSince);
        if (lost) {
          await this.#client.chat.update({ channel: key.target, ts: lost, text: message.text, blocks: message.blocks });
          await cards.recordPosted(key, owner, lost, digest, clock().toISOString());
        } else {
          postingNow = true;
          const posted = await this.#client.chat.postMessage({
            channel: key.target,
            text: message.text,
            blocks: message.blocks,
            unfurl_links: false,
            unfurl_media: false,
            metadata: { event_type: SLACK_METADATA_EVENT, event_payload: { elicitation_id: key.elicitationId } },
          });
          postingNow = false;
          await cards.recordPosted(key, owner, String(posted.ts), digest, clock().toISOString());
        }
        this.#o.logger?.info({ elicitationId: key.elicitationId, channel: key.target }, 'slack card posted');
      } else if (card.shown !== digest) {
        await this.#client.chat.update({
          channel: key.target,
          ts: card.messageRef!,
          text: message.text,
          blocks: message.blocks,
        });
        await cards.recordShown(key, owner, digest, clock().toISOString());
      } else {
        await cards.releaseCard(key, owner, false);
      }
      return { kind: 'done' };
    } catch (error) {
      const failure = describeSlackError(error);
      // A post Slack refused, or that never reached it, did not happen: the next attempt posts without looking.
      await cards.releaseCard(key, owner, postingNow && failure.unposted).catch(() => {});
      return {
        kind: 'retry',
        error: failure.error,
        statusCode: failure.statusCode,
        ...(failure.afterMs !== undefined && { afterMs: failure.afterMs }),
      };
    }
  }

  async #view(elicitationId: string): Promise<CardView | null> {
    const { store } = this.#o;
    const elicitation = await store.loadElicitation(elicitationId);
    if (!elicitation) return null;
    const agent = await store.getAgent(elicitation.agentId);
    const answers = elicitation.approval ? await store.listApproverAnswers([elicitationId]) : [];
    let receipt: CardView['receipt'] = null;
    if (elicitation.status === 'ACCEPTED') {
      const records = await store.listAcceptedDecisions([elicitation.turnId]);
      const record = records.find((r) => r.elicitationId === elicitationId);
      if (record) receipt = { seq: record.seq, hash: record.hash };
    }
    return {
      elicitation,
      agent: agent ? { id: agent.id, name: agent.name, isGateway: isGateway(agent) } : null,
      answers,
      receipt,
      canRemember: mayRemember(elicitation, agent),
      canEdit: mayEdit(elicitation, agent),
      inboxUrl: this.#o.inboxUrl(),
    };
  }

  /** The ts of this request's card in the channel, posted since the post under way started, if Slack has it. */
  async #findPosted(key: CardKey, since: string | null): Promise<string | null> {
    const oldest = since ? String(Math.floor(Date.parse(since) / 1000) - 60) : undefined;
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const history = await this.#client.conversations.history({
        channel: key.target,
        include_all_metadata: true,
        limit: 200,
        ...(oldest !== undefined && { oldest }),
        ...(cursor !== undefined && { cursor }),
      });
      for (const message of history.messages ?? []) {
        const metadata = message.metadata as
          { event_type?: string; event_payload?: Record<string, unknown> } | undefined;
        if (
          metadata?.event_type === SLACK_METADATA_EVENT &&
          metadata.event_payload?.elicitation_id === key.elicitationId &&
          message.ts
        ) {
          return message.ts;
        }
      }
      cursor = history.response_metadata?.next_cursor || undefined;
      if (!cursor) return null;
    }
    return null;
  }
}

/**
 * The Slack channels a request's cards go to: its first approver role's channel, else its agent's, else the default;
 * and, once it escalated, its first escalation role's channel as well.
 */
export function slackTargets(
  elicitation: Pick<ElicitationRecord, 'agentId' | 'approval' | 'escalatedAt'>,
  settings: Pick<SlackSettings, 'channels'>,
): string[] {
  const { channels } = settings;
  const ofRoles = (roles: readonly string[]) => roles.map((role) => channels.roles[role]).find(Boolean) ?? null;
  const main =
    (elicitation.approval && ofRoles(elicitation.approval.roles)) ??
    channels.agents[elicitation.agentId] ??
    channels.default;
  const targets = main ? [main] : [];
  const escalation = elicitation.approval?.escalation;
  if (escalation && elicitation.escalatedAt) {
    const escalated = ofRoles(escalation.roles);
    if (escalated && !targets.includes(escalated)) targets.push(escalated);
  }
  return targets;
}

function digestOf(message: SlackMessage): string {
  return createHash('sha256').update(JSON.stringify(message)).digest('hex');
}

/** A failed Web API call in words, whether it certainly posted nothing, and the Retry-After of a 429. */
export function describeSlackError(error: unknown): {
  error: string;
  statusCode: number | null;
  unposted: boolean;
  afterMs?: number;
} {
  const code = (error as { code?: string } | null)?.code;
  switch (code) {
    case ErrorCode.RateLimitedError: {
      const { retryAfter } = error as WebAPIRateLimitedError;
      return {
        error: `rate limited; retry after ${retryAfter} s`,
        statusCode: 429,
        unposted: true,
        afterMs: retryAfter * 1000,
      };
    }
    case ErrorCode.PlatformError:
      return { error: `slack: ${(error as WebAPIPlatformError).data.error}`, statusCode: 200, unposted: true };
    case ErrorCode.HTTPError: {
      const { statusCode } = error as WebAPIHTTPError;
      return { error: `HTTP ${statusCode}`, statusCode, unposted: false };
    }
    case ErrorCode.RequestError: {
      const original = (error as WebAPIRequestError).original as { name?: string; cause?: { code?: string } } & Error;
      if (original?.cause?.code === 'ECONNREFUSED')
        return { error: 'connection refused', statusCode: null, unposted: true };
      if (original?.name === 'TimeoutError' || original?.name === 'AbortError') {
        return { error: 'no response in time', statusCode: null, unposted: false };
      }
      return { error: original?.message ?? 'request failed', statusCode: null, unposted: false };
    }
    default:
      return { error: error instanceof Error ? error.message : String(error), statusCode: null, unposted: false };
  }
}

/** The SDK logs through its own console logger by default; the outbox logs each failure instead. */
function silentLogger() {
  const nothing = () => {};
  return {
    debug: nothing,
    info: nothing,
    warn: nothing,
    error: nothing,
    setLevel: nothing,
    getLevel: () => 'error' as never,
    setName: nothing,
  };
}
