// turnEvents: one subscription for a live UI of a turn: its changes (as turnUpdated) and its answer's text as the
// model generates it. The text is best-effort and not stored; the saved ASSISTANT message is what counts.
import { GraphQLError } from 'graphql';
import { getTurn } from '../app/reads.js';
import { isFinalTurn } from '../domain/expiry.js';
import type { TurnRecord } from '../domain/records.js';
import type { TurnTextDelta } from '../events/pubsub.js';
import { builder } from './builder.js';
import { endAfter, startWith } from './live.js';
import { TurnRef } from './refs.js';

const TurnTextDeltaRef = builder.objectRef<TurnTextDelta>('TurnTextDelta').implement({
  description:
    'A piece of the text of one model call of a turn, as the model generates it (an `openai-compatible` model with ' +
    '`stream: true`; the scripted demo model sends each answer as one piece). Not durable: deltas are not stored, ' +
    'not replayed after a reconnect, and may be missed (a slow subscriber, a crash, a subscriber on another instance ' +
    'joining mid-answer). The ASSISTANT message saved when the call answered is authoritative: its text equals the ' +
    'deltas put together when none was missed. Each model call saves one ASSISTANT message, so show the text of ' +
    'iteration i only while the turn you hold has fewer than i ASSISTANT messages.',
  fields: (t) => ({
    turnId: t.exposeID('turnId'),
    iteration: t.exposeInt('iteration', {
      description: "Which model call of the turn (1 for the first): the turn's `iterations` once its answer is saved.",
    }),
    index: t.exposeInt('index', { description: "This delta's place among the deltas of its model call: 0, 1, 2, …" }),
    offset: t.exposeInt('offset', {
      description:
        "Where `delta` starts in the model call's text, in UTF-16 code units (a JavaScript string's length). Equal to " +
        'the length of what you hold: append. Smaller (0 for a call run again after a crash, or the text so far ' +
        'sent first to a subscriber that joined mid-answer): replace from there. Larger: text was missed; wait for ' +
        'the saved message.',
    }),
    // Not `text`: Turn.text is nullable, and one selection of both union members must not conflict.
    delta: t.exposeString('text', { description: 'The piece of text.' }),
  }),
});

const TurnEventUnion = builder.unionType('TurnEvent', {
  description: 'What turnEvents delivers: the turn after a change, or a piece of its streamed text.',
  types: [TurnRef, TurnTextDeltaRef],
  resolveType: (event) => (isTextDelta(event) ? TurnTextDeltaRef : TurnRef),
});

function isTextDelta(event: TurnRecord | TurnTextDelta): event is TurnTextDelta {
  return (event as TurnTextDelta).kind === 'textDelta';
}

builder.subscriptionField('turnEvents', (t) =>
  t.field({
    type: TurnEventUnion,
    description:
      'Everything a live UI of one turn needs, in order: first the turn as it is now (then, if its model call is ' +
      'streaming in the instance that serves this subscription, the text so far as one TurnTextDelta at offset 0), ' +
      'then each TurnTextDelta of its model calls as it is generated and the Turn after each change (status, ' +
      "messages, elicitations; as turnUpdated). An answer's deltas come before the Turn that holds its saved " +
      'ASSISTANT message, which is authoritative: deltas are not durable. The subscription completes right after the ' +
      'Turn in a final status (COMPLETED, FAILED, CANCELLED, or EXPIRED once the expiry is recorded; at once when the ' +
      "turn had ended before it subscribed). Another user's turn: NOT_FOUND.",
    args: { turnId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      const turnId = String(args.turnId);
      // Listen first, read second (as turnUpdated): nothing between the current state and the live events is lost.
      const events = ctx.services.pubsub.subscribeMany([
        { topic: 'turn', key: turnId },
        { topic: 'turnText', key: turnId },
      ]);
      await events.listening;
      const turn = await getTurn(ctx.services, ctx.viewer, turnId);
      if (!turn) {
        // Another user's turn reads as unknown, exactly as turnUpdated answers it.
        await events.return();
        throw new GraphQLError('No turn with this id.', { extensions: { code: 'NOT_FOUND' } });
      }
      const soFar = turn.status === 'RUNNING' ? ctx.services.turnText.textSoFar(turnId) : null;
      // Deltas the text so far already holds (published between listening and reading it) are not sent again.
      const alreadySent = (event: TurnRecord | TurnTextDelta) =>
        soFar !== null && isTextDelta(event) && event.iteration === soFar.iteration && event.index <= soFar.index;
      // The turn's last state is its last event: the subscription completes after it.
      return endAfter(
        startWith<TurnRecord | TurnTextDelta>(soFar ? [turn, soFar] : [turn], events, alreadySent),
        (event) => !isTextDelta(event) && isFinalTurn(event),
      );
    },
    resolve: (event) => event,
  }),
);
