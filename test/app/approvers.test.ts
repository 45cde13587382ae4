// Approvers through the use cases, no API in front (docs/approvers.md): the gate decides a call's policy when it
// pauses and keeps it with the request; who may answer it (the requester, members of its roles, an administrator's
// CANCEL), each refusal storing nothing; a gateway's call answered by a reviewer; and an agent's pause cannot be
// shortened below its escalation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation, type AnswerElicitationInput } from '../../src/app/answer-elicitation.js';
import { awaitCallResult, callTool } from '../../src/app/call-tool.js';
import { listPendingElicitations, mayAnswerNow } from '../../src/app/reads.js';
import { startTurn } from '../../src/app/start-turn.js';
import { updateAgentGating } from '../../src/app/update-agent-gating.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { ElicitationRecord } from '../../src/domain/records.js';
import { ADMIN, ALICE, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { AGENT_ID, testAgent } from '../support/scenario.js';

const GATEWAY = 'gw';
const RITA: Viewer = { id: 'rita', isAdmin: false, roles: ['reviewer'] };
const SAM: Viewer = { id: 'sam', isAdmin: false, roles: ['reviewer', 'ops'] };
const OLLIE: Viewer = { id: 'ollie', isAdmin: false, roles: ['oncall'] };
const MALLORY: Viewer = { id: 'mallory', isAdmin: false, roles: ['ops'] };

let s: AppScenario;

beforeAll(async () => {
  s = await startApp({
    tools: [
      { name: 'wipe' },
      { name: 'write' },
      { name: 'plain' },
      { name: 'note' },
      { name: 'drop', run: () => 'dropped' },
    ],
    script: [callsWhatIsNamed({ write: { path: '/etc/hosts' } })],
    agent: {
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

async function paused(viewer: Viewer, message: string): Promise<ElicitationRecord[]> {
  const outcome = await startTurn(s.app, viewer, { agentId: AGENT_ID, threadId: null, message, background: false });
  if (!outcome.ok || !outcome.pausedWith) throw new Error(`did not pause: ${JSON.stringify(outcome)}`);
  return outcome.pausedWith;
}

describe('the policy of a paused call', () => {
  it("is decided at the pause and kept with the request: the rule's, the tool's, the agent's", async () => {
    const [write, wipe, plain] = await paused(ALICE, 't_write t_wipe t_plain');
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

/** Refused, and nothing stored, nothing run. */
async function expectRefused(viewer: Viewer, input: AnswerElicitationInput, refusal: object): Promise<void> {
  const before = await s.snapshot();
  const runs = JSON.stringify([...s.tools.runs]);
  expect(await answerElicitation(s.app, viewer, input)).toEqual({ ok: false, ...refusal });
  expect(await s.snapshot()).toEqual(before);
  expect(JSON.stringify([...s.tools.runs])).toBe(runs);
}

describe('who may answer (four eyes, two reviewers, escalation to oncall)', () => {
  it('the requester may not accept or decline, only cancel; an approver sees no turn', async () => {
    const [plain] = await paused(ALICE, 't_plain');
    const id = plain!.id;
    for (const action of ['ACCEPT', 'DECLINE'] as const) {
      await expectRefused(
        ALICE,
        { elicitationId: id, action },
        { code: 'FORBIDDEN', field: 'action', reason: 'FOUR_EYES' },
      );
    }
    const counted = await answerElicitation(s.app, RITA, { elicitationId: id, action: 'ACCEPT' });
    expect(counted).toEqual({
      ok: true,
      elicitation: expect.objectContaining({ id, status: 'PENDING' }),
      turn: null,
      pausedWith: null,
    });
    const cancelled = await answerElicitation(s.app, ALICE, { elicitationId: id, action: 'CANCEL' });
    expect(cancelled.ok && [cancelled.elicitation.status, cancelled.turn?.status]).toEqual(['CANCELLED', 'CANCELLED']);
  });

  it('someone without a role of the policy reads it as absent; an approver may not cancel; an admin may', async () => {
    const [plain] = await paused(ALICE, 't_plain');
    const id = plain!.id;
    await expectRefused(
      MALLORY,
      { elicitationId: id, action: 'ACCEPT' },
      { code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' },
    );
    await expectRefused(
      MALLORY,
      { elicitationId: id, action: 'CANCEL' },
      { code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' },
    );
    await expectRefused(
      SAM,
      { elicitationId: id, action: 'CANCEL' },
      { code: 'FORBIDDEN', field: 'action', reason: 'CANCEL_BY_REQUESTER' },
    );
    await expectRefused(
      ADMIN,
      { elicitationId: id, action: 'ACCEPT' },
      { code: 'FORBIDDEN', field: 'action', reason: 'NOT_AN_APPROVER' },
    );
    const byAdmin = await answerElicitation(s.app, ADMIN, { elicitationId: id, action: 'CANCEL' });
    expect(byAdmin).toEqual({
      ok: true,
      elicitation: expect.objectContaining({ status: 'CANCELLED', resolvedBy: ADMIN.id }),
      turn: null,
      pausedWith: null,
    });
  });

  it('an escalation role answers only from the escalation time on', async () => {
    const [plain] = await paused(ALICE, 't_plain');
    await expectRefused(
      OLLIE,
      { elicitationId: plain!.id, action: 'ACCEPT' },
      { code: 'FORBIDDEN', field: 'action', reason: 'NOT_YET_ESCALATED', escalatesAt: plain!.approval!.escalation!.at },
    );
  });

  it("a tool set to REQUESTER stays the requester's alone: a reviewer reads it as absent", async () => {
    const [note] = await paused(ALICE, 't_note');
    expect(note!.approval).toBeNull();
    await expectRefused(
      RITA,
      { elicitationId: note!.id, action: 'ACCEPT' },
      { code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' },
    );
    const answered = await answerElicitation(s.app, ALICE, { elicitationId: note!.id, action: 'ACCEPT' });
    expect(answered.ok && answered.turn?.status).toBe('COMPLETED');
  });
});

describe('mayAnswerNow: one request, live, as pendingElicitations(scope: TO_ANSWER) lists it', () => {
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
    const [plain] = await paused(ALICE, 't_plain');
    const id = plain!.id;
    // Never the requester (four eyes), an unrelated role, an administrator without the role, oncall before its time.
    expect(await whoMayAnswer(plain!)).toEqual(['rita', 'sam']);
    await answerElicitation(s.app, RITA, { elicitationId: id, action: 'ACCEPT' });
    expect(await whoMayAnswer(plain!)).toEqual(['sam']);
    // Sam proposes other arguments: Rita's ACCEPT no longer counts, and she may answer anew.
    await answerElicitation(s.app, SAM, { elicitationId: id, action: 'ACCEPT', arguments: { x: 1 } });
    expect(await whoMayAnswer(plain!)).toEqual(['rita']);
    // From the escalation time on, oncall too.
    const escalated = { clock: () => new Date(Date.parse(plain!.approval!.escalation!.at) + 1) };
    expect(await mayAnswerNow(escalated, OLLIE, plain!, answersOf(id))).toBe(true);
    await answerElicitation(s.app, RITA, { elicitationId: id, action: 'ACCEPT', arguments: { x: 1 } });
    expect(await whoMayAnswer(plain!)).toEqual([]);
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
      ALICE,
      { elicitationId: request!.id, action: 'ACCEPT' },
      { code: 'FORBIDDEN', field: 'action', reason: 'FOUR_EYES' },
    );
    const waiting = awaitCallResult(s.app, ALICE, outcome.call.turn.id, { tickMs: 50 });
    const answered = await answerElicitation(s.app, RITA, { elicitationId: request!.id, action: 'ACCEPT' });
    expect(answered.ok && answered.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'rita' });
    const done = await waiting;
    expect(done?.result).toEqual({ content: [{ type: 'text', text: 'dropped' }], isError: false });
    expect(s.tools.count('drop')).toBe(before + 1);
  });
});
