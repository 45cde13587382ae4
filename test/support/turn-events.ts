// turnEvents as a client sees it: the operation, the events it received, and a UI's rule for applying text deltas.
import { expect } from 'vitest';
import type { Received } from './live.js';

export const TURN_EVENTS = `subscription Events($turnId: ID!) {
  turnEvents(turnId: $turnId) {
    __typename
    ... on TurnTextDelta { turnId iteration index offset delta }
    ... on Turn {
      id status text iterations
      messages { role text toolCalls { name } }
      pendingElicitations { id }
    }
  }
}`;

export type TurnEvent =
  | { __typename: 'TurnTextDelta'; turnId: string; iteration: number; index: number; offset: number; delta: string }
  | {
      __typename: 'Turn';
      id: string;
      status: string;
      text: string | null;
      iterations: number;
      messages: { role: string; text: string | null; toolCalls: { name: string }[] }[];
      pendingElicitations: { id: string }[];
    };

/** The events a subscription received (each without errors). */
export function eventsOf(received: Received<{ data?: { turnEvents: TurnEvent }; errors?: any[] }>): TurnEvent[] {
  return received.events.map((event) => {
    expect(event.errors).toBeUndefined();
    return event.data!.turnEvents;
  });
}

export const deltasOf = (events: TurnEvent[]) =>
  events.filter((e): e is Extract<TurnEvent, { __typename: 'TurnTextDelta' }> => e.__typename === 'TurnTextDelta');
export const turnsOf = (events: TurnEvent[]) =>
  events.filter((e): e is Extract<TurnEvent, { __typename: 'Turn' }> => e.__typename === 'Turn');

/** What a UI holds after applying the deltas of one model call by their offsets (the documented rule). */
export function applyDeltas(deltas: { offset: number; delta: string }[]): string {
  let text = '';
  for (const delta of deltas) {
    expect(delta.offset).toBeLessThanOrEqual(text.length);
    text = text.slice(0, delta.offset) + delta.delta;
  }
  return text;
}

/** Waits until the subscription received a Turn in one of these statuses. */
export function until(received: Received<any>, statuses: string[], timeoutMs = 10_000) {
  return received.waitFor(
    (e) => e.data?.turnEvents.__typename === 'Turn' && statuses.includes(e.data.turnEvents.status),
    `a turn ${statuses.join(' or ')}`,
    timeoutMs,
  );
}
