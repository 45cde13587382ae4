// Follows one turn over turnEvents: the Turn after each change, and the streamed text of the model call running now.
import { useSubscription } from '@urql/preact';
import type { TurnLiveSubscription as TurnLiveData, TurnViewFragment } from './gql/graphql';
import { TurnLiveSubscription } from './operations';

export interface LiveTurn {
  turn: TurnViewFragment | null;
  /** The text of the model call in progress, while the turn we hold has not saved its ASSISTANT message yet. */
  streamed: { iteration: number; text: string } | null;
}

const assistantCount = (turn: TurnViewFragment) => turn.messages.filter((m) => m.role === 'ASSISTANT').length;

function reduce(prev: LiveTurn | undefined, data: TurnLiveData): LiveTurn {
  const state = prev ?? { turn: null, streamed: null };
  const event = data.turnEvents;
  if (event.__typename === 'Turn') {
    // The saved ASSISTANT message is authoritative: drop the streamed text once the turn holds it.
    const sameTurn = state.turn === null || state.turn.id === event.id;
    const keep = sameTurn && state.streamed && assistantCount(event) < state.streamed.iteration ? state.streamed : null;
    return { turn: event, streamed: keep };
  }
  if (state.turn && state.turn.id !== event.turnId) return state;
  const held = state.streamed?.iteration === event.iteration ? state.streamed.text : '';
  // Larger offset: text was missed; wait for the saved message rather than show a gap.
  if (event.offset > held.length) return state;
  return { ...state, streamed: { iteration: event.iteration, text: held.slice(0, event.offset) + event.delta } };
}

export function useLiveTurn(turnId: string | null): LiveTurn {
  const [result] = useSubscription(
    { query: TurnLiveSubscription, variables: { turnId: turnId ?? '' }, pause: !turnId },
    reduce,
  );
  return result.data ?? { turn: null, streamed: null };
}
