// Approvers through the use cases, no API in front (docs/approvers.md): the gate decides a call's policy when it
// pauses and keeps it with the request; who may give which answer (a table: viewer x policy x action), each refusal
// storing nothing; the quorum's course (counted once each, a DECLINE deciding at once, an edit restarting the count,
// an escalation role from its time); the races; who is offered and who reads a request; a quorum's remembered
// approval; a gateway's call answered by a reviewer; and an agent's pause cannot be shortened below its escalation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation, type AnswerElicitationInput } from '../../src/app/answer-elicitation.js';
import { awaitCallResult, callTool } from '../../src/app/call-tool.js';
import { listGrants } from '../../src/app/grant-reads.js';
import {
  elicitationAnswers,
  getElicitation,
  listPendingElicitations,
  mayAnswerNow,
  seesTurnOf,
} from '../../src/app/reads.js';
import { startTurn } from '../../src/app/start-turn.js';
import { updateAgentGating } from '../../src/app/update-agent-gating.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { ElicitationAction, ElicitationRecord, ElicitationStatus, TurnStatus } from '../../src/domain/records.js';
import { ADMIN, ALICE, BOB, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { expectRefused, pausedOn, toolTextsOf } from '../support/app-turns.js';
import { AGENT_ID, testAgent } from '../support/scenario.js';

const GATEWAY = 'gw';
const reviewer = (id: string): Viewer => ({ id, isAdmin: false, roles: ['reviewer'] });
const RITA = reviewer('rita');
const SAM: Viewer = { id: 'sam', isAdmin: false, roles: ['reviewer', 'ops'] };
const OLLIE: Viewer = { id: 'ollie', isAdmin: false, roles: ['oncall'] };
const MALLORY: Viewer = { id: 'mallory', isAdmin: false, roles: ['ops'] };
/** Reviewers beside Rita and Sam, for the races. */
const MORE_REVIEWERS = [reviewer('ray'), reviewer('rose'), reviewer('reed')];
const VIEWERS = [ALICE, BOB, ADMIN, RITA, SAM, OLLIE, MALLORY];

let s: AppScenario;
/** How far the scenario's one clock runs ahead of this host's. */
let aheadMs = 0;

beforeAll(async () => {
  s = await startApp({
    clock: () => new Date(Date.now() + aheadMs),
    tools: [
      { name: 'wipe' },
      { name: 'write' },
      { name: 'plain' },
      { name: 'note' },
      { name: 'scale' },
      { name: 'restart' },
      { name: 'drop', run: () => 'dropped' },
    ],
    script: [callsWhatIsNamed({ write: { path: '/etc/hosts' }, scale: { replicas: 2 } })],
    agent: {
      // t:plain and every tool without a policy of its own: four eyes, two reviewers; oncall after ten minutes.
      approvers: {
        roles: ['reviewer'],
        required: 2,
        requester: 'EXCLUDED',
        escalate: { afterSeconds: 600, roles: ['oncall'] },
      },
      toolConfirmation: {
        't:wipe': { approvers: { roles: ['admin'], required: 1, requester: 'ALSO' } },
        't:write': {
          rules: [
            {
              match: { required: ['path'] },
              mode: 'ALWAYS',
              approvers: { roles: ['security'], required: 1, requester: 'ALSO' },
            },
          ],
        },
        't:note': { approvers: 'REQUESTER' },
        // The requester counts as one of two.
        't:scale': { approvers: { roles: ['reviewer'], required: 2, requester: 'ALSO' } },
        // Four eyes, one reviewer.
        't:restart': { approvers: { roles: ['reviewer'], required: 1, requester: 'EXCLUDED' } },
      },
    },
    agents: [
      {
        ...testAgent({
          id: GATEWAY,
          name: 'Gateway',
          tools: ['t:drop'],
          approvers: { roles: ['reviewer'], required: 1, requester: 'EXCLUDED' },
        }),
        model: undefined,
      },
    ],
  });
});
afterAll(() => s?.close());

/** Alice's new turn calling `tool`: its one request. */
async function requestOf(tool: string): Promise<ElicitationRecord> {
  const [request] = await pausedOn(s, ALICE, `t_${tool}`);
  return request!;
}

const answer = (viewer: Viewer, request: ElicitationRecord, more: Partial<AnswerElicitationInput> = {}) =>
  answerElicitation(s.app, viewer, { elicitationId: request.id, action: 'ACCEPT', ...more });

/** The app as it is `ms` after the request's escalation time (the use case's clock only). */
const afterEscalation = (request: ElicitationRecord, ms = 1) => ({
  ...s.app,
  clock: () => new Date(Date.parse(request.approval!.escalation!.at) + ms),
});

describe('the policy of a paused call', () => {
  it("is decided at the pause and kept with the request: the rule's, the tool's, the agent's", async () => {
    const [write, wipe, plain] = await pausedOn(s, ALICE, 't_write t_wipe t_plain');
    expect(write!.approval).toEqual({ roles: ['security'], required: 1, requester: 'ALSO', escalation: null });
    expect(wipe!.approval).toEqual({ roles: ['admin'], required: 1, requester: 'ALSO', escalation: null });
    const escalatesAt = new Date(Date.parse(plain!.createdAt) + 600_000).toISOString();
    expect(plain!.approval).toMatchObject({ roles: ['reviewer'], required: 2, requester: 'EXCLUDED' });
    // Decided a moment before the pause's commit: at most its createdAt + afterSeconds.
    expect(plain!.approval!.escalation!.roles).toEqual(['oncall']);
    expect(plain!.approval!.escalation!.at <= escalatesAt).toBe(true);
    expect(Date.parse(escalatesAt) - Date.parse(plain!.approval!.escalation!.at)).toBeLessThan(5000);
  });
});

describe('updateAgentGating and escalation', () => {
  it('refuses a pause that would expire before an escalation, and stores nothing', async () => {
    const before = await s.snapshot();
    expect(await updateAgentGating(s.app, ADMIN, { agentId: AGENT_ID, pauseTtlSeconds: 600 })).toEqual({
      ok: false,
      code: 'INVALID_INPUT',
      field: 'pauseTtlSeconds',
      reason: 'BELOW_ESCALATION',
      escalateAfterSeconds: 600,
    });
    expect(await s.snapshot()).toEqual(before);
    const longer = await updateAgentGating(s.app, ADMIN, { agentId: AGENT_ID, pauseTtlSeconds: 601 });
    expect(longer.ok && longer.agent?.pauseTtlSeconds).toBe(601);
  });
});

/** An answer the viewer may give: the request's status after it, and the turn as the viewer sees it (null: not theirs). */
type Given = { status: ElicitationStatus; turn: TurnStatus | null };
type Refused = { refused: { code: string; of?: string; field: string; reason?: string } };
/** Where Alice's turn is after an answer that left its request so. */
const TURN_AFTER: Partial<Record<ElicitationStatus, TurnStatus>> = {
  PENDING: 'PAUSED',
  ACCEPTED: 'COMPLETED',
  DECLINED: 'COMPLETED',
  CANCELLED: 'CANCELLED',
};
const outcomeOf = (e: Given | Refused) =>
  'refused' in e ? `${e.refused.code} ${e.refused.reason ?? ''}`.trim() : `${e.status}, turn ${e.turn}`;
const FOUR_EYES = { refused: { code: 'FORBIDDEN', field: 'action', reason: 'FOUR_EYES' } };
const CANCEL_BY_REQUESTER = { refused: { code: 'FORBIDDEN', field: 'action', reason: 'CANCEL_BY_REQUESTER' } };
const NOT_AN_APPROVER = { refused: { code: 'FORBIDDEN', field: 'action', reason: 'NOT_AN_APPROVER' } };
/** Another user's request the viewer may not answer reads as an unknown one. */
const ABSENT = { refused: { code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' } };

describe('who may give which answer to a request of Alice', () => {
  // t:plain: four eyes, two reviewers, oncall after ten minutes; t:scale: two reviewers, Alice counting as one;
  // t:restart: four eyes, one reviewer; t:note: Alice alone.
  const cases: [string, Viewer, ElicitationAction, Given | Refused][] = [
    ['plain', ALICE, 'ACCEPT', FOUR_EYES],
    ['plain', ALICE, 'DECLINE', FOUR_EYES],
    ['plain', ALICE, 'CANCEL', { status: 'CANCELLED', turn: 'CANCELLED' }],
    ['plain', RITA, 'ACCEPT', { status: 'PENDING', turn: null }],
    ['plain', RITA, 'DECLINE', { status: 'DECLINED', turn: null }],
    ['plain', RITA, 'CANCEL', CANCEL_BY_REQUESTER],
    ['plain', OLLIE, 'ACCEPT', { refused: { code: 'FORBIDDEN', field: 'action', reason: 'NOT_YET_ESCALATED' } }],
    ['plain', OLLIE, 'CANCEL', CANCEL_BY_REQUESTER],
    ['plain', MALLORY, 'ACCEPT', ABSENT],
    ['plain', MALLORY, 'CANCEL', ABSENT],
    ['plain', BOB, 'ACCEPT', ABSENT],
    ['plain', ADMIN, 'ACCEPT', NOT_AN_APPROVER],
    ['plain', ADMIN, 'DECLINE', NOT_AN_APPROVER],
    ['plain', ADMIN, 'CANCEL', { status: 'CANCELLED', turn: null }],
    ['scale', ALICE, 'ACCEPT', { status: 'PENDING', turn: 'PAUSED' }],
    ['scale', RITA, 'ACCEPT', { status: 'PENDING', turn: null }],
    ['restart', ALICE, 'ACCEPT', FOUR_EYES],
    ['restart', RITA, 'ACCEPT', { status: 'ACCEPTED', turn: null }],
    ['note', ALICE, 'ACCEPT', { status: 'ACCEPTED', turn: 'COMPLETED' }],
    ['note', RITA, 'ACCEPT', ABSENT],
    ['note', ADMIN, 'CANCEL', ABSENT],
  ];

  it.each(cases.map(([tool, viewer, action, expected]) => [tool, viewer.id, action, outcomeOf(expected), expected]))(
    't:%s, %s, %s: %s',
    async (tool, viewerId, action, _outcome, expected) => {
      const viewer = VIEWERS.find((v) => v.id === viewerId)!;
      const request = await requestOf(tool);
      const input = { elicitationId: request.id, action };
      if ('refused' in expected) {
        const { refused } = expected;
        // A member of an escalation role is told when it will be theirs.
        const escalatesAt = refused.reason === 'NOT_YET_ESCALATED' && { escalatesAt: request.approval!.escalation!.at };
        await expectRefused(s, viewer, input, { ...refused, ...escalatesAt });
        return;
      }
      const ran = s.tools.count(tool);
      const outcome = await answerElicitation(s.app, viewer, input);
      if (!outcome.ok) throw new Error(`refused: ${JSON.stringify(outcome)}`);
      expect([outcome.elicitation.status, outcome.turn?.status ?? null]).toEqual([expected.status, expected.turn]);
      expect(outcome.elicitation.resolvedBy).toBe(expected.status === 'PENDING' ? null : viewer.id);
      // The tool runs once the request is accepted, not before; the turn goes on once it is decided.
      expect(s.tools.count(tool) - ran).toBe(expected.status === 'ACCEPTED' ? 1 : 0);
      expect((await s.app.store.loadTurn(request.turnId))?.status).toBe(TURN_AFTER[expected.status]);
    },
  );

  it('an escalation role answers from the escalation time on, and counts as one of the quorum', async () => {
    const request = await requestOf('plain');
    const ran = s.tools.count('plain');
    const before = afterEscalation(request, -1);
    expect(await answerElicitation(before, OLLIE, { elicitationId: request.id, action: 'ACCEPT' })).toMatchObject({
      ok: false,
      reason: 'NOT_YET_ESCALATED',
    });
    // Past the escalation time for everything (the rules, the records, the loop's check of them before the tool).
    aheadMs = Date.parse(request.approval!.escalation!.at) + 1 - Date.now();
    try {
      const counted = await answerElicitation(s.app, OLLIE, { elicitationId: request.id, action: 'ACCEPT' });
      expect(counted.ok && counted.elicitation.status).toBe('PENDING');
      const decided = await answer(RITA, request);
      expect(decided.ok && decided.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'rita' });
      expect(s.tools.count('plain') - ran).toBe(1);
    } finally {
      aheadMs = 0;
    }
  });
});

describe('the quorum', () => {
  /** Who answered the request so far, in order, and whether each answer counts now. */
  async function answersOf(request: ElicitationRecord) {
    const fresh = (await s.app.store.loadElicitation(request.id))!;
    const answers = await elicitationAnswers(fresh, (id) => s.app.store.listApproverAnswers([id]));
    return answers.map((a) => [a.approverId, a.action, a.counts]);
  }

  it('counts each reviewer once; the same answer again is the recorded one, another is refused; the second decides', async () => {
    const request = await requestOf('plain');
    const ran = s.tools.count('plain');
    const first = await answer(RITA, request);
    expect(first).toEqual({
      ok: true,
      elicitation: expect.objectContaining({ status: 'PENDING', resolvedBy: null }),
      turn: null,
      pausedWith: null,
    });
    const again = await answer(RITA, request);
    expect(again.ok && again.elicitation.status).toBe('PENDING');
    await expectRefused(
      s,
      RITA,
      { elicitationId: request.id, action: 'DECLINE' },
      { code: 'ALREADY_RESOLVED', field: 'elicitationId', status: 'PENDING' },
    );
    expect(s.tools.count('plain')).toBe(ran);
    const decided = await answer(SAM, request);
    expect(decided.ok && decided.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'sam' });
    expect(s.tools.count('plain')).toBe(ran + 1);
    expect(await answersOf(request)).toEqual([
      ['rita', 'ACCEPT', true],
      ['sam', 'ACCEPT', true],
    ]);
    expect((await s.app.store.loadTurn(request.turnId))?.status).toBe('COMPLETED');
    // A latecomer finds it decided.
    await expectRefused(
      s,
      MORE_REVIEWERS[0]!,
      { elicitationId: request.id, action: 'ACCEPT' },
      { code: 'ALREADY_RESOLVED', field: 'elicitationId', status: 'ACCEPTED' },
    );
  });

  it("a request without a policy: its answers are the requester's one", async () => {
    const request = await requestOf('note');
    await answer(ALICE, request);
    expect(await answersOf(request)).toEqual([['alice', 'ACCEPT', true]]);
  });

  it("a reviewer's DECLINE decides at once, and its instructions reach the model", async () => {
    const request = await requestOf('plain');
    const ran = s.tools.count('plain');
    await answer(RITA, request);
    const declined = await answer(SAM, request, { action: 'DECLINE', content: { instructions: 'not on Fridays' } });
    expect(declined.ok && declined.elicitation).toMatchObject({ status: 'DECLINED', resolvedBy: 'sam' });
    expect((await s.app.store.loadTurn(request.turnId))?.status).toBe('COMPLETED');
    expect(s.tools.count('plain')).toBe(ran);
    expect(await toolTextsOf(s, request.turnId)).toEqual(['User declined execution of plain: not on Fridays']);
  });

  it("an edit restarts the count: the requester's ACCEPT of the model's arguments no longer counts", async () => {
    const request = await requestOf('scale');
    expect(request.toolCall.arguments).toEqual({ replicas: 2 });
    expect((await answer(ALICE, request)).ok).toBe(true);
    const edited = await answer(RITA, request, { arguments: { replicas: 5 } });
    expect(edited.ok && edited.elicitation.status).toBe('PENDING');
    expect(await answersOf(request)).toEqual([
      ['alice', 'ACCEPT', false],
      ['rita', 'ACCEPT', true],
    ]);
    // Alice approves the edited arguments anew, and that completes it.
    const done = await answer(ALICE, request, { arguments: { replicas: 5 } });
    expect(done.ok && [done.elicitation.status, done.elicitation.resolvedBy, done.turn?.status]).toEqual([
      'ACCEPTED',
      'alice',
      'COMPLETED',
    ]);
    expect(s.tools.runs.get('scale')!.at(-1)).toEqual({ replicas: 5 });
  });
});

describe('races', () => {
  it('five reviewers accept at once under two required: the tool runs exactly once, after exactly two', async () => {
    const request = await requestOf('plain');
    const ran = s.tools.count('plain');
    const results = await Promise.all([RITA, SAM, ...MORE_REVIEWERS].map((viewer) => answer(viewer, request)));
    const statuses = results.map((r) => (r.ok ? r.elicitation.status : r.code));
    expect(statuses.filter((x) => x === 'ACCEPTED')).toHaveLength(1);
    expect(statuses.filter((x) => x === 'PENDING')).toHaveLength(1);
    expect(statuses.filter((x) => x === 'ALREADY_RESOLVED')).toHaveLength(3);
    expect(s.tools.count('plain')).toBe(ran + 1);
    const answers = await s.app.store.listApproverAnswers([request.id]);
    expect(answers).toHaveLength(2);
    const decided = results.find((r) => r.ok && r.elicitation.status === 'ACCEPTED');
    expect(decided?.ok && decided.elicitation.resolvedBy).toBe(answers[1]!.approverId);
    expect((await s.app.store.loadTurn(request.turnId))?.status).toBe('COMPLETED');
  });

  it('under four eyes, the requester and a reviewer accepting at once: the reviewer decides, the requester is refused', async () => {
    const request = await requestOf('restart');
    const ran = s.tools.count('restart');
    const [byAlice, byRita] = await Promise.all([answer(ALICE, request), answer(RITA, request)]);
    expect(byAlice).toMatchObject({ ok: false, code: 'FORBIDDEN', reason: 'FOUR_EYES' });
    expect(byRita.ok && byRita.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'rita' });
    expect(s.tools.count('restart')).toBe(ran + 1);
  });

  it("the requester's CANCEL and a reviewer's ACCEPT at once: exactly one of them stands", async () => {
    for (let round = 0; round < 3; round++) {
      const request = await requestOf('restart');
      const ran = s.tools.count('restart');
      const [cancel, accept] = await Promise.all([answer(ALICE, request, { action: 'CANCEL' }), answer(RITA, request)]);
      const turn = await s.app.store.loadTurn(request.turnId);
      if (cancel.ok) {
        expect(accept).toMatchObject({ ok: false, code: 'ALREADY_RESOLVED' });
        expect([turn?.status, s.tools.count('restart') - ran]).toEqual(['CANCELLED', 0]);
      } else {
        expect(cancel).toMatchObject({ ok: false, code: 'ALREADY_RESOLVED' });
        expect(accept.ok && accept.elicitation.status).toBe('ACCEPTED');
        expect([turn?.status, s.tools.count('restart') - ran]).toEqual(['COMPLETED', 1]);
      }
    }
  });
});

describe('who is offered a request (pendingElicitations TO_ANSWER, mayAnswerNow) and who reads it', () => {
  const answersOf = (id: string) => () => s.app.store.listApproverAnswers([id]);
  /** Who may answer it now, by the live rule and by the list; the two must agree. */
  async function whoMayAnswer(request: ElicitationRecord): Promise<string[]> {
    const fresh = (await s.app.store.loadElicitation(request.id))!;
    const who: string[] = [];
    for (const viewer of [ALICE, RITA, SAM, OLLIE, MALLORY, ADMIN]) {
      const live = await mayAnswerNow(s.app, viewer, fresh, answersOf(request.id));
      const listed = (
        await listPendingElicitations(s.app, viewer, { threadId: null, agentId: null, scope: 'TO_ANSWER' })
      ).items.some((e) => e.id === request.id);
      expect([viewer.id, live]).toEqual([viewer.id, listed]);
      if (live) who.push(viewer.id);
    }
    return who;
  }

  it('the approvers who have not answered; an edit lets the outdated one in again; none once decided', async () => {
    const plain = await requestOf('plain');
    const id = plain.id;
    // Never the requester (four eyes), an unrelated role, an administrator without the role, oncall before its time.
    expect(await whoMayAnswer(plain)).toEqual(['rita', 'sam']);
    await answerElicitation(s.app, RITA, { elicitationId: id, action: 'ACCEPT' });
    expect(await whoMayAnswer(plain)).toEqual(['sam']);
    // Sam proposes other arguments: Rita's ACCEPT no longer counts, and she may answer anew.
    await answerElicitation(s.app, SAM, { elicitationId: id, action: 'ACCEPT', arguments: { x: 1 } });
    expect(await whoMayAnswer(plain)).toEqual(['rita']);
    // From the escalation time on, oncall too.
    expect(await mayAnswerNow(afterEscalation(plain), OLLIE, plain, answersOf(id))).toBe(true);
    await answerElicitation(s.app, RITA, { elicitationId: id, action: 'ACCEPT', arguments: { x: 1 } });
    expect(await whoMayAnswer(plain)).toEqual([]);
  });

  it('a request without a policy is offered to no one; a cancelled one no longer', async () => {
    const note = await requestOf('note');
    expect(await whoMayAnswer(note)).toEqual([]);
    const restart = await requestOf('restart');
    expect(await whoMayAnswer(restart)).toEqual(['rita', 'sam']);
    await answerElicitation(s.app, ALICE, { elicitationId: restart.id, action: 'CANCEL' });
    expect(await whoMayAnswer(restart)).toEqual([]);
  });

  it('the requester and its approvers read the request by id, only the requester its turn; anyone else nothing', async () => {
    const request = await requestOf('plain');
    const reads: [Viewer, boolean, boolean][] = [
      // viewer, reads the request, sees its turn
      [ALICE, true, true],
      [RITA, true, false],
      [OLLIE, true, false], // an escalation role, before its time
      [MALLORY, false, false],
      [BOB, false, false],
      [ADMIN, false, false],
    ];
    for (const [viewer, reads_, seesTurn] of reads) {
      const read = await getElicitation(s.app, viewer, request.id);
      expect([viewer.id, read?.id ?? null, read !== null && seesTurnOf(read, viewer)]).toEqual([
        viewer.id,
        reads_ ? request.id : null,
        seesTurn,
      ]);
    }
  });
});

describe('remembered approvals under a policy', () => {
  // THREAD: the grants stay in their threads, out of the way of the other cases' calls.
  const REMEMBER = { scope: 'THREAD' as const, ttlSeconds: 3600 };

  it("a quorum that all asked to remember lets the requester's later calls run; the requester alone never stands in for it", async () => {
    const request = await requestOf('restart');
    // One reviewer decides restart: its wish to remember is the quorum's.
    const done = await answer(RITA, request, { remember: REMEMBER });
    expect(done.ok && done.elicitation.status).toBe('ACCEPTED');
    const grants = (await listGrants(s.app, ALICE, { agentId: null, threadId: null, includeInactive: false })).items;
    expect(grants).toContainEqual(
      expect.objectContaining({ ownerId: 'alice', scope: 'THREAD', toolId: 't:restart', elicitationId: request.id }),
    );
    // Her next call of restart in the thread runs under the quorum's grant.
    const next = await startTurn(s.app, ALICE, {
      agentId: AGENT_ID,
      threadId: request.threadId,
      message: 't_restart',
      background: false,
    });
    expect(next.ok && [next.turn.status, next.pausedWith]).toEqual(['COMPLETED', null]);
    // Scale, where Alice counts as one of two: her own wish to remember decides nothing.
    const scale = await requestOf('scale');
    const alone = await answer(ALICE, scale, { remember: REMEMBER });
    expect(alone.ok && [alone.elicitation.status, alone.elicitation.grantId]).toEqual(['PENDING', null]);
  });

  it('a grant is the shortest and narrowest of the wishes of the approvals that decided', async () => {
    const request = await requestOf('plain');
    await answer(RITA, request, { remember: { scope: 'AGENT', ttlSeconds: 600 } });
    const done = await answer(SAM, request, { remember: { scope: 'THREAD', ttlSeconds: 3600 } });
    if (!done.ok) throw new Error(JSON.stringify(done));
    const grant = await s.app.store.getApprovalGrant(done.elicitation.grantId!, ALICE.id);
    expect(grant).toMatchObject({ scope: 'THREAD', toolId: 't:plain', elicitationId: request.id });
    expect(Date.parse(grant!.expiresAt) - Date.parse(grant!.createdAt)).toBe(600_000);
  });
});

describe('an MCP gateway call under a reviewer policy', () => {
  it('waits for a reviewer: the client cannot accept its own call, the reviewer does, it runs once', async () => {
    const before = s.tools.count('drop');
    const outcome = await callTool(s.app, ALICE, { agentId: GATEWAY, name: 'drop', arguments: { table: 't1' } });
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    const [request] = outcome.call.waitingOn;
    expect(request!.approval).toEqual({ roles: ['reviewer'], required: 1, requester: 'EXCLUDED', escalation: null });
    await expectRefused(
      s,
      ALICE,
      { elicitationId: request!.id, action: 'ACCEPT' },
      { code: 'FORBIDDEN', field: 'action', reason: 'FOUR_EYES' },
    );
    const waiting = awaitCallResult(s.app, ALICE, outcome.call.turn.id, { tickMs: 50 });
    const answered = await answerElicitation(s.app, RITA, { elicitationId: request!.id, action: 'ACCEPT' });
    expect(answered.ok && answered.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'rita' });
    const done = await waiting;
    // Its receipt names the reviewer whose answer let it run.
    expect(done?.result).toEqual({
      content: [{ type: 'text', text: 'dropped' }],
      isError: false,
      _meta: {
        'dev.toolgate/receipt': expect.objectContaining({
          kind: 'ACCEPTED',
          actor: expect.objectContaining({ id: 'rita' }),
        }),
      },
    });
    expect(s.tools.count('drop')).toBe(before + 1);
  });
});
