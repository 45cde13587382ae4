import { GraphQLError } from 'graphql';
import { answerElicitation } from '../app/answer-elicitation.js';
import { stepUpRequired } from '../app/passkeys.js';
import { callerConnected } from '../app/caller-presence.js';
import {
  allPendingElicitations,
  elicitationAnswers,
  elicitationResolution,
  getElicitation,
  listElicitations,
  listPendingElicitations,
  mayAnswerNow,
  seesTurnOf,
  type AnswerEntry,
} from '../app/reads.js';
import { mayEdit, mayRemember } from '../domain/approvers.js';
import { MAX_GRANT_TTL_SECONDS } from '../domain/grants.js';
import { elicitationStatusAt } from '../domain/expiry.js';
import { isGateway } from '../domain/gateway.js';
import type {
  ElicitationAnswer,
  ElicitationApproval,
  ElicitationRecord,
  RememberChoice,
  TurnRecord,
} from '../domain/records.js';
import { builder, type GraphQLContext } from './builder.js';
import { DeliveredOnce, startWith } from './live.js';
import { connection, NodeRef, optionalId, PageInfoRef } from './node.js';
import { answerElicitationError, othersTurnError } from './refusals.js';
import { AgentRef, ApprovalGrantScopeEnum, ElicitationRef, ToolAnnotationsRef, TurnRef } from './refs.js';
import { knownRead, PAUSED_WITH, readOnce } from './shared-reads.js';
import { UserErrorRef, type UserError } from './user-errors.js';

const ElicitationStatusEnum = builder.enumType('ElicitationStatus', {
  values: ['PENDING', 'ACCEPTED', 'DECLINED', 'CANCELLED', 'EXPIRED'] as const,
});

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

const CallerWithdrawalEnum = builder.enumType('CallerWithdrawal', {
  description:
    'Why an MCP gateway call was withdrawn: its client stopped waiting, and nothing could bring it back to the call ' +
    '(no idempotency key, not a task), so the call was answered CANCEL on its behalf and nothing ran (docs/mcp-gateway.md).',
  values: {
    CANCELLED: { description: 'The client cancelled its tools/call (notifications/cancelled), e.g. on its timeout.' },
    DISCONNECTED: { description: 'The client went away: its response stream closed, or it ended its session.' },
  } as const,
});

const PendingElicitationScopeEnum = builder.enumType('PendingElicitationScope', {
  description: 'Whose pending confirmation requests (docs/approvers.md).',
  values: {
    MINE: { description: "The viewer's own: their turns' and gateway calls' requests." },
    TO_ANSWER: {
      description:
        "Requests of others the viewer may answer now: their approvers policy names one of the viewer's roles (an " +
        'escalation role once its time has come), and the viewer has not answered them yet (or an edit outdated ' +
        "their ACCEPT). Their turn is not the viewer's to see.",
    },
  } as const,
});

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

const ApprovalRequesterEnum = builder.enumType('ApprovalRequester', {
  description: "The requester's part under an approvers policy.",
  values: {
    ALSO: { description: 'The requester may answer too, and counts as one approver.' },
    EXCLUDED: { description: 'Four eyes: the requester may only CANCEL; others approve.' },
  } as const,
});

/** A request's escalation as the API shows it: the policy's, and when the sweeper marked the request escalated. */
type EscalationView = NonNullable<ElicitationApproval['escalation']> & { escalatedAt: string | null };
type ApprovalView = Omit<ElicitationApproval, 'escalation'> & { escalation: EscalationView | null };

/** The request's policy with its escalation state; null for the requester alone. */
function approvalOf(e: ElicitationRecord): ApprovalView | null {
  if (!e.approval) return null;
  const { escalation } = e.approval;
  return { ...e.approval, escalation: escalation && { ...escalation, escalatedAt: e.escalatedAt } };
}

const ElicitationEscalationRef = builder.objectRef<EscalationView>('ElicitationEscalation').implement({
  description: 'When nobody answered by `at`, members of these roles may answer as well.',
  fields: (t) => ({
    roles: t.stringList({ resolve: (e) => e.roles }),
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
    escalatedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When the sweeper marked the request escalated and told these roles (webhook elicitation.escalated); null ' +
        'before. They may answer from `at` on either way.',
      resolve: (e) => e.escalatedAt,
    }),
  }),
});

const ElicitationApprovalRef = builder.objectRef<ApprovalView>('ElicitationApproval').implement({
  description: 'Who may answer a request besides its requester, as decided when it was asked (docs/approvers.md).',
  fields: (t) => ({
    roles: t.stringList({ description: 'Members of any of these roles may answer.', resolve: (a) => a.roles }),
    required: t.exposeInt('required', {
      description: 'The distinct ACCEPTs of the current proposal that resolve it.',
    }),
    requester: t.field({ type: ApprovalRequesterEnum, resolve: (a) => a.requester }),
    escalation: t.field({ type: ElicitationEscalationRef, nullable: true, resolve: (a) => a.escalation }),
  }),
});

const ElicitationApproverAnswerRef = builder.objectRef<AnswerEntry>('ElicitationApproverAnswer').implement({
  description: 'One answer to a request: who gave it, what, and when.',
  fields: (t) => ({
    approver: t.exposeString('approverId', { description: 'The user who answered.' }),
    action: t.field({ type: ElicitationActionEnum, resolve: (a) => a.action }),
    content: t.field({ type: 'JSON', nullable: true, resolve: (a) => a.content }),
    arguments: t.field({
      type: 'JSON',
      nullable: true,
      description: "ACCEPT with edited arguments: the proposal it made and approved; null: the model's arguments.",
      resolve: (a) => a.arguments,
    }),
    answeredAt: t.field({ type: 'DateTime', resolve: (a) => a.answeredAt }),
    approverName: t.string({
      nullable: true,
      description:
        "The approver's display name from their identity provider when they answered; null for static tokens and answers recorded before names were kept.",
      resolve: (a) => a.identity?.name ?? null,
    }),
    approverIssuer: t.string({
      nullable: true,
      description: 'The identity provider that vouched for the approver (its issuer URL); null for static tokens.',
      resolve: (a) => a.identity?.issuer ?? null,
    }),
    approverSubject: t.string({
      nullable: true,
      description: "The approver as their identity provider knows them (the token's subject); null for static tokens.",
      resolve: (a) => a.identity?.subject ?? null,
    }),
    approverRoles: t.stringList({
      nullable: true,
      description:
        'The roles the approver held when they answered (docs/approvers.md: an answer counts as given then); null for answers recorded before roles were kept.',
      resolve: (a) => (a.identity ? [...a.identity.roles] : null),
    }),
    counts: t.boolean({
      description:
        'Whether it counts towards the quorum now: an ACCEPT stops counting when an edit proposes other arguments.',
      resolve: (a) => a.counts,
    }),
  }),
});

ElicitationRef.implement({
  description:
    'A confirmation request, shaped as MCP elicitation (form mode). The yes/no is the action of the answer, not a field of requestedSchema.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id'),
    turn: t.field({
      type: TurnRef,
      description:
        "The turn that asked. Only its requester sees it: for an approver of another user's request this is a FORBIDDEN error.",
      resolve: async (e, _args, ctx) => {
        if (!seesTurnOf(e, ctx.viewer)) throw othersTurnError();
        return (await ctx.loaders.turn(e.turnId, e.ownerId))!;
      },
    }),
    agent: t.field({
      type: AgentRef,
      nullable: true,
      description: 'The agent (or MCP gateway) whose call asks; null if it no longer exists.',
      resolve: (e, _args, ctx) => ctx.loaders.agent(e.agentId),
    }),
    requestedBy: t.exposeString('ownerId', {
      description: 'The user whose turn or gateway call asked: who must answer it, or whose request approvers answer.',
    }),
    approval: t.field({
      type: ElicitationApprovalRef,
      nullable: true,
      description: 'Who may answer besides the requester (docs/approvers.md); null: the requester alone.',
      resolve: approvalOf,
    }),
    answers: t.field({
      type: [ElicitationApproverAnswerRef],
      description:
        'Who answered, in the order they did: each approver under an approvers policy, else the requester once answered.',
      resolve: (e, _args, ctx) => elicitationAnswers(e, (id) => ctx.loaders.approverAnswers(id)),
    }),
    receipt: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'The signed decision record of the ACCEPT that let this call run (docs/receipts.md): verifiable offline with the keys at /.well-known/toolgate-receipt-keys.json; null until accepted.',
      resolve: (e, _args, ctx) => (e.status === 'ACCEPTED' ? ctx.loaders.receipt(e) : null),
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
      resolve: async (e, _args, ctx) => mayEdit(e, await ctx.loaders.agent(e.agentId)),
    }),
    canRemember: t.boolean({
      description:
        'Whether an ACCEPT may carry remember: false for a call that asks every time (ALWAYS, or a listener asking ' +
        'for reasons of its own), and for a tool that requires passkey step-up.',
      resolve: async (e, _args, ctx) =>
        !stepUpRequired(ctx.services, e) && mayRemember(e, await ctx.loaders.agent(e.agentId)),
    }),
    resolvedBy: t.exposeString('resolvedBy', {
      nullable: true,
      description:
        'Audit: the user who answered (under an approvers policy, the one whose answer decided it); null until ' +
        'answered, and null when the server closed it without an answer (see resolution).',
    }),
    resolution: t.field({
      type: ElicitationResolutionEnum,
      nullable: true,
      description: 'Audit: how it stopped waiting; null while PENDING.',
      resolve: (e, _args, ctx) =>
        elicitationResolution(e, ctx.services.clock().toISOString(), () => ctx.loaders.turnElicitations(e.turnId)),
    }),
    withdrawn: t.field({
      type: CallerWithdrawalEnum,
      nullable: true,
      description:
        "Set when the gateway call's client stopped waiting and the call was withdrawn: answered CANCEL by its " +
        'requester (resolvedBy, resolvedAt) on its behalf; null for any other request.',
      resolve: (e) => e.withdrawn,
    }),
    callerConnected: t.boolean({
      nullable: true,
      description:
        "A gateway call's PENDING request: whether the MCP client that made the call waits for it now, on any " +
        "instance (false: it went away, and can come back with the call's idempotency key). null while no client " +
        "has waited for it (a call just made, or a task's, whose client polls), for any other request, and once it " +
        'stopped waiting (docs/mcp-gateway.md).',
      resolve: async (e, _args, ctx) => {
        const now = ctx.services.clock();
        const pending = elicitationStatusAt(e, now.toISOString()) === 'PENDING';
        const agent = pending ? await ctx.loaders.agent(e.agentId) : null;
        return callerConnected(e, agent ? isGateway(agent) : false, now);
      },
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
    resolve: (_root, args, ctx) => getElicitation(ctx.services, ctx.viewer, String(args.id)),
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
      const page = await listElicitations(ctx.services, ctx.viewer, {
        threadId: optionalId(args.threadId),
        agentId: optionalId(args.agentId),
        statuses: args.status ?? null,
        first: args.first,
        after: args.after,
        newestFirst: args.newestFirst === true,
      });
      return { ...connection(page), totalCount: page.totalCount };
    },
  }),
  pendingElicitations: t.field({
    type: ElicitationConnectionRef,
    description:
      "The viewer's confirmation requests that still wait for an answer, oldest first. This is what a polling client " +
      'calls. With scope TO_ANSWER: the requests of others the viewer may answer now as an approver.',
    args: {
      threadId: t.arg.id(),
      agentId: t.arg.id(),
      first: t.arg.int({ defaultValue: 50 }),
      after: t.arg.string(),
      scope: t.arg({ type: PendingElicitationScopeEnum, defaultValue: 'MINE' }),
    },
    resolve: async (_root, args, ctx) => {
      const page = await listPendingElicitations(ctx.services, ctx.viewer, {
        threadId: optionalId(args.threadId),
        agentId: optionalId(args.agentId),
        first: args.first,
        after: args.after,
        scope: args.scope ?? 'MINE',
      });
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
    passkeyAssertion: t.field({
      type: 'JSON',
      description:
        "With ACCEPT of a request whose stepUp is required: the browser's startAuthentication result (a WebAuthn " +
        "assertion) over stepUp's challenge for the arguments that will run (docs/receipts.md#passkey-step-up).",
    }),
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
      const outcome = await answerElicitation(ctx.services, ctx.viewer, {
        elicitationId: String(input.elicitationId),
        action: input.action,
        content: input.content,
        arguments: input.arguments,
        remember: input.remember,
        passkeyAssertion: input.passkeyAssertion,
        origin: ctx.origin ?? null,
      });
      if (!outcome.ok) return { elicitation: null, turn: null, userErrors: [answerElicitationError(outcome)] };
      if (outcome.pausedWith && outcome.turn) knownRead(outcome.turn, PAUSED_WITH, outcome.pausedWith);
      return { elicitation: outcome.elicitation, turn: outcome.turn, userErrors: [] };
    },
  }),
);

builder.subscriptionField('elicitationRequested', (t) =>
  t.field({
    type: ElicitationRef,
    description:
      'Each new confirmation request of the viewer, optionally of one thread or agent: each request published ' +
      'after the subscription starts listening. With includePending: true, the requests already pending (not expired, ' +
      'matching the filters, oldest first) come first, then each new one, each once: nothing falls between a ' +
      'pendingElicitations query and this, and a client that subscribes and then starts a turn sees its pause. With ' +
      'scope TO_ANSWER: the requests of others the viewer may answer now as an approver (as pendingElicitations lists ' +
      'them), each once: offered to one of their roles at the pause, or to an escalation role when it escalates.',
    args: {
      threadId: t.arg.id(),
      agentId: t.arg.id(),
      includePending: t.arg.boolean({
        defaultValue: false,
        description: 'First deliver the requests already pending when the subscription starts, then each new one.',
      }),
      scope: t.arg({ type: PendingElicitationScopeEnum, defaultValue: 'MINE' }),
    },
    subscribe: async (_root, args, ctx) => {
      const { services, viewer } = ctx;
      const filter = { threadId: optionalId(args.threadId), agentId: optionalId(args.agentId) };
      const other = (e: ElicitationRecord) =>
        (filter.threadId !== null && e.threadId !== filter.threadId) ||
        (filter.agentId !== null && e.agentId !== filter.agentId);
      const includePending = args.includePending === true;
      if (args.scope === 'TO_ANSWER') return requestsToAnswer(ctx, { includePending, other, filter });
      // Listen first, then (with includePending) catch up on the requests already pending: a client that subscribes
      // and then starts a turn sees its pause whichever reaches the server first. Each request is delivered once.
      const updates = services.pubsub.subscribe('elicitations', viewer.id);
      // Several instances (Redis): from here on a request published by any of them reaches this subscription.
      await updates.listening;
      if (!includePending) return startWith([], updates, other);
      let pending: ElicitationRecord[];
      try {
        pending = await allPendingElicitations(services, viewer, filter);
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

/**
 * elicitationRequested(scope: TO_ANSWER): the requests offered to each of the viewer's roles, as MINE listens to the
 * owner's, each passed through the rule of who may answer now (src/app/reads.ts mayAnswerNow) and delivered once.
 */
async function requestsToAnswer(
  { services, viewer }: Pick<GraphQLContext, 'services' | 'viewer'>,
  options: {
    includePending: boolean;
    other: (e: ElicitationRecord) => boolean;
    filter: { threadId: string | null; agentId: string | null };
  },
) {
  // A viewer without roles listens to nothing and gets nothing: others' requests are offered by role.
  const updates = services.pubsub.subscribeMany(
    [...new Set(viewer.roles)].map((role) => ({ topic: 'approverElicitations' as const, key: role })),
  );
  await updates.listening;
  let pending: ElicitationRecord[] = [];
  try {
    if (options.includePending && viewer.roles.length > 0) {
      pending = await allPendingElicitations(services, viewer, options.filter, 'TO_ANSWER');
    }
  } catch (error) {
    await updates.return();
    throw error;
  }
  const delivered = new DeliveredOnce(pending);
  return startWith(pending, updates, async (e) => {
    if (options.other(e) || delivered.has(e.id, services.clock().toISOString())) return true;
    // The answers of one published request are read once, whoever of its subscribers asks (shared-reads.ts).
    const answers = () => readOnce(e, 'approverAnswers', () => services.store.listApproverAnswers([e.id]));
    if (!(await mayAnswerNow(services, viewer, e, answers))) return true;
    delivered.add(e);
    return false;
  });
}

builder.subscriptionField('elicitationUpdated', (t) =>
  t.field({
    type: ElicitationRef,
    description:
      "One confirmation request: first as it is now, then after each change: an approver's answer counted towards " +
      'its quorum, its decision, its close with the turn (cancelled, superseded, expired). For its requester and ' +
      'whoever may read it (elicitation(id)); anyone else gets NOT_FOUND, as for an unknown id.',
    args: { elicitationId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      const id = String(args.elicitationId);
      // Listen first, read second: the request now, then every change, with nothing in between lost.
      const updates = ctx.services.pubsub.subscribe('elicitation', id);
      await updates.listening;
      let current: ElicitationRecord | null;
      try {
        current = await getElicitation(ctx.services, ctx.viewer, id);
      } catch (error) {
        await updates.return();
        throw error;
      }
      if (!current) {
        // Another user's request reads as unknown; the error is the operation's result, the connection stays.
        await updates.return();
        throw new GraphQLError('No elicitation with this id.', { extensions: { code: 'NOT_FOUND' } });
      }
      return startWith([current], updates);
    },
    resolve: (e) => e,
  }),
);

// Their display fields (argumentsDisplay) are added in visible-text.ts.
export { ElicitationResponseRef, ElicitationToolCallRef };
