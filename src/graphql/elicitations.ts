import { validateArguments } from '../agent/arguments.js';
import { contentBytes, validateContent } from '../agent/content.js';
import { editAllowed } from '../agent/gating.js';
import { effectiveAnswer } from '../domain/answer-rules.js';
import { MAX_GRANT_TTL_SECONDS } from '../domain/grants.js';
import { elicitationStatusAt } from '../domain/expiry.js';
import type {
  Agent,
  ElicitationAnswer,
  ElicitationRecord,
  JsonObject,
  RememberChoice,
  TurnRecord,
} from '../domain/records.js';
import type { GraphQLContext } from './builder.js';
import { ToolAnnotationsRef } from './agents.js';
import { builder } from './builder.js';
import { startWith } from './live.js';
import { clampFirst, NodeRef, optionalId, PageInfoRef } from './node.js';
import { connection } from './threads.js';
import { knownRead } from './shared-reads.js';
import { PAUSED_WITH, TurnRef } from './turns.js';
import { userError, UserErrorRef, type UserError } from './user-errors.js';

const ElicitationStatusEnum = builder.enumType('ElicitationStatus', {
  values: ['PENDING', 'ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'] as const,
});
/** How a closed elicitation was closed: answered by its user, or closed by the server without an answer. */
export type ElicitationResolution = 'ANSWERED' | 'EXPIRED' | 'SUPERSEDED' | 'TURN_CANCELLED';

const ElicitationResolutionEnum = builder.enumType('ElicitationResolution', {
  description: 'Audit: how an elicitation stopped waiting.',
  values: {
    ANSWERED: { description: 'Its user answered it (resolvedBy, resolvedAt, response).' },
    EXPIRED: { description: 'Nobody answered before expiresAt; nothing ran.' },
    SUPERSEDED: {
      description: 'A new message in the thread cancelled the paused turn before this was answered; nothing ran.',
    },
    TURN_CANCELLED: {
      description: 'Another elicitation of the same step was answered CANCEL, which cancelled the turn; nothing ran.',
    },
  } as const,
});

/** Derived from what is stored: the answer, the status, and (for an unanswered CANCELLED one) its siblings' answers. */
async function resolutionOf(
  e: ElicitationRecord,
  now: string,
  siblings: () => Promise<ElicitationRecord[]>,
): Promise<ElicitationResolution | null> {
  if (e.response) return 'ANSWERED';
  const status = elicitationStatusAt(e, now);
  if (status === 'PENDING') return null;
  if (status === 'EXPIRED') return 'EXPIRED';
  const cancelledBySibling = (await siblings()).some((other) => other.response?.action === 'CANCEL');
  return cancelledBySibling ? 'TURN_CANCELLED' : 'SUPERSEDED';
}

const ElicitationActionEnum = builder.enumType('ElicitationAction', {
  values: ['ACCEPT', 'DECLINE', 'CANCEL'] as const,
});

const ElicitationToolCallRef = builder.objectRef<ElicitationRecord['toolCall']>('ElicitationToolCall').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    toolId: t.exposeID('toolId'),
    arguments: t.field({
      type: 'JSON',
      description:
        "The model's arguments: exactly what runs on a plain ACCEPT (an ACCEPT with `arguments` runs those instead).",
      resolve: (c) => c.arguments,
    }),
    annotations: t.field({ type: ToolAnnotationsRef, resolve: (c) => c.annotations }),
  }),
});

export const ApprovalGrantScopeEnum = builder.enumType('ApprovalGrantScope', {
  description: 'Where a remembered approval lets later calls of the tool run unasked.',
  values: {
    THREAD: { description: 'In the thread of the accepted call only.' },
    AGENT: { description: 'In every thread of the user with this agent.' },
  } as const,
});

const RememberedApprovalRef = builder.objectRef<RememberChoice>('RememberedApproval').implement({
  description: 'What an ACCEPT asked to remember (see Elicitation.grant for the grant it recorded).',
  fields: (t) => ({
    scope: t.field({ type: ApprovalGrantScopeEnum, resolve: (r) => r.scope }),
    ttlSeconds: t.exposeInt('ttlSeconds'),
  }),
});

const ElicitationResponseRef = builder.objectRef<ElicitationAnswer>('ElicitationResponse').implement({
  fields: (t) => ({
    action: t.field({ type: ElicitationActionEnum, resolve: (r) => r.action }),
    content: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Present with ACCEPT and DECLINE when given; matches requestedSchema.',
      resolve: (r) => r.content,
    }),
    arguments: t.field({
      type: 'JSON',
      nullable: true,
      description:
        "ACCEPT with edited arguments: what ran instead of the model's (toolCall.arguments keeps those); null otherwise.",
      resolve: (r) => r.arguments ?? null,
    }),
    remember: t.field({
      type: RememberedApprovalRef,
      nullable: true,
      description: 'ACCEPT that asked to remember the approval; null otherwise.',
      resolve: (r) => r.remember ?? null,
    }),
  }),
});

export const ElicitationRef = builder.objectRef<ElicitationRecord>('Elicitation');

ElicitationRef.implement({
  description:
    'A confirmation request, shaped as MCP elicitation (form mode). The yes/no is the action of the answer, not a field of requestedSchema.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id'),
    turn: t.field({
      type: TurnRef,
      resolve: async (e, _args, ctx) => (await ctx.loaders.turn(e.turnId, e.ownerId))!,
    }),
    status: t.field({
      type: ElicitationStatusEnum,
      resolve: (e, _args, ctx) => elicitationStatusAt(e, ctx.services.clock().toISOString()),
    }),
    message: t.string({
      description: 'Built from the trusted tool definition only, never from model output.',
      resolve: (e) => e.request.message,
    }),
    requestedSchema: t.field({
      type: 'JSON',
      description: 'A flat JSON Schema object of primitive properties (MCP restricted schema).',
      resolve: (e) => e.request.requestedSchema,
    }),
    _meta: t.field({
      type: 'JSON',
      description: 'MCP _meta; holds the tool call under the key toolgate.dev/tool_call.',
      resolve: (e) => e.request._meta,
    }),
    toolCall: t.field({ type: ElicitationToolCallRef, resolve: (e) => e.toolCall }),
    mcpRequest: t.field({
      type: 'JSON',
      description:
        'The params of the equivalent MCP elicitation/create request: mode, message, requestedSchema, _meta.',
      resolve: (e) => ({
        mode: 'form',
        message: e.request.message,
        requestedSchema: e.request.requestedSchema,
        _meta: e.request._meta,
      }),
    }),
    response: t.field({ type: ElicitationResponseRef, nullable: true, resolve: (e) => e.response }),
    canEdit: t.boolean({
      description: "Whether an ACCEPT may carry edited arguments: the agent's allowEdit for this tool, as of now.",
      resolve: async (e, _args, ctx) => {
        const agent = await ctx.loaders.agent(e.agentId);
        return agent !== null && editAllowed(agent, e.toolCall.toolId);
      },
    }),
    canRemember: t.boolean({
      description:
        'Whether an ACCEPT may carry remember: false for a call that asks every time (ALWAYS, or a listener asking ' +
        'for reasons of its own).',
      resolve: async (e, _args, ctx) => rememberable(e, await ctx.loaders.agent(e.agentId)),
    }),
    resolvedBy: t.exposeString('resolvedBy', {
      nullable: true,
      description:
        'Audit: the user who answered; null until answered, and null when the server closed it without an answer ' +
        '(see resolution).',
    }),
    resolution: t.field({
      type: ElicitationResolutionEnum,
      nullable: true,
      description: 'Audit: how it stopped waiting; null while PENDING.',
      resolve: (e, _args, ctx) =>
        resolutionOf(e, ctx.services.clock().toISOString(), () => ctx.loaders.turnElicitations(e.turnId)),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (e) => e.createdAt }),
    expiresAt: t.field({ type: 'DateTime', resolve: (e) => e.expiresAt }),
    resolvedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'Audit: when it was answered, or closed without an answer (for EXPIRED: when the server recorded the expiry, ' +
        'at or after expiresAt; null until then).',
      resolve: (e) => e.resolvedAt,
    }),
  }),
});

const ElicitationEdgeRef = builder.objectRef<{ cursor: string; node: ElicitationRecord }>('ElicitationEdge').implement({
  fields: (t) => ({
    cursor: t.exposeString('cursor'),
    node: t.field({ type: ElicitationRef, resolve: (e) => e.node }),
  }),
});

type ElicitationConnection = ReturnType<typeof connection<ElicitationRecord>> & { totalCount: number };

const ElicitationConnectionRef = builder.objectRef<ElicitationConnection>('ElicitationConnection').implement({
  fields: (t) => ({
    edges: t.field({ type: [ElicitationEdgeRef], resolve: (c) => c.edges }),
    pageInfo: t.field({ type: PageInfoRef, resolve: (c) => c.pageInfo }),
    totalCount: t.exposeInt('totalCount'),
  }),
});

builder.queryFields((t) => ({
  elicitation: t.field({
    type: ElicitationRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.store.getElicitation(String(args.id), ctx.viewer.id),
  }),
  elicitations: t.field({
    type: ElicitationConnectionRef,
    description:
      "Audit: the viewer's elicitations of every status, oldest first (or with newestFirst newest first), with who " +
      'answered them and when; optionally of one thread or agent, or of some statuses only.',
    args: {
      threadId: t.arg.id(),
      agentId: t.arg.id(),
      status: t.arg({ type: [ElicitationStatusEnum] }),
      first: t.arg.int({ defaultValue: 50 }),
      after: t.arg.string(),
      newestFirst: t.arg.boolean({
        defaultValue: false,
        description: 'Newest first; `after` then pages on towards older ones.',
      }),
    },
    resolve: async (_root, args, ctx) => {
      const page = await ctx.services.store.listElicitations(
        ctx.viewer.id,
        {
          threadId: optionalId(args.threadId),
          agentId: optionalId(args.agentId),
          statuses: args.status ?? null,
        },
        ctx.services.clock().toISOString(),
        clampFirst(args.first, 50, 200),
        args.after ?? null,
        args.newestFirst === true,
      );
      return { ...connection(page), totalCount: page.totalCount };
    },
  }),
  pendingElicitations: t.field({
    type: ElicitationConnectionRef,
    description:
      "The viewer's confirmation requests that still wait for an answer, oldest first. This is what a polling client calls.",
    args: { threadId: t.arg.id(), agentId: t.arg.id(), first: t.arg.int({ defaultValue: 50 }), after: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const page = await ctx.services.store.listPendingElicitations(
        ctx.viewer.id,
        { threadId: optionalId(args.threadId), agentId: optionalId(args.agentId) },
        ctx.services.clock().toISOString(),
        clampFirst(args.first, 50, 200),
        args.after ?? null,
      );
      return { ...connection(page), totalCount: page.totalCount };
    },
  }),
}));

const RememberApprovalInput = builder.inputType('RememberApprovalInput', {
  description:
    'Remember this ACCEPT: later calls of the same tool (while its definition stays the same) run without asking, in ' +
    'this scope, for ttlSeconds, until revoked. Per user; a tool set to ALWAYS cannot be remembered.',
  fields: (t) => ({
    scope: t.field({ type: ApprovalGrantScopeEnum, required: true }),
    ttlSeconds: t.int({ required: true, description: `1 to ${MAX_GRANT_TTL_SECONDS} (30 days).` }),
  }),
});

const ResolveElicitationInput = builder.inputType('ResolveElicitationInput', {
  fields: (t) => ({
    arguments: t.field({
      type: 'JSON',
      description:
        "With ACCEPT: run the call with these arguments instead of the model's (edit, then accept). Validated against " +
        "the tool's inputSchema; the pre-execute listeners see the edited call again (a veto still wins). Equal to the " +
        "model's arguments (key order aside): a plain ACCEPT, not an edit.",
    }),
    remember: t.field({ type: RememberApprovalInput, description: 'With ACCEPT: remember the approval.' }),
    elicitationId: t.id({ required: true }),
    action: t.field({ type: ElicitationActionEnum, required: true }),
    content: t.field({
      type: 'JSON',
      description:
        'With ACCEPT or DECLINE: an object matching the elicitation\'s requestedSchema, e.g. {instructions: "..."}.',
    }),
  }),
});

interface ResolveResult {
  elicitation: ElicitationRecord | null;
  turn: TurnRecord | null;
  userErrors: UserError[];
}

const ResolveElicitationPayload = builder.objectRef<ResolveResult>('ResolveElicitationPayload').implement({
  fields: (t) => ({
    elicitation: t.field({ type: ElicitationRef, nullable: true, resolve: (p) => p.elicitation }),
    turn: t.field({
      type: TurnRef,
      nullable: true,
      description:
        'The turn after the answer was applied: PAUSED while other elicitations of it wait, else where it stopped next.',
      resolve: (p) => p.turn,
    }),
    userErrors: t.field({ type: [UserErrorRef], resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('resolveElicitation', (t) =>
  t.field({
    type: ResolveElicitationPayload,
    description:
      'Answer one confirmation request. Resolving the same elicitation again with the same action and content returns ' +
      'the same result and does nothing twice. Retrying: after a GraphQL error or a timeout, send the same answer ' +
      'again (the elicitation id is its idempotency key): if the first one was recorded, you get its result; a ' +
      'different answer after it is ALREADY_RESOLVED.',
    args: { input: t.arg({ type: ResolveElicitationInput, required: true }) },
    resolve: async (_root, { input }, ctx): Promise<ResolveResult> => {
      const fail = (error: UserError) => ({ elicitation: null, turn: null, userErrors: [error] });
      const { services, viewer } = ctx;
      const elicitationId = String(input.elicitationId);
      const content = input.content ?? null;
      // Size first, before any lookup: the answer is the same for every id, and nothing large is parsed further.
      if (contentBytes(content) > services.limits.maxContentBytes) {
        return fail(
          userError('INVALID_INPUT', `content is larger than ${services.limits.maxContentBytes} bytes of JSON.`, [
            'input',
            'content',
          ]),
        );
      }
      const existing = await services.store.getElicitation(elicitationId, viewer.id);
      if (!existing) return fail(userError('NOT_FOUND', 'No elicitation with this id.', ['input', 'elicitationId']));
      const problem = validateContent(existing.request.requestedSchema, input.action, content);
      if (problem) return fail(userError('INVALID_CONTENT', problem.message, ['input', 'content', ...problem.path]));
      const given: ElicitationAnswer = { action: input.action, content: content as JsonObject | null };
      if (input.arguments != null) given.arguments = input.arguments as JsonObject;
      if (input.remember != null)
        given.remember = { scope: input.remember.scope, ttlSeconds: input.remember.ttlSeconds };
      // Before anything else reads it: an "edit" that changes nothing is a plain ACCEPT, recorded and reported as one.
      const answer = effectiveAnswer(given, existing.toolCall.arguments);
      const refusal = await checkEditAndRemember(existing, answer, ctx);
      if (refusal) return fail(refusal);
      const result = await services.runner.resolveElicitation({ elicitationId, ownerId: viewer.id, answer });
      if (!result.ok) return fail(userError(result.code, result.message, ['input', 'elicitationId']));
      if (result.pausedWith) knownRead(result.turn, PAUSED_WITH, result.pausedWith);
      return { elicitation: result.elicitation, turn: result.turn, userErrors: [] };
    },
  }),
);

/**
 * Whether an ACCEPT of this request may remember its approval: it could when it was asked (ElicitationToolCall.grantable)
 * and the tool is not set to ALWAYS now (an admin may have set it since; such a tool never takes a grant).
 */
function rememberable(elicitation: ElicitationRecord, agent: Agent | null): boolean {
  const { definitionHash, grantable, toolId } = elicitation.toolCall;
  return Boolean(definitionHash && grantable) && agent?.toolConfirmation[toolId] !== 'ALWAYS';
}

/**
 * Edited arguments and remember, checked before anything is recorded: only with ACCEPT; edits only where the agent
 * allows them and only as the tool's inputSchema accepts; remember only for a tool that does not ask every time.
 */
async function checkEditAndRemember(
  elicitation: ElicitationRecord,
  answer: ElicitationAnswer,
  ctx: GraphQLContext,
): Promise<UserError | null> {
  const { arguments: edited, remember } = answer;
  // Answered already: the store decides (the same answer again is a duplicate, another is ALREADY_RESOLVED), whatever
  // changed in the agent or the tool since.
  if ((edited == null && remember == null) || elicitation.status !== 'PENDING') return null;
  const field = edited != null ? 'arguments' : 'remember';
  if (answer.action !== 'ACCEPT') {
    return userError('INVALID_INPUT', `${field} can only be given with ACCEPT.`, ['input', field]);
  }
  const { toolId, name } = elicitation.toolCall;
  const agent = await ctx.services.store.getAgent(elicitation.agentId);
  if (edited != null) {
    const tool = agent && (await ctx.services.tools.toolOf(agent, toolId));
    if (agent && !editAllowed(agent, toolId)) {
      return userError('FORBIDDEN', `Editing the arguments of ${name} is turned off for this agent (allowEdit).`, [
        'input',
        'arguments',
      ]);
    }
    if (!tool) {
      return userError('INVALID_INPUT', `The tool ${toolId} is no longer available to this agent.`, [
        'input',
        'arguments',
      ]);
    }
    const problem = validateArguments(tool.inputSchema, edited);
    if (problem) return userError('INVALID_CONTENT', problem.message, ['input', 'arguments', ...problem.path]);
  }
  if (remember != null) {
    if (
      !Number.isInteger(remember.ttlSeconds) ||
      remember.ttlSeconds < 1 ||
      remember.ttlSeconds > MAX_GRANT_TTL_SECONDS
    ) {
      return userError('INVALID_INPUT', `ttlSeconds must be between 1 and ${MAX_GRANT_TTL_SECONDS}.`, [
        'input',
        'remember',
        'ttlSeconds',
      ]);
    }
    if (!rememberable(elicitation, agent)) {
      return userError(
        'INVALID_INPUT',
        `The approval of ${name} cannot be remembered: it asks every time (ALWAYS, or a policy of its own), or was ` +
          'requested before approvals could be remembered.',
        ['input', 'remember'],
      );
    }
  }
  return null;
}

builder.subscriptionField('elicitationRequested', (t) =>
  t.field({
    type: ElicitationRef,
    description:
      'Each new confirmation request of the viewer, optionally of one thread or agent: each request published ' +
      'after the subscription starts listening. With includePending: true, the requests already pending (not expired, ' +
      'matching the filters, oldest first) come first, then each new one, each once: nothing falls between a ' +
      'pendingElicitations query and this, and a client that subscribes and then starts a turn sees its pause.',
    args: {
      threadId: t.arg.id(),
      agentId: t.arg.id(),
      includePending: t.arg.boolean({
        defaultValue: false,
        description: 'First deliver the requests already pending when the subscription starts, then each new one.',
      }),
    },
    subscribe: async (_root, args, ctx) => {
      const { services, viewer } = ctx;
      const threadId = optionalId(args.threadId);
      const agentId = optionalId(args.agentId);
      const other = (e: ElicitationRecord) =>
        (threadId !== null && e.threadId !== threadId) || (agentId !== null && e.agentId !== agentId);
      // Listen first, then (with includePending) catch up on the requests already pending: a client that subscribes
      // and then starts a turn sees its pause whichever reaches the server first. Each request is delivered once.
      const updates = services.pubsub.subscribe('elicitations', viewer.id);
      // Several instances (Redis): from here on a request published by any of them reaches this subscription.
      await updates.listening;
      if (args.includePending !== true) return startWith([], updates, other);
      const pending: ElicitationRecord[] = [];
      try {
        for (let after: string | null = null; ;) {
          const page = await services.store.listPendingElicitations(
            viewer.id,
            { threadId, agentId },
            services.clock().toISOString(),
            200,
            after,
          );
          pending.push(...page.items);
          if (!page.hasNextPage) break;
          after = page.endCursor;
        }
      } catch (error) {
        await updates.return();
        throw error;
      }
      const sent = new Set(pending.map((e) => e.id));
      return startWith(pending, updates, (e) => other(e) || sent.delete(e.id));
    },
    resolve: (e) => e,
  }),
);

// Their display fields (argumentsDisplay) are added in visible-text.ts.
export { ElicitationResponseRef, ElicitationToolCallRef };
