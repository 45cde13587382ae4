// Remembered approvals (docs/approvals.md) through the use cases, no API in front: an ACCEPT with `remember` records
// a grant; while it holds, later calls of the tool in its scope run without asking and are its uses; a remember the
// gating refuses records nothing; a grant stops holding once revoked or once its tool asks every time, a veto and a
// listener's own question still win; it is its user's own; and a revoke racing a call it let through either follows
// the call's start or stops the call. Expiry and a changed tool definition, which need the server's clock and a
// restart, are in test/graphql/approval-grants.test.ts with the API's side.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation, type AnswerElicitationInput } from '../../src/app/answer-elicitation.js';
import { grantState, grantUses, listGrants } from '../../src/app/grant-reads.js';
import { revokeGrant } from '../../src/app/revoke-grant.js';
import { startTurn } from '../../src/app/start-turn.js';
import { updateAgentGating } from '../../src/app/update-agent-gating.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { ApprovalGrantRecord, RememberChoice, TurnRecord } from '../../src/domain/records.js';
import { ADMIN, otherAgent, startApp, type AppScenario } from '../support/app.js';
import { expectConsistent, expectRefused, toolTextsOf } from '../support/app-turns.js';
import { bigNotes, notesModel, notesTools, NOTES_GATING, protectNotes } from '../support/notes.js';
import { AGENT_ID, deferred, testAgent } from '../support/scenario.js';

const THIRTY_DAYS = 30 * 24 * 3600;
const grantLapsed = (name: string) =>
  `Execution of ${name} did not run: the user's remembered approval of it was revoked or expired before it started. Call it again to ask the user.`;

/** What slow_read waits for before it answers; a test sets it. */
let slowRead: () => Promise<void> = async () => {};
let s: AppScenario;

beforeAll(async () => {
  s = await startApp({
    tools: notesTools(() => slowRead()),
    script: [notesModel],
    agent: NOTES_GATING,
    // Agents whose gating a test changes: each its own.
    agents: [otherAgent(), testAgent({ id: 'third', name: 'Third agent' })],
    listeners: [protectNotes(), bigNotes],
  });
});
afterAll(() => s?.close());

let users = 0;
/** A user of the test's own: their grants are all the test's. */
const someone = (): Viewer => ({ id: `granting-${++users}`, isAdmin: false, roles: [] });

async function send(
  viewer: Viewer,
  message: string,
  options: { threadId?: string | null; background?: boolean; agentId?: string } = {},
) {
  const outcome = await startTurn(s.app, viewer, {
    agentId: options.agentId ?? AGENT_ID,
    threadId: options.threadId ?? null,
    message,
    background: options.background ?? false,
  });
  if (!outcome.ok) throw new Error(`refused: ${JSON.stringify(outcome)}`);
  return outcome;
}

async function answered(viewer: Viewer, input: AnswerElicitationInput) {
  const outcome = await answerElicitation(s.app, viewer, input);
  if (!outcome.ok) throw new Error(`refused: ${JSON.stringify(outcome)}`);
  return outcome;
}

/** A call of edit_note in a new thread (or `threadId`), paused, then ACCEPTed with `remember`: the grant it made. */
async function remembered(
  viewer: Viewer,
  remember: RememberChoice,
  options: { threadId?: string; agentId?: string } = {},
) {
  const asked = await send(viewer, 'edit n1', options);
  expect(asked.turn.status).toBe('PAUSED');
  const request = asked.pausedWith![0]!;
  const outcome = await answered(viewer, { elicitationId: request.id, action: 'ACCEPT', remember });
  expect(outcome.turn?.status).toBe('COMPLETED');
  const grant = (await s.app.store.getApprovalGrant(outcome.elicitation.grantId!, viewer.id))!;
  return { grant, elicitation: outcome.elicitation, threadId: asked.thread.id };
}

const grants = async (
  viewer: Viewer,
  filter: { agentId?: string; threadId?: string; includeInactive?: boolean } = {},
): Promise<ApprovalGrantRecord[]> =>
  (
    await listGrants(s.app, viewer, {
      agentId: filter.agentId ?? null,
      threadId: filter.threadId ?? null,
      includeInactive: filter.includeInactive ?? false,
    })
  ).items;

const stateOf = (grant: ApprovalGrantRecord) => grantState(s.app, grant, (id) => s.app.store.getAgent(id));

/** The turn, once its loop has stopped (a background start returns while it runs). */
async function settled(turnId: string): Promise<TurnRecord> {
  for (let i = 0; i < 500; i++) {
    const turn = (await s.app.store.loadTurn(turnId))!;
    if (turn.status !== 'RUNNING') return turn;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`turn ${turnId} still RUNNING`);
}

describe('ACCEPT with remember', () => {
  it('THREAD: the next call in the thread runs unasked and is a use; a new thread asks again', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const { grant, elicitation, threadId } = await remembered(alice, { scope: 'THREAD', ttlSeconds: 600 });
    expect(elicitation.response).toEqual({
      action: 'ACCEPT',
      content: null,
      remember: { scope: 'THREAD', ttlSeconds: 600 },
    });
    expect(grant).toMatchObject({ scope: 'THREAD', threadId, toolId: 't:edit_note', elicitationId: elicitation.id });
    expect(await stateOf(grant)).toBe('ACTIVE');
    expect(Date.parse(grant.expiresAt) - Date.parse(grant.createdAt)).toBe(600_000);
    expect(grant.createdAt).toBe(elicitation.resolvedAt);

    const again = await send(alice, 'edit n2', { threadId });
    expect([again.turn.status, again.pausedWith]).toEqual(['COMPLETED', null]);
    expect(await s.app.store.listTurnElicitations(again.turn.id)).toEqual([]);
    expect(s.tools.runs.get('edit_note')!.slice(ran)).toEqual([{ id: 'n1' }, { id: 'n2' }]);
    expect(await toolTextsOf(s, again.turn.id)).toEqual(['edit_note ran with {"id":"n2"}']);
    const uses = await grantUses(s.app, grant);
    expect(uses).toEqual([
      { grantId: grant.id, turnId: again.turn.id, toolCallId: expect.any(String), startedAt: expect.any(String) },
    ]);
    expect(uses[0]!.startedAt >= grant.createdAt).toBe(true);
    // A filter by an empty id is a filter by an id nothing has, not no filter.
    expect(await grants(alice, { threadId: '' })).toEqual([]);
    expect(await grants(alice, { agentId: '' })).toEqual([]);

    const elsewhere = await send(alice, 'edit n3');
    expect(elsewhere.turn.status).toBe('PAUSED');
    expect(elsewhere.pausedWith![0]!.toolCall.arguments).toEqual({ id: 'n3' });
    expect(s.tools.count('edit_note') - ran).toBe(2);
    await expectConsistent(s, threadId);
  });

  it('AGENT: a call in a new thread of the same agent runs unasked too', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const { grant } = await remembered(alice, { scope: 'AGENT', ttlSeconds: 600 });
    expect(grant).toMatchObject({ scope: 'AGENT', threadId: null });
    const first = await send(alice, 'edit n2');
    const second = await send(alice, 'edit n3');
    for (const { turn } of [first, second]) {
      expect(turn.status).toBe('COMPLETED');
      expect(await s.app.store.listTurnElicitations(turn.id)).toEqual([]);
    }
    expect(s.tools.runs.get('edit_note')!.slice(ran)).toEqual([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }]);
    expect((await grantUses(s.app, grant)).map((u) => u.turnId)).toEqual([first.turn.id, second.turn.id]);
  });

  it('the same ACCEPT with remember twice: the recorded result, no second grant; another remember is refused', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const asked = await send(alice, 'edit n1');
    const input = {
      elicitationId: asked.pausedWith![0]!.id,
      action: 'ACCEPT' as const,
      remember: { scope: 'THREAD' as const, ttlSeconds: 600 },
    };
    const first = await answered(alice, input);
    const again = await answered(alice, { ...input, remember: { ttlSeconds: 600, scope: 'THREAD' } });
    expect(again.elicitation).toEqual(first.elicitation);
    expect(await grants(alice, { includeInactive: true })).toHaveLength(1);
    await expectRefused(
      s,
      alice,
      { ...input, remember: { scope: 'AGENT', ttlSeconds: 600 } },
      { code: 'ALREADY_RESOLVED', field: 'elicitationId', status: 'ACCEPTED' },
    );
    expect(s.tools.count('edit_note') - ran).toBe(1);
  });

  describe('in a step that pauses for another call', () => {
    /** A step of ask_read (asks) and edit_note (covered): it pauses for ask_read alone, edit_note waits in it. */
    async function pausedWithCoveredCall(alice: Viewer) {
      const { grant } = await remembered(alice, { scope: 'AGENT', ttlSeconds: 600 });
      const both = await send(alice, 'ask n2');
      expect(both.turn.status).toBe('PAUSED');
      expect(both.pausedWith!.map((e) => e.toolCall.name)).toEqual(['ask_read']);
      return { grant, turnId: both.turn.id, elicitationId: both.pausedWith![0]!.id };
    }

    it('the covered call runs after the other one is accepted, and is a use of the grant', async () => {
      const alice = someone();
      const ran = s.tools.count('edit_note');
      const { grant, turnId, elicitationId } = await pausedWithCoveredCall(alice);
      expect(s.tools.count('edit_note') - ran).toBe(1);
      const resumed = await answered(alice, { elicitationId, action: 'ACCEPT' });
      expect(resumed.turn?.status).toBe('COMPLETED');
      expect(s.tools.runs.get('edit_note')!.slice(ran)).toEqual([{ id: 'n1' }, { id: 'n2' }]);
      expect((await grantUses(s.app, grant)).map((u) => u.turnId)).toEqual([turnId]);
    });

    it('revoked while the step waits: when the step resumes, the covered call does not run (checked again as it starts)', async () => {
      const alice = someone();
      const [ranEdit, ranAsk] = [s.tools.count('edit_note'), s.tools.count('ask_read')];
      const { grant, turnId, elicitationId } = await pausedWithCoveredCall(alice);
      const revoked = await revokeGrant(s.app, alice, { grantId: grant.id });
      expect(revoked.ok && (await stateOf(revoked.grant))).toBe('REVOKED');
      const resumed = await answered(alice, { elicitationId, action: 'ACCEPT' });
      expect(resumed.turn?.status).toBe('COMPLETED');
      expect([s.tools.count('edit_note') - ranEdit, s.tools.count('ask_read') - ranAsk]).toEqual([1, 1]);
      expect(await toolTextsOf(s, turnId)).toEqual(['ask_read ran with {}', grantLapsed('edit_note')]);
      expect(await grantUses(s.app, grant)).toEqual([]);
    });
  });

  it("another user still gets asked, and sees none of the first user's grants (revoke: NOT_FOUND)", async () => {
    const [alice, bob] = [someone(), someone()];
    const ran = s.tools.count('edit_note');
    const { grant } = await remembered(alice, { scope: 'AGENT', ttlSeconds: 600 });

    const bobs = await send(bob, 'edit n2');
    expect(bobs.turn.status).toBe('PAUSED');
    expect(await grants(bob, { includeInactive: true })).toEqual([]);
    expect(await grants(bob, { agentId: AGENT_ID, includeInactive: true })).toEqual([]);
    expect(await revokeGrant(s.app, bob, { grantId: grant.id })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      of: 'grant',
      field: 'grantId',
    });
    // Bob's own ACCEPT with remember is his, and does not show to Alice as hers.
    const bobsAnswer = await answered(bob, {
      elicitationId: bobs.pausedWith![0]!.id,
      action: 'ACCEPT',
      remember: { scope: 'THREAD', ttlSeconds: 60 },
    });
    const bobsGrant = (await s.app.store.getApprovalGrant(bobsAnswer.elicitation.grantId!, bob.id))!;
    expect([bobsGrant.scope, await stateOf(bobsGrant)]).toEqual(['THREAD', 'ACTIVE']);

    const mine = await grants(alice, { includeInactive: true });
    expect(mine).toEqual([expect.objectContaining({ id: grant.id, revokedAt: null })]);
    expect(await stateOf(mine[0]!)).toBe('ACTIVE');
    expect((await send(alice, 'edit n3')).turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('edit_note')!.slice(ran)).toEqual([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }]);
  });
});

describe('remember is refused, and nothing is recorded', () => {
  const NOT_REMEMBERABLE = (toolName: string) => ({
    code: 'INVALID_INPUT',
    field: 'remember',
    reason: 'NOT_REMEMBERABLE',
    toolName,
  });
  const OUT_OF_RANGE = {
    code: 'INVALID_INPUT',
    field: 'remember',
    at: ['ttlSeconds'],
    reason: 'OUT_OF_RANGE',
    max: THIRTY_DAYS,
  };
  const ACCEPT_ONLY = { code: 'INVALID_INPUT', field: 'remember', reason: 'ACCEPT_ONLY' };
  const cases: [string, string, Partial<AnswerElicitationInput>, object][] = [
    [
      'for a tool set to ALWAYS',
      'always n1',
      { remember: { scope: 'AGENT', ttlSeconds: 60 } },
      NOT_REMEMBERABLE('always_note'),
    ],
    [
      'for a call a listener asked about for reasons of its own',
      'edit big',
      { remember: { scope: 'AGENT', ttlSeconds: 60 } },
      NOT_REMEMBERABLE('edit_note'),
    ],
    ['with ttlSeconds 0', 'edit n1', { remember: { scope: 'THREAD', ttlSeconds: 0 } }, OUT_OF_RANGE],
    ['with ttlSeconds -1', 'edit n1', { remember: { scope: 'THREAD', ttlSeconds: -1 } }, OUT_OF_RANGE],
    [
      'with ttlSeconds over 30 days',
      'edit n1',
      { remember: { scope: 'THREAD', ttlSeconds: THIRTY_DAYS + 1 } },
      OUT_OF_RANGE,
    ],
    ['with DECLINE', 'edit n1', { action: 'DECLINE', remember: { scope: 'AGENT', ttlSeconds: 60 } }, ACCEPT_ONLY],
    ['with CANCEL', 'edit n1', { action: 'CANCEL', remember: { scope: 'AGENT', ttlSeconds: 60 } }, ACCEPT_ONLY],
  ];

  it.each(cases)('%s; a plain ACCEPT still goes through', async (_what, message, input, refusal) => {
    const alice = someone();
    const asked = await send(alice, message);
    const elicitationId = asked.pausedWith![0]!.id;
    await expectRefused(s, alice, { elicitationId, action: 'ACCEPT', ...input }, refusal);
    expect(await grants(alice, { includeInactive: true })).toEqual([]);
    expect((await answered(alice, { elicitationId, action: 'ACCEPT' })).turn?.status).toBe('COMPLETED');
  });

  it('ttlSeconds of exactly 30 days is the longest accepted', async () => {
    const { grant } = await remembered(someone(), { scope: 'THREAD', ttlSeconds: THIRTY_DAYS });
    expect(Date.parse(grant.expiresAt) - Date.parse(grant.createdAt)).toBe(THIRTY_DAYS * 1000);
  });

  it('for a tool set to ALWAYS after it asked: refused (no inert grant)', async () => {
    const alice = someone();
    const asked = await send(alice, 'edit n1', { agentId: 'other' });
    const always = await updateAgentGating(s.app, ADMIN, {
      agentId: 'other',
      toolConfirmation: [{ toolId: 't:edit_note', mode: 'ALWAYS' }],
    });
    expect(always.ok).toBe(true);
    await expectRefused(
      s,
      alice,
      { elicitationId: asked.pausedWith![0]!.id, action: 'ACCEPT', remember: { scope: 'AGENT', ttlSeconds: 600 } },
      NOT_REMEMBERABLE('edit_note'),
    );
  });
});

describe('when a grant stops holding', () => {
  it('revoke: later calls ask again; the grant reads REVOKED; revoking again keeps the first revokedAt', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const { grant } = await remembered(alice, { scope: 'AGENT', ttlSeconds: 3600 });
    expect((await send(alice, 'edit n2')).turn.status).toBe('COMPLETED');
    const revoked = await revokeGrant(s.app, alice, { grantId: grant.id });
    if (!revoked.ok) throw new Error('refused');
    expect(revoked.grant).toMatchObject({ id: grant.id, revokedAt: expect.any(String) });
    expect(await stateOf(revoked.grant)).toBe('REVOKED');
    const [use] = await grantUses(s.app, revoked.grant);
    expect(use!.startedAt <= revoked.grant.revokedAt!).toBe(true);

    expect((await send(alice, 'edit n3')).turn.status).toBe('PAUSED');
    expect(s.tools.count('edit_note') - ran).toBe(2);
    expect(await revokeGrant(s.app, alice, { grantId: grant.id })).toEqual(revoked);
    expect(await grants(alice)).toEqual([]);
    expect(await grants(alice, { includeInactive: true })).toEqual([revoked.grant]);
  });

  it('a tool set to ALWAYS afterwards asks every time, its grant notwithstanding', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    await remembered(alice, { scope: 'AGENT', ttlSeconds: 600 }, { agentId: 'third' });
    expect((await send(alice, 'edit n2', { agentId: 'third' })).turn.status).toBe('COMPLETED');
    await updateAgentGating(s.app, ADMIN, {
      agentId: 'third',
      toolConfirmation: [{ toolId: 't:edit_note', mode: 'ALWAYS' }],
    });
    expect((await send(alice, 'edit n3', { agentId: 'third' })).turn.status).toBe('PAUSED');
    expect(s.tools.count('edit_note') - ran).toBe(2);
  });

  it('a listener vetoing a call wins over the grant: denied, not run, not a use', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const { grant, threadId } = await remembered(alice, { scope: 'THREAD', ttlSeconds: 600 });
    const vetoed = await send(alice, 'edit protected', { threadId });
    expect(vetoed.turn.status).toBe('COMPLETED');
    expect(await toolTextsOf(s, vetoed.turn.id)).toEqual([
      'Execution of edit_note was denied: protected notes are read-only',
    ]);
    expect(s.tools.runs.get('edit_note')!.slice(ran)).toEqual([{ id: 'n1' }]);
    expect(await stateOf(grant)).toBe('ACTIVE');
    expect(await grantUses(s.app, grant)).toEqual([]);
  });

  it('a listener asking for confirmation for reasons of its own is not skipped by a grant', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const { threadId } = await remembered(alice, { scope: 'THREAD', ttlSeconds: 600 });
    const big = await send(alice, 'edit big', { threadId });
    expect(big.turn.status).toBe('PAUSED');
    expect(s.tools.runs.get('edit_note')!.slice(ran)).toEqual([{ id: 'n1' }]);
    // The grant still covers the tool's ordinary calls.
    await answered(alice, { elicitationId: big.pausedWith![0]!.id, action: 'DECLINE' });
    expect((await send(alice, 'edit n2', { threadId })).turn.status).toBe('COMPLETED');
  });
});

describe('a revoke racing a call the grant let through', () => {
  /** The step's edit_note call, and how it ended. */
  async function editOutcome(turnId: string) {
    const messages = await s.app.store.listTurnMessages(turnId);
    const editCall = messages
      .flatMap((m) => m.toolCalls)
      .find((c) => c.name === 'edit_note' && c.arguments.id === 'race')!;
    const answer = messages.find((m) => m.role === 'TOOL' && m.toolCallId === editCall.id);
    return { callId: editCall.id, text: answer?.text ?? null };
  }

  it('revoked after the gate let it through, before it started: it does not run, and the model is told why', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const entered = deferred();
    const release = deferred();
    slowRead = async () => {
      entered.resolve();
      await release.promise;
    };
    try {
      const { grant } = await remembered(alice, { scope: 'AGENT', ttlSeconds: 3600 });
      const { turn } = await send(alice, 'both race', { background: true });
      await entered.promise; // the gate has passed both calls; edit_note waits behind slow_read
      const revoked = await revokeGrant(s.app, alice, { grantId: grant.id });
      expect(revoked.ok).toBe(true);
      release.resolve();

      const final = await settled(turn.id);
      expect(final.status).toBe('COMPLETED');
      // Never asked: the grant covered it at the gate.
      expect(await s.app.store.listTurnElicitations(turn.id)).toEqual([]);
      expect((await editOutcome(turn.id)).text).toBe(grantLapsed('edit_note'));
      expect(await toolTextsOf(s, turn.id)).toEqual(['read', grantLapsed('edit_note')]);
      expect(s.tools.count('edit_note') - ran).toBe(1);
      expect(await grantUses(s.app, grant)).toEqual([]);
      await expectConsistent(s, turn.threadId);
    } finally {
      slowRead = async () => {};
    }
  });

  const ROUNDS = 12;
  it(`${ROUNDS} races of revoke and call: the call ran before the revoke, or did not run; never after it`, async () => {
    const alice = someone();
    let round = 0;
    let entered = deferred();
    // slow_read holds the step for 0-3 ms after the gate; the revoke comes 0-2 ms after the gate (every third round
    // as the turn starts, before its gate).
    slowRead = async () => {
      entered.resolve();
      await new Promise((r) => setTimeout(r, round % 4));
    };
    try {
      const outcomes: string[] = [];
      for (round = 0; round < ROUNDS; round++) {
        const { grant } = await remembered(alice, { scope: 'AGENT', ttlSeconds: 3600 });
        const runsBefore = s.tools.count('edit_note');
        entered = deferred();
        const gate = round % 3 === 0 ? Promise.resolve() : entered.promise;
        const [{ turn }, revoked] = await Promise.all([
          send(alice, 'both race', { background: true }),
          gate
            .then(() => new Promise((r) => setTimeout(r, round % 3)))
            .then(() => revokeGrant(s.app, alice, { grantId: grant.id })),
        ]);
        if (!revoked.ok) throw new Error('refused');
        const revokedAt = revoked.grant.revokedAt!;
        const final = await settled(turn.id);
        const uses = await grantUses(s.app, grant);
        const { callId, text } = await editOutcome(turn.id);
        const ran = s.tools.count('edit_note') - runsBefore;

        if (final.status === 'PAUSED') {
          // The revoke came before the gate: the call asked, as if there had never been a grant.
          outcomes.push('asked');
          const pending = await s.app.store.listTurnElicitations(turn.id);
          expect(pending.map((e) => e.toolCall.arguments)).toEqual([{ id: 'race' }]);
          expect([ran, uses]).toEqual([0, []]);
          // Closed before the next round (the thread is its own, the grant is gone either way).
          await answered(alice, { elicitationId: pending[0]!.id, action: 'CANCEL' });
        } else if (uses.length > 0) {
          outcomes.push('ran');
          expect(ran).toBe(1);
          expect(uses).toEqual([
            { grantId: grant.id, turnId: turn.id, toolCallId: callId, startedAt: expect.any(String) },
          ]);
          // The audit never shows a call started after its grant was revoked (revokedAtFor, src/domain/grants.ts).
          expect(`${uses[0]!.startedAt} <= ${revokedAt}: ${uses[0]!.startedAt <= revokedAt}`).toMatch(/true$/);
          expect(text).toBe('edit_note ran with {"id":"race"}');
        } else {
          outcomes.push('lapsed');
          expect(ran).toBe(0);
          expect(text).toBe(grantLapsed('edit_note'));
        }
      }
      expect(outcomes).toHaveLength(ROUNDS);
    } finally {
      slowRead = async () => {};
    }
  });
});
