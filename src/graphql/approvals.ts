// Remembered approvals (docs/approvals.md): the viewer's grants, what each let run, and revoking one. A grant is
// recorded by an ACCEPT with `remember` (src/app/answer-elicitation.ts); src/domain/grants.ts says when it holds.
import { getGrant, grantState, grantUses, listGrants } from '../app/grant-reads.js';
import { getElicitation } from '../app/reads.js';
import { revokeGrant } from '../app/revoke-grant.js';
import type { ApprovalGrantRecord, GrantUseRecord } from '../domain/records.js';
import { builder } from './builder.js';
import { connection, optionalId, PageInfoRef } from './node.js';
import { AgentRef, ApprovalGrantRef, ApprovalGrantScopeEnum, ElicitationRef, ThreadRef, TurnRef } from './refs.js';
import { revokeGrantError } from './refusals.js';
import { UserErrorRef, type UserError } from './user-errors.js';

const ApprovalGrantStateEnum = builder.enumType('ApprovalGrantState', {
  values: {
    ACTIVE: { description: 'Calls of the tool in its scope run without asking.' },
    TOOL_CHANGED: {
      description:
        "The tool's trusted definition (description, inputSchema, annotations) changed since, or the tool is gone: " +
        'its calls ask again.',
    },
    EXPIRED: { description: 'Past expiresAt.' },
    REVOKED: { description: 'Revoked by its user (revokedAt).' },
  } as const,
});

const ApprovalGrantUseRef = builder.objectRef<GrantUseRecord>('ApprovalGrantUse').implement({
  description: 'A call that ran without asking because of the grant, as the execution journal recorded it.',
  fields: (t) => ({
    toolCallId: t.exposeString('toolCallId'),
    turn: t.field({
      type: TurnRef,
      nullable: true,
      resolve: (use, _args, ctx) => ctx.loaders.turn(use.turnId, ctx.viewer.id),
    }),
    startedAt: t.field({ type: 'DateTime', resolve: (use) => use.startedAt }),
  }),
});

ApprovalGrantRef.implement({
  description:
    "A remembered approval: the user's ACCEPT that lets later calls of one tool run without asking (the pre-execute " +
    'listeners still run; a veto still wins). Per user, never shared.',
  fields: (t) => ({
    id: t.exposeID('id'),
    scope: t.field({ type: ApprovalGrantScopeEnum, resolve: (g) => g.scope }),
    agent: t.field({
      type: AgentRef,
      nullable: true,
      resolve: (g, _args, ctx) => ctx.loaders.agent(g.agentId),
    }),
    thread: t.field({
      type: ThreadRef,
      nullable: true,
      description: 'THREAD scope: the thread it holds in; null for AGENT scope.',
      resolve: (g, _args, ctx) => (g.threadId ? ctx.loaders.thread(g.threadId, ctx.viewer.id) : null),
    }),
    toolId: t.exposeID('toolId'),
    state: t.field({
      type: ApprovalGrantStateEnum,
      description: 'As of now.',
      resolve: (g, _args, ctx) => grantState(ctx.services, g, (id) => ctx.loaders.agent(id)),
    }),
    elicitation: t.field({
      type: ElicitationRef,
      nullable: true,
      description: 'The ACCEPT that recorded it.',
      resolve: (g, _args, ctx) => getElicitation(ctx.services, ctx.viewer, g.elicitationId),
    }),
    uses: t.field({
      type: [ApprovalGrantUseRef],
      description: 'Every call it let run without asking, oldest first.',
      resolve: (g, _args, ctx) => grantUses(ctx.services, g),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (g) => g.createdAt }),
    expiresAt: t.field({ type: 'DateTime', resolve: (g) => g.expiresAt }),
    revokedAt: t.field({ type: 'DateTime', nullable: true, resolve: (g) => g.revokedAt }),
  }),
});

builder.objectField(ElicitationRef, 'grant', (t) =>
  t.field({
    type: ApprovalGrantRef,
    nullable: true,
    description: 'The remembered approval its ACCEPT recorded, if it asked to remember.',
    resolve: (e, _args, ctx) => (e.grantId ? getGrant(ctx.services, ctx.viewer, e.grantId) : null),
  }),
);

const ApprovalGrantEdgeRef = builder
  .objectRef<{ cursor: string; node: ApprovalGrantRecord }>('ApprovalGrantEdge')
  .implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: ApprovalGrantRef, resolve: (e) => e.node }),
    }),
  });

const ApprovalGrantConnectionRef = builder
  .objectRef<ReturnType<typeof connection<ApprovalGrantRecord>>>('ApprovalGrantConnection')
  .implement({
    fields: (t) => ({
      edges: t.field({ type: [ApprovalGrantEdgeRef], resolve: (c) => c.edges }),
      pageInfo: t.field({ type: PageInfoRef, resolve: (c) => c.pageInfo }),
    }),
  });

builder.queryField('approvalGrants', (t) =>
  t.field({
    type: ApprovalGrantConnectionRef,
    description:
      "The viewer's remembered approvals, oldest first: those not revoked and not expired (state ACTIVE, or " +
      'TOOL_CHANGED), or with includeInactive all of them; optionally of one agent, or the THREAD-scoped ones of one ' +
      'thread (AGENT-scoped grants apply there too but are not listed by thread).',
    args: {
      agentId: t.arg.id(),
      threadId: t.arg.id(),
      includeInactive: t.arg.boolean({ defaultValue: false }),
      first: t.arg.int({ defaultValue: 50 }),
      after: t.arg.string(),
    },
    resolve: async (_root, args, ctx) =>
      connection(
        await listGrants(ctx.services, ctx.viewer, {
          agentId: optionalId(args.agentId),
          threadId: optionalId(args.threadId),
          includeInactive: args.includeInactive === true,
          first: args.first,
          after: args.after,
        }),
      ),
  }),
);

const RevokeApprovalGrantInput = builder.inputType('RevokeApprovalGrantInput', {
  fields: (t) => ({ grantId: t.id({ required: true }) }),
});

const RevokeApprovalGrantPayload = builder
  .objectRef<{ grant: ApprovalGrantRecord | null; userErrors: UserError[] }>('RevokeApprovalGrantPayload')
  .implement({
    fields: (t) => ({
      grant: t.field({ type: ApprovalGrantRef, nullable: true, resolve: (p) => p.grant }),
      userErrors: t.field({ type: [UserErrorRef], resolve: (p) => p.userErrors }),
    }),
  });

builder.mutationField('revokeApprovalGrant', (t) =>
  t.field({
    type: RevokeApprovalGrantPayload,
    description:
      'Revoke one of your remembered approvals: from its commit on, calls it covered ask again; a call it let through ' +
      'that has not started yet does not run. Revoking again returns the grant as first revoked, so a retry after a ' +
      'GraphQL error or a timeout is safe.',
    args: { input: t.arg({ type: RevokeApprovalGrantInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const outcome = await revokeGrant(ctx.services, ctx.viewer, { grantId: String(input.grantId) });
      if (!outcome.ok) return { grant: null, userErrors: [revokeGrantError(outcome)] };
      return { grant: outcome.grant, userErrors: [] };
    },
  }),
);
