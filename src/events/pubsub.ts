// Pub/sub for subscriptions. In process now (Yoga's createPubSub on an EventTarget); the same interface can
// take a Redis event target when several instances serve one database.
import { setMaxListeners } from 'node:events';
import { createPubSub, type PubSub } from 'graphql-yoga';
import type { ElicitationRecord, TurnRecord } from '../db/store.js';

export type ToolgateTopics = {
  /** Every change of one turn. */
  turn: [turnId: string, turn: TurnRecord];
  /** New confirmation requests of one user. */
  elicitations: [ownerId: string, elicitation: ElicitationRecord];
};

export type ToolgatePubSub = PubSub<ToolgateTopics>;

export function createInProcessPubSub(): ToolgatePubSub {
  const eventTarget = new EventTarget();
  // Each subscriber adds a listener; Node warns past 10 by default.
  setMaxListeners(0, eventTarget);
  return createPubSub<ToolgateTopics>({ eventTarget: eventTarget as never });
}
