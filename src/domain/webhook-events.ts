// Webhooks as the domain sees them (docs/webhooks.md): which changes are events, the JSON each one carries, and the
// outbox rows a change writes for the endpoints subscribed to its events. Pure functions: a store calls them inside the
// transaction of the change, so an event is recorded exactly when its change commits.
import type { DecisionRecord } from './decision-records.js';
import { newId } from './ids.js';
import type { CloseReason, ElicitationRecord, JsonObject, TurnRecord } from './records.js';
import type { PausedTurnClosing } from './turn-rules.js';

export const WEBHOOK_EVENT_TYPES = [
  'elicitation.requested',
  'elicitation.resolved',
  'elicitation.expired',
  'elicitation.escalated',
  'turn.completed',
  'turn.failed',
] as const;
/**
 * Outbox events only notifiers subscribe to (docs/slack.md), never a webhook endpoint: an approver's answer that was
 * counted while the request still waits for more (quorum progress).
 */
export const NOTIFIER_EVENT_TYPES = ['elicitation.counted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number] | (typeof NOTIFIER_EVENT_TYPES)[number];

/** The events notifier channels (docs/slack.md) are told of: every change of a request. */
export const NOTIFIER_EVENTS: readonly WebhookEventType[] = [
  'elicitation.requested',
  'elicitation.counted',
  'elicitation.escalated',
  'elicitation.resolved',
  'elicitation.expired',
];

/** The outbox endpoint of a notifier channel: never a URL, so no webhook endpoint takes its rows. */
export const notifierEndpoint = (name: string): string => `notifier:${name}`;

/** What the store writes for a notifier channel: its rows, of its events. */
export function notifierSubscription(name: string): WebhookSubscription {
  return { url: notifierEndpoint(name), events: NOTIFIER_EVENTS };
}

/** One event, shaped as the Standard Webhooks payload convention: `{type, timestamp, data}`. */
export interface WebhookEvent {
  type: WebhookEventType;
  /** When the change happened (the `now` of its transaction). */
  timestamp: string;
  data: JsonObject;
}

/** Which events an endpoint gets: the config's `webhooks[]` without the secret and the retry settings. */
export interface WebhookSubscription {
  url: string;
  events: readonly WebhookEventType[];
}

/** What a store is given at construction to write webhook events (none configured: it writes none, and reads none). */
export interface WebhookOutbox {
  subscriptions: readonly WebhookSubscription[];
  /** Called once a transaction that wrote deliveries has committed: the deliverer sends them now instead of at its next poll. */
  written(): void;
}

/** How an elicitation stopped waiting: the values of the API's `Elicitation.resolution`. */
export type ElicitationClosing = 'ANSWERED' | 'TURN_CANCELLED' | 'SUPERSEDED' | 'EXPIRED';

/**
 * An elicitation's data in its events: the request, the tool call as it would run, who may answer it (its approvers
 * policy) and whether it escalated, and the answer once there is one.
 */
function elicitationData(e: ElicitationRecord, resolution: ElicitationClosing | null): JsonObject {
  return {
    elicitationId: e.id,
    turnId: e.turnId,
    threadId: e.threadId,
    agentId: e.agentId,
    ownerId: e.ownerId,
    status: e.status,
    resolution,
    message: e.request.message,
    toolCall: {
      id: e.toolCallId,
      name: e.toolCall.name,
      toolId: e.toolCall.toolId,
      arguments: e.toolCall.arguments,
      annotations: e.toolCall.annotations,
    },
    // `arguments`: what ran instead of toolCall.arguments (edit, then accept); `grantId`: the approval it remembered.
    answer: e.response
      ? {
          action: e.response.action,
          content: e.response.content,
          arguments: e.response.arguments ?? null,
          remember: e.response.remember ?? null,
          grantId: e.grantId,
        }
      : null,
    answeredBy: e.resolvedBy,
    // Who that was when they answered (name, issuer, subject, roles), field by field; null before, or unanswered.
    answeredByIdentity: e.resolvedByIdentity
      ? {
          name: e.resolvedByIdentity.name,
          issuer: e.resolvedByIdentity.issuer,
          subject: e.resolvedByIdentity.subject,
          roles: e.resolvedByIdentity.roles,
        }
      : null,
    // A CANCEL on behalf of a gateway caller that stopped waiting: CANCELLED or DISCONNECTED; else null.
    withdrawn: e.withdrawn,
    // The policy as stored at the pause (null: the requester alone); field by field, so the payload stays what
    // docs/webhooks.md says whatever the record gains.
    approval: e.approval
      ? {
          roles: e.approval.roles,
          required: e.approval.required,
          requester: e.approval.requester,
          escalation: e.approval.escalation
            ? { roles: e.approval.escalation.roles, at: e.approval.escalation.at }
            : null,
        }
      : null,
    escalatedAt: e.escalatedAt,
    createdAt: e.createdAt,
    expiresAt: e.expiresAt,
    resolvedAt: e.resolvedAt,
  };
}

/** `elicitation.requested`, one per elicitation a pause created. */
export function elicitationsRequested(elicitations: readonly ElicitationRecord[], now: string): WebhookEvent[] {
  return elicitations.map((e) => ({ type: 'elicitation.requested', timestamp: now, data: elicitationData(e, null) }));
}

/**
 * `elicitation.escalated`, one per request the sweeper marked escalated (as stored after it): still waiting, and
 * offered to its escalation roles (`approval.escalation.roles`) from now on.
 */
export function elicitationsEscalated(elicitations: readonly ElicitationRecord[], now: string): WebhookEvent[] {
  return elicitations.map((e) => ({ type: 'elicitation.escalated', timestamp: now, data: elicitationData(e, null) }));
}

/** `elicitation.counted`: an approver's answer was recorded and the request still waits (as stored before it). */
export function elicitationCounted(elicitation: ElicitationRecord, now: string): WebhookEvent[] {
  return [{ type: 'elicitation.counted', timestamp: now, data: elicitationData(elicitation, null) }];
}

/**
 * The events of elicitations that stopped waiting, as stored after the change: `elicitation.expired` for EXPIRED,
 * else `elicitation.resolved` (answered, or closed unanswered by a CANCEL of the step or a new message). Every
 * `elicitation.requested` is followed by exactly one of them.
 */
export function elicitationsClosed(
  elicitations: readonly ElicitationRecord[],
  resolution: ElicitationClosing,
  now: string,
): WebhookEvent[] {
  return elicitations.map((e) => ({
    type: resolution === 'EXPIRED' ? 'elicitation.expired' : 'elicitation.resolved',
    timestamp: now,
    data: elicitationData(e, resolution),
  }));
}

/**
 * The events of a paused turn's closing (closePausedTurn): one per elicitation it closed, as stored after it.
 * `before`: the turn's elicitations as read before the closing.
 */
export function elicitationsClosedBy(
  before: readonly ElicitationRecord[],
  closing: Pick<PausedTurnClosing, 'status' | 'closeElicitations'>,
  reason: CloseReason,
  now: string,
): WebhookEvent[] {
  const closed = before
    .filter((e) => closing.closeElicitations.includes(e.id))
    .map((e) => ({ ...e, status: closing.status, resolvedAt: now }));
  const resolution = reason === 'expired' ? 'EXPIRED' : reason === 'cancelled' ? 'TURN_CANCELLED' : 'SUPERSEDED';
  return elicitationsClosed(closed, resolution, now);
}

/** `turn.completed` / `turn.failed` for a turn that ended so; none for other statuses (CANCELLED, EXPIRED). */
export function turnEnded(turn: TurnRecord, now: string): WebhookEvent[] {
  if (turn.status !== 'COMPLETED' && turn.status !== 'FAILED') return [];
  return [
    {
      type: turn.status === 'COMPLETED' ? 'turn.completed' : 'turn.failed',
      timestamp: now,
      data: {
        turnId: turn.id,
        threadId: turn.threadId,
        agentId: turn.agentId,
        ownerId: turn.ownerId,
        status: turn.status,
        text: turn.text,
        error: turn.error,
        iterations: turn.iterations,
        createdAt: turn.createdAt,
        finishedAt: turn.updatedAt,
      },
    },
  ];
}

/** An outbox row to insert: one event for one endpoint. */
export interface WebhookDeliveryDraft {
  /** The `webhook-id`: the same on every attempt, so receivers can deduplicate on it. */
  id: string;
  endpoint: string;
  eventType: WebhookEventType;
  /** The body, exactly as sent. */
  payload: WebhookEvent;
  createdAt: string;
}

/** The outbox rows of a change's events: one per event and subscribed endpoint, each with its own id. */
export function outboxRows(
  events: readonly WebhookEvent[],
  subscriptions: readonly WebhookSubscription[],
  now: string,
  makeId: () => string = () => newId('whk'),
): WebhookDeliveryDraft[] {
  const rows: WebhookDeliveryDraft[] = [];
  for (const event of events) {
    for (const subscription of subscriptions) {
      if (!subscription.events.includes(event.type)) continue;
      rows.push({ id: makeId(), endpoint: subscription.url, eventType: event.type, payload: event, createdAt: now });
    }
  }
  return rows;
}

// ---- receipts in the body ---------------------------------------------------------------------------------------

const isElicitationEvent = (payload: JsonObject): boolean =>
  typeof payload.type === 'string' && payload.type.startsWith('elicitation.');

/** The turns whose decision records these deliveries' bodies carry: those of their elicitation events. */
export function receiptTurnIds(deliveries: readonly Pick<WebhookDeliveryRecord, 'payload'>[]): string[] {
  const ids = deliveries
    .filter((d) => isElicitationEvent(d.payload))
    .map((d) => (d.payload.data as JsonObject | undefined)?.turnId)
    .filter((id): id is string => typeof id === 'string');
  return [...new Set(ids)];
}

/**
 * A delivery as sent: an elicitation event's `data.receipt` is the signed decision record of the request's outcome
 * (the record of the kind its `status` names: ACCEPTED, DECLINED, CANCELLED, EXPIRED), null while it waits or when no
 * record was written. The record is appended in the transaction that wrote the event, so it is there, committed, when
 * the event is; it never changes, so every attempt sends the same body. `records`: those of the deliveries' turns.
 */
export function withReceipt<T extends Pick<WebhookDeliveryRecord, 'payload'>>(
  delivery: T,
  records: readonly DecisionRecord[],
): T {
  if (!isElicitationEvent(delivery.payload)) return delivery;
  const data = (delivery.payload.data ?? {}) as JsonObject;
  // The last of its kind, should a request ever have more than one (in chain order, the one that decided it).
  const decided = records.filter((r) => r.elicitationId === data.elicitationId && r.kind === data.status).at(-1);
  const receipt = decided ? (decided as unknown as JsonObject) : null;
  return { ...delivery, payload: { ...delivery.payload, data: { ...data, receipt } } };
}

// ---- deliveries -------------------------------------------------------------------------------------------------

export type WebhookDeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

/** An outbox row as stored: what the deliverer works on and the admin query lists. */
export interface WebhookDeliveryRecord {
  id: string;
  endpoint: string;
  eventType: string;
  payload: JsonObject;
  status: WebhookDeliveryStatus;
  /** Attempts made and recorded (an attempt cut short by a crash is not counted). */
  attempts: number;
  nextAttemptAt: string;
  /** The process delivering it now, and until when; another process takes it over after that. */
  lockedBy: string | null;
  lockedUntil: string | null;
  lastError: string | null;
  lastStatusCode: number | null;
  createdAt: string;
  finishedAt: string | null;
}

/** What became of one attempt, as the deliverer records it. */
export type WebhookAttemptOutcome =
  | { kind: 'delivered'; statusCode: number }
  /** Not delivered; try again at `at`. */
  | { kind: 'retry'; at: string; error: string; statusCode: number | null }
  /** Not delivered, and that was the last attempt: FAILED for good. */
  | { kind: 'failed'; error: string; statusCode: number | null }
  /** Not attempted after all (the process is stopping): back to the queue, due now, not counted as an attempt. */
  | { kind: 'released' };

/** The columns an attempt's outcome sets (besides dropping the claim): what both stores write for it. */
export function attemptChanges(outcome: WebhookAttemptOutcome, now: string) {
  const released = outcome.kind === 'released';
  const ended = outcome.kind === 'delivered' || outcome.kind === 'failed';
  return {
    status: (outcome.kind === 'delivered'
      ? 'DELIVERED'
      : outcome.kind === 'failed'
        ? 'FAILED'
        : 'PENDING') as WebhookDeliveryStatus,
    /** 1 when it counts as an attempt (a release does not; it also keeps the last attempt's error and status code). */
    counted: released ? 0 : 1,
    /** Null: unchanged. */
    nextAttemptAt: outcome.kind === 'retry' ? outcome.at : released ? now : null,
    lastError: outcome.kind === 'retry' || outcome.kind === 'failed' ? outcome.error : null,
    lastStatusCode: released ? null : outcome.statusCode,
    finishedAt: ended ? now : null,
  };
}

export interface WebhookRetryPolicy {
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/**
 * After failed attempt number `attempt` (1-based): retry after initialBackoff × 2^(attempt-1), capped at maxBackoff,
 * times a jitter factor in [0.8, 1.2) (so that endpoints coming back do not get every retry at once, while each gap
 * still grows: 0.8 × 2 > 1.2); or give up once `attempt` reached maxAttempts. `random` in [0, 1).
 */
export function afterFailedAttempt(
  attempt: number,
  policy: WebhookRetryPolicy,
  now: Date,
  random: number,
): { kind: 'retry'; at: string } | { kind: 'failed' } {
  if (attempt >= policy.maxAttempts) return { kind: 'failed' };
  const base = Math.min(policy.initialBackoffMs * 2 ** (attempt - 1), policy.maxBackoffMs);
  const delay = Math.round(base * (0.8 + 0.4 * random));
  return { kind: 'retry', at: new Date(now.getTime() + delay).toISOString() };
}
