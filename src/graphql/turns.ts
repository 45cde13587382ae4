import { GraphQLError } from 'graphql';
import { getTurn } from '../app/reads.js';
import { startTurn } from '../app/start-turn.js';
import { elicitationStatusAt, turnStatusAt, turnTextAt } from '../domain/expiry.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../domain/idempotency.js';
import type { ThreadRecord, TurnRecord } from '../domain/records.js';
import { builder, type GraphQLContext } from './builder.js';
import { startWith } from './live.js';
import { NodeRef, optionalId } from './node.js';
import { ElicitationRef, MessageRef, ThreadRef, TurnRef } from './refs.js';
import { startTurnError } from './refusals.js';
import { knownRead, PAUSED_WITH, readOnce } from './shared-reads.js';
import { UserErrorRef, type UserError } from './user-errors.js';

const TurnStatusEnum = builder.enumType('TurnStatus', {
  values: ['RUNNING', 'PAUSED', 'COMPLETED', 'CANCELLED', 'FAILED', 'EXPIRED'] as const,
});

TurnRef.implement({
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id'),
    thread: t.field({
      type: ThreadRef,
      resolve: async (turn, _args, ctx) => (await ctx.loaders.thread(turn.threadId, turn.ownerId))!,
    }),
    status: t.field({
      type: TurnStatusEnum,
      // Past its expiry a paused turn reads EXPIRED even before the sweeper records it, like its elicitations.
      resolve: (turn, _args, ctx) => turnStatusAt(turn, ctx.services.clock().toISOString()),
    }),
    text: t.string({
      nullable: true,
      description:
        "COMPLETED: the assistant's final answer. PAUSED: a question in prose, built from the trusted tool " +
        'definitions alone, so that a client that ignores elicitations still shows the user what waits for an answer. ' +
        'Null otherwise: RUNNING, FAILED (see `error`), CANCELLED and EXPIRED (the TOOL messages say what did not run).',
      resolve: (turn, _args, ctx) => turnTextAt(turn, ctx.services.clock().toISOString()),
    }),
    pendingElicitations: t.field({
      type: [ElicitationRef],
      description: 'The confirmation requests this turn waits on (empty unless PAUSED).',
      resolve: async (turn, _args, ctx) => {
        if (turn.status !== 'PAUSED') return [];
        const now = ctx.services.clock().toISOString();
        // The pause's own requests when the mutation that paused it primed them (PAUSED_WITH), else all the turn's.
        const candidates = await readOnce(turn, PAUSED_WITH, () => turnElicitations(turn, ctx));
        return candidates.filter((e) => elicitationStatusAt(e, now) === 'PENDING');
      },
    }),
    elicitations: t.field({ type: [ElicitationRef], resolve: (turn, _args, ctx) => turnElicitations(turn, ctx) }),
    messages: t.field({
      type: [MessageRef],
      description: 'The messages this turn added to the thread, oldest first.',
      resolve: (turn, _args, ctx) => readOnce(turn, 'messages', () => ctx.loaders.turnMessages(turn.id)),
    }),
    userMessage: t.field({
      type: MessageRef,
      nullable: true,
      description:
        "The user's message that started this turn: what the user asked for (the first of `messages`). A client can " +
        'show it beside a confirmation request of the turn, to say what it is about.',
      resolve: async (turn, _args, ctx) => {
        const messages = await readOnce(turn, 'messages', () => ctx.loaders.turnMessages(turn.id));
        return messages.find((m) => m.role === 'USER') ?? null;
      },
    }),
    iterations: t.exposeInt('iterations', { description: 'Model calls made so far in this turn.' }),
    error: t.exposeString('error', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (turn) => turn.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (turn) => turn.updatedAt }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When PAUSED: the moment its elicitations expire.',
      resolve: (turn) => (turn.status === 'PAUSED' ? turn.expiresAt : null),
    }),
  }),
});

function turnElicitations(turn: TurnRecord, ctx: GraphQLContext) {
  return readOnce(turn, 'elicitations', () => ctx.loaders.turnElicitations(turn.id));
}

builder.queryField('turn', (t) =>
  t.field({
    type: TurnRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getTurn(ctx.services, ctx.viewer, String(args.id)),
  }),
);

const StartTurnInput = builder.inputType('StartTurnInput', {
  fields: (t) => ({
    agentId: t.id({ required: true }),
    threadId: t.id({ description: 'Omit to open a new thread.' }),
    message: t.string({ required: true }),
    background: t.boolean({
      defaultValue: false,
      description: 'When true, return at once with the turn RUNNING; follow it by polling or turnUpdated.',
    }),
    idempotencyKey: t.string({
      description:
        `A name of your choosing for this request (1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, e.g. a UUID), ` +
        'so that it can be sent again safely: the same key with the same agentId, threadId and message returns the ' +
        'turn the first request started, as it is now, instead of starting another; with other input it is the user ' +
        'error IDEMPOTENCY_KEY_REUSED. Keys are per user and kept at least 24 hours. A request that was refused (a ' +
        'userErrors entry) claims no key.',
    }),
  }),
});

interface StartTurnResult {
  turn: TurnRecord | null;
  thread: ThreadRecord | null;
  userErrors: UserError[];
}

const StartTurnPayload = builder.objectRef<StartTurnResult>('StartTurnPayload').implement({
  fields: (t) => ({
    turn: t.field({ type: TurnRef, nullable: true, resolve: (p) => p.turn }),
    thread: t.field({ type: ThreadRef, nullable: true, resolve: (p) => p.thread }),
    userErrors: t.field({ type: [UserErrorRef], resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('startTurn', (t) =>
  t.field({
    type: StartTurnPayload,
    description:
      'Send a user message to an agent, in a new thread or an existing one. Unless `background` is true, the call ' +
      'returns when the turn has stopped: COMPLETED, PAUSED (waiting for confirmations), CANCELLED, FAILED. ' +
      'Retrying: after a GraphQL error or a timeout the turn may have started; send the request again with the same ' +
      '`idempotencyKey` to get that turn rather than a second one. Without a key, look at the thread first.',
    args: { input: t.arg({ type: StartTurnInput, required: true }) },
    resolve: async (_root, { input }, ctx): Promise<StartTurnResult> => {
      const outcome = await startTurn(ctx.services, ctx.viewer, {
        agentId: String(input.agentId),
        threadId: optionalId(input.threadId),
        message: input.message,
        background: input.background ?? false,
        idempotencyKey: input.idempotencyKey,
      });
      if (!outcome.ok) return { turn: null, thread: null, userErrors: [startTurnError(outcome)] };
      if (outcome.pausedWith) knownRead(outcome.turn, PAUSED_WITH, outcome.pausedWith);
      return { turn: outcome.turn, thread: outcome.thread, userErrors: [] };
    },
  }),
);

builder.subscriptionField('turnUpdated', (t) =>
  t.field({
    type: TurnRef,
    description: 'The turn, each time its status, messages or elicitations change.',
    args: { turnId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      const turnId = String(args.turnId);
      // Listen first, read second: the current state, then every change, with nothing in between lost.
      const updates = ctx.services.pubsub.subscribe('turn', turnId);
      await updates.listening;
      const turn = await getTurn(ctx.services, ctx.viewer, turnId);
      if (!turn) {
        // Another user's turn reads as unknown; the error is the operation's result, the connection stays.
        await updates.return();
        throw new GraphQLError('No turn with this id.', { extensions: { code: 'NOT_FOUND' } });
      }
      return startWith([turn], updates);
    },
    resolve: (turn) => turn,
  }),
);
