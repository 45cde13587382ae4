// What the viewer may see of conversations: their threads, turns and elicitations, one by id or a page of them.
// Every read is scoped to the viewer: another user's record reads as absent, exactly like an unknown id, so an id
// tells nobody whether it exists. Pages are capped here, whichever entrance asks.
import { elicitationStatusAt } from '../domain/expiry.js';
import { answerCounts, mayAnswer } from '../domain/approvers.js';
import { awaitsAnswerOf, outdated } from '../domain/quorum.js';
import type {
  Agent,
  AnswerIdentity,
  ApproverAnswer,
  ElicitationAction,
  ElicitationRecord,
  ElicitationStatus,
  JsonObject,
  Page,
  ThreadRecord,
  TurnRecord,
} from '../domain/records.js';
import type { AppDeps } from './deps.js';
import type { Viewer } from './viewer.js';

/** Where a page starts and how long it is; `first` is capped by each list (a caller asking for more gets the cap). */
export interface PageRequest {
  first?: number | null;
  after?: string | null;
}

/** `first` within 0..max; absent: `fallback`. */
export function pageSize(first: number | null | undefined, fallback: number, max: number): number {
  if (first === null || first === undefined) return fallback;
  return Math.max(0, Math.min(first, max));
}

export function getThread(app: AppDeps, viewer: Viewer, id: string): Promise<ThreadRecord | null> {
  return app.store.getThread(id, viewer.id);
}

/** Oldest first, or newest first; optionally of one agent. 20 by default, at most 100. */
export function listThreads(
  app: AppDeps,
  viewer: Viewer,
  request: PageRequest & { agentId: string | null; newestFirst?: boolean },
): Promise<Page<ThreadRecord>> {
  return app.store.listThreads(
    viewer.id,
    request.agentId,
    pageSize(request.first, 20, 100),
    request.after ?? null,
    request.newestFirst === true,
  );
}

export function getTurn(app: AppDeps, viewer: Viewer, id: string): Promise<TurnRecord | null> {
  return app.store.getTurn(id, viewer.id);
}

/**
 * The viewer's request, or another user's whose approvers policy names one of the viewer's roles (or escalation roles):
 * an approver reads the request, its card, never its turn (seesTurnOf). Anyone else's reads as absent.
 */
export async function getElicitation(app: AppDeps, viewer: Viewer, id: string): Promise<ElicitationRecord | null> {
  const own = await app.store.getElicitation(id, viewer.id);
  if (own || viewer.roles.length === 0) return own;
  const other = await app.store.loadElicitation(id);
  return other && isApproverOf(other, viewer) ? other : null;
}

/** Whether the viewer holds a role the request's policy offers it to, now or once it escalates. */
export function isApproverOf(elicitation: Pick<ElicitationRecord, 'approval'>, viewer: Viewer): boolean {
  const { approval } = elicitation;
  if (!approval) return false;
  const roles = [...approval.roles, ...(approval.escalation?.roles ?? [])];
  return roles.some((role) => viewer.roles.includes(role));
}

export interface ElicitationFilter {
  threadId: string | null;
  agentId: string | null;
}

/** The audit trail: every status (or some, as read now), oldest first or newest first. 50 by default, at most 200. */
export function listElicitations(
  app: AppDeps,
  viewer: Viewer,
  request: PageRequest & ElicitationFilter & { statuses: ElicitationStatus[] | null; newestFirst?: boolean },
): Promise<Page<ElicitationRecord> & { totalCount: number }> {
  return app.store.listElicitations(
    viewer.id,
    { threadId: request.threadId, agentId: request.agentId, statuses: request.statuses },
    app.clock().toISOString(),
    pageSize(request.first, 50, 200),
    request.after ?? null,
    request.newestFirst === true,
  );
}

/**
 * Whose pending requests: the viewer's own (MINE), or those of others the viewer may answer now as an approver
 * (TO_ANSWER, docs/approvers.md).
 */
export type PendingScope = 'MINE' | 'TO_ANSWER';

/** The requests that still wait for an answer (not expired), oldest first. 50 by default, at most 200. */
export async function listPendingElicitations(
  app: AppDeps,
  viewer: Viewer,
  request: PageRequest & ElicitationFilter & { scope?: PendingScope },
): Promise<Page<ElicitationRecord> & { totalCount: number }> {
  if (request.scope === 'TO_ANSWER') {
    // Offered by role: a viewer without roles answers no one else's requests.
    if (viewer.roles.length === 0)
      return { items: [], cursors: [], hasNextPage: false, endCursor: null, totalCount: 0 };
    return app.store.listElicitationsToAnswer(
      viewer.id,
      viewer.roles,
      { threadId: request.threadId, agentId: request.agentId },
      app.clock().toISOString(),
      pageSize(request.first, 50, 200),
      request.after ?? null,
    );
  }
  return app.store.listPendingElicitations(
    viewer.id,
    { threadId: request.threadId, agentId: request.agentId },
    app.clock().toISOString(),
    pageSize(request.first, 50, 200),
    request.after ?? null,
  );
}

/**
 * Every request of the scope that waits now, oldest first, page after page (a subscription catching up): the viewer's
 * own (MINE), or those the viewer may answer now as an approver (TO_ANSWER).
 */
export async function allPendingElicitations(
  app: AppDeps,
  viewer: Viewer,
  filter: ElicitationFilter,
  scope: PendingScope = 'MINE',
): Promise<ElicitationRecord[]> {
  const pending: ElicitationRecord[] = [];
  for (let after: string | null = null; ;) {
    const page = await listPendingElicitations(app, viewer, { ...filter, scope, first: 200, after });
    pending.push(...page.items);
    if (!page.hasNextPage) return pending;
    after = page.endCursor;
  }
}

/**
 * Whether the viewer may answer this request now as an approver: one request of what TO_ANSWER lists (a live event
 * offering it to one of the viewer's roles). Another user's, still waiting, that the viewer may ACCEPT or DECLINE now
 * (mayAnswer: a role of its policy, or an escalation role from its time; never the requester), and that they have not
 * answered, or answered with an ACCEPT an edit outdated since. `answers` reads its approvers' answers, only if needed.
 */
export async function mayAnswerNow(
  app: Pick<AppDeps, 'clock'>,
  viewer: Viewer,
  elicitation: ElicitationRecord,
  answers: () => Promise<ApproverAnswer[]>,
): Promise<boolean> {
  if (elicitation.ownerId === viewer.id || !elicitation.approval) return false;
  const now = app.clock().toISOString();
  if (elicitationStatusAt(elicitation, now) !== 'PENDING') return false;
  if (mayAnswer(elicitation, viewer, 'ACCEPT', now).kind !== 'allowed') return false;
  return awaitsAnswerOf(await answers(), viewer.id);
}

/**
 * The confirmations of a waiting call that its caller may answer themselves now (still waiting, and mayAnswer allows
 * them): those for approvers only (four eyes, a quorum of others) are left to them.
 */
export function answerableByCaller(
  app: Pick<AppDeps, 'clock'>,
  viewer: Viewer,
  waitingOn: readonly ElicitationRecord[],
): ElicitationRecord[] {
  const now = app.clock().toISOString();
  return waitingOn.filter(
    (e) => elicitationStatusAt(e, now) === 'PENDING' && mayAnswer(e, viewer, 'ACCEPT', now).kind === 'allowed',
  );
}

/** How a closed elicitation was closed: answered by its user, or closed by the server without an answer. */
export type ElicitationResolution = 'ANSWERED' | 'EXPIRED' | 'SUPERSEDED' | 'TURN_CANCELLED';

/**
 * Derived from what is stored: the answer, the status, and (for an unanswered CANCELLED one) its siblings' answers,
 * read only then. null while it waits.
 */
export async function elicitationResolution(
  elicitation: ElicitationRecord,
  now: string,
  siblings: () => Promise<ElicitationRecord[]>,
): Promise<ElicitationResolution | null> {
  if (elicitation.response) return 'ANSWERED';
  const status = elicitationStatusAt(elicitation, now);
  if (status === 'PENDING') return null;
  if (status === 'EXPIRED') return 'EXPIRED';
  const cancelledBySibling = (await siblings()).some((other) => other.response?.action === 'CANCEL');
  return cancelledBySibling ? 'TURN_CANCELLED' : 'SUPERSEDED';
}

/** One answer as the request's audit shows it: who, what, when, and whether it counts towards the quorum now. */
export interface AnswerEntry {
  approverId: string;
  action: ElicitationAction;
  content: JsonObject | null;
  /** The edited arguments the ACCEPT proposed and approved; null: the model's. */
  arguments: JsonObject | null;
  answeredAt: string;
  /** False for an ACCEPT an edit outdated since, or the requester's under four eyes (never recorded, defensively). */
  counts: boolean;
  /** Who answered as they were then (name, issuer, subject, roles); null for an answer recorded before they were kept. */
  identity: AnswerIdentity | null;
}

/**
 * Who answered a request, in the order they did: under an approvers policy each approver's answer (`load` reads them
 * only for such a request); without one, the requester's answer once given.
 */
export async function elicitationAnswers(
  elicitation: ElicitationRecord,
  load: (elicitationId: string) => Promise<ApproverAnswer[]>,
): Promise<AnswerEntry[]> {
  const { approval, response } = elicitation;
  if (!approval) {
    if (!response || !elicitation.resolvedBy || !elicitation.resolvedAt) return [];
    return [
      {
        approverId: elicitation.resolvedBy,
        action: response.action,
        content: response.content,
        arguments: response.arguments ?? null,
        answeredAt: elicitation.resolvedAt,
        counts: true,
        identity: elicitation.resolvedByIdentity,
      },
    ];
  }
  const answers = await load(elicitation.id);
  return answers.map((answer) => ({
    approverId: answer.approverId,
    action: answer.action,
    content: answer.content,
    arguments: answer.arguments,
    answeredAt: answer.createdAt,
    counts: !outdated(answer, answers) && answerCounts(approval, answer.approverId, elicitation.ownerId),
    identity: answer.identity,
  }));
}

/**
 * Whether the viewer sees the request's turn (and through it the thread and its messages): only its requester. An
 * approver sees the request itself, what its card needs (docs/approvers.md).
 */
export function seesTurnOf(elicitation: Pick<ElicitationRecord, 'ownerId'>, viewer: Viewer): boolean {
  return elicitation.ownerId === viewer.id;
}

/** Record ids carry their kind as a prefix (src/domain/ids.ts); anything else is an agent id. */
const NODE_PREFIXES = { thread: 'thr_', turn: 'trn_', elicitation: 'elc_' } as const;

export type NodeKind = keyof typeof NODE_PREFIXES | 'agent';

export function nodeKind(id: string): NodeKind {
  for (const [kind, prefix] of Object.entries(NODE_PREFIXES)) if (id.startsWith(prefix)) return kind as NodeKind;
  return 'agent';
}

/** Any record by its id alone, as the reads by kind find it (the viewer's, or a shared agent). */
export function findNode(
  app: AppDeps,
  viewer: Viewer,
  id: string,
): Promise<ThreadRecord | TurnRecord | ElicitationRecord | Agent | null> {
  switch (nodeKind(id)) {
    case 'thread':
      return getThread(app, viewer, id);
    case 'turn':
      return getTurn(app, viewer, id);
    case 'elicitation':
      return getElicitation(app, viewer, id);
    case 'agent':
      return app.store.getAgent(id);
  }
}
