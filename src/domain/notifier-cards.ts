// What a notifier channel (docs/slack.md) keeps beside the store: the chat cards it posted, one per request and
// target (a Slack channel), and the signed requests it already took, so that a replay is refused. The SQL of both
// dialects is in src/db/sqlite/notifier-cards.ts and src/db/postgres/notifier-cards.ts.

/** Which card: a notifier (e.g. "slack"), a request and where it was posted. */
export interface CardKey {
  notifier: string;
  elicitationId: string;
  target: string;
}

export interface CardRecord extends CardKey {
  /** POSTING: a post started and its outcome is not known; POSTED: the message exists (`messageRef`). */
  state: 'POSTING' | 'POSTED';
  messageRef: string | null;
  /** A digest of what the message shows: an update that would show the same is not sent. */
  shown: string | null;
  /** When the post under way started (POSTING). */
  postingSince: string | null;
}

/** The card a process now holds the lease of: `fresh` when this take created it (nothing was posted before). */
export type TakenCard = CardRecord & { fresh: boolean };

export interface NotifierCards {
  /**
   * Takes the card's lease until `until`: creates it (POSTING, `fresh`) when there is none, or takes an existing one
   * whose lease is free or lapsed. null: another process holds it now.
   */
  takeCard(key: CardKey, owner: string, now: string, until: string): Promise<TakenCard | null>;
  /** The post went through: POSTED with its message; the lease is dropped. */
  recordPosted(key: CardKey, owner: string, messageRef: string, shown: string, now: string): Promise<void>;
  /** The message now shows `shown`; the lease is dropped. */
  recordShown(key: CardKey, owner: string, shown: string, now: string): Promise<void>;
  /**
   * Drops the lease. `unposted`: the post certainly did not happen (the API refused it): the card is deleted, so the
   * next attempt posts without looking for one first.
   */
  releaseCard(key: CardKey, owner: string, unposted: boolean): Promise<void>;
  /** Every card of a request for a notifier (each target). */
  cardsOf(notifier: string, elicitationId: string): Promise<CardRecord[]>;
  /**
   * Records a signed request's key (e.g. its signature); false when it was seen before: a replay. Keys seen before
   * `forgetBefore` (outside the signature's window, so refused anyway) are deleted as it goes.
   */
  firstSight(notifier: string, key: string, now: string, forgetBefore: string): Promise<boolean>;
  /**
   * Retention: deletes up to `limit` POSTED cards last changed before `before` whose request no longer waits (decided,
   * expired, or itself deleted), so that a card is never forgotten while its request can still change it. The count.
   */
  deleteCardsBefore(before: string, limit: number): Promise<number>;
}
