// Remembered approvals (docs/approvals.md) over the real HTTP API: an ACCEPT with `remember` records a grant; while
// it holds, later calls of the tool in its scope run without asking and are listed as its uses; it stops holding when
// it expires, is revoked, or the tool's definition changes; it is the user's own; a veto still wins; and a revoke
// racing a call it let through either follows the call's start or stops the call.
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import { toolText } from '../../src/domain/gate/messages.js';
import type { ModelRequest, ModelResponse } from '../../src/models/model.js';
import { dataOf, START_TURN } from '../support/harness.js';
import {
  AGENT_ID,
  call,
  callStep,
  deferred,
  manualClock,
  startScenario,
  testConfig,
  textStep,
  toolTexts,
  type Scenario,
  type ScenarioOptions,
} from '../support/scenario.js';
import type { CountingTool } from '../support/tools.js';

const THIRTY_DAYS = 30 * 24 * 3600;
const TOOL_ID = 't:edit_note';

const GRANT_FIELDS = `id scope toolId state createdAt expiresAt revokedAt agent { id } thread { id }
  elicitation { id } uses { toolCallId startedAt turn { id } }`;

const ANSWER = `mutation Answer($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    elicitation { id status resolvedAt response { action arguments remember { scope ttlSeconds } } grant { ${GRANT_FIELDS} } }
    turn { id status }
    userErrors { code message field }
  }
}`;

const GRANTS = `query Grants($agentId: ID, $threadId: ID, $includeInactive: Boolean, $first: Int, $after: String) {
  approvalGrants(agentId: $agentId, threadId: $threadId, includeInactive: $includeInactive, first: $first, after: $after) {
    edges { cursor node { ${GRANT_FIELDS} } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const GRANT = `query Grant($id: ID!) { elicitation(id: $id) { status grant { ${GRANT_FIELDS} } } }`;

const REVOKE = `mutation Revoke($input: RevokeApprovalGrantInput!) {
  revokeApprovalGrant(input: $input) { grant { ${GRANT_FIELDS} } userErrors { code message field } }
}`;

const TURN = `query Turn($id: ID!) {
  turn(id: $id) {
    id status text
    messages { role text toolCallId toolCalls { id name arguments } }
    pendingElicitations { id toolCall { name arguments } }
    elicitations { id }
  }
}`;

/**
 * The model: a user message "edit <id>" calls edit_note {id}; "both <id>" calls slow_read, then edit_note {id}, in one
 * step; after the tools answer, it says it is done. Call ids are unique per thread.
 */
function model(request: ModelRequest): ModelResponse {
  const last = request.messages.at(-1)!;
  if (last.role !== 'USER') return textStep('Done.');
  const [verb, id] = (last.text ?? '').split(' ');
  const n = request.messages.length;
  const edit = call('edit_note', { id: id ?? 'n1' }, `call_edit_${n}`);
  return verb === 'both' ? callStep(call('slow_read', {}, `call_read_${n}`), edit) : callStep(edit);
}

const EDIT_NOTE: CountingTool = { name: 'edit_note' };

let s: Scenario;
let user: string | null = null;
const TOKENS: Record<string, string> = { alice: 'alice-token-4c1d2e3f4a5b6c7d', bob: 'bob-token-9e8d7c6b5a4f3e2d' };

afterEach(async () => {
  await s?.close();
  user = null;
});

async function open(options: ScenarioOptions = {}): Promise<Scenario> {
  s = await startScenario({ tools: [EDIT_NOTE], script: [model], ...options });
  return s;
}

/** As the current `user` (a bearer token) when the scenario has an auth section; else the local user. */
async function gql(query: string, variables: Record<string, unknown>): Promise<any> {
  const headers: Record<string, string> = user ? { authorization: `Bearer ${TOKENS[user]}` } : {};
  return dataOf(await s.h.gql(query, variables, headers));
}

async function send(message: string, threadId: string | null = null, background = false) {
  const payload = (await gql(START_TURN, { input: { agentId: AGENT_ID, message, threadId, background } })).startTurn;
  expect(payload.userErrors).toEqual([]);
  return { turn: payload.turn, threadId: payload.thread.id as string };
}

const answer = async (input: Record<string, unknown>) => (await gql(ANSWER, { input })).resolveElicitation;
const turnOf = async (id: string) => (await gql(TURN, { id })).turn;
const grants = async (variables: Record<string, unknown> = {}) =>
  (await gql(GRANTS, variables)).approvalGrants.edges.map((e: any) => e.node);
const revoke = async (grantId: string) => (await gql(REVOKE, { input: { grantId } })).revokeApprovalGrant;

/** A call of edit_note in a new thread (or `threadId`), paused, then ACCEPTed with `remember`: the grant it made. */
async function remembered(remember: { scope: 'THREAD' | 'AGENT'; ttlSeconds: number }, threadId: string | null = null) {
  const asked = await send('edit n1', threadId);
  expect(asked.turn.status).toBe('PAUSED');
  const result = await answer({ elicitationId: asked.turn.pendingElicitations[0].id, action: 'ACCEPT', remember });
  expect(result.userErrors).toEqual([]);
  expect(result.turn.status).toBe('COMPLETED');
  return { grant: result.elicitation.grant, elicitation: result.elicitation, threadId: asked.threadId };
}

/** The turn, once its loop has stopped (a background start returns while it runs). */
async function settled(turnId: string): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const turn = await turnOf(turnId);
    if (turn.status !== 'RUNNING') return turn;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`turn ${turnId} still RUNNING`);
}

describe('ACCEPT with remember', () => {
  it('THREAD: the grant is ACTIVE; the next call in the thread runs unasked and is a use; a new thread asks again', async () => {
    await open();
    const { grant, elicitation, threadId } = await remembered({ scope: 'THREAD', ttlSeconds: 600 });
    expect(elicitation.response).toEqual({
      action: 'ACCEPT',
      arguments: null,
      remember: { scope: 'THREAD', ttlSeconds: 600 },
    });
    expect(grant).toMatchObject({
      scope: 'THREAD',
      toolId: TOOL_ID,
      state: 'ACTIVE',
      revokedAt: null,
      agent: { id: AGENT_ID },
      thread: { id: threadId },
      elicitation: { id: elicitation.id },
      uses: [],
    });
    expect(Date.parse(grant.expiresAt) - Date.parse(grant.createdAt)).toBe(600_000);
    expect(grant.createdAt).toBe(elicitation.resolvedAt);
    expect(s.tools.count('edit_note')).toBe(1);

    const again = await send('edit n2', threadId);
    expect(again.turn.status).toBe('COMPLETED');
    expect(again.turn.elicitations).toEqual([]);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }, { id: 'n2' }]);
    expect(toolTexts(again.turn.messages)).toEqual(['edit_note ran with {"id":"n2"}']);
    const callId = again.turn.messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length).toolCalls[0].id;
    const [listed] = await grants();
    expect(listed.uses).toEqual([{ toolCallId: callId, startedAt: expect.any(String), turn: { id: again.turn.id } }]);
    expect(listed.uses[0].startedAt >= grant.createdAt).toBe(true);
    // A filter by an empty id is a filter by an id nothing has, not no filter.
    expect(await grants({ threadId: '' })).toEqual([]);
    expect(await grants({ agentId: '' })).toEqual([]);

    const elsewhere = await send('edit n3');
    expect(elsewhere.turn.status).toBe('PAUSED');
    expect(elsewhere.turn.pendingElicitations[0].toolCall.arguments).toEqual({ id: 'n3' });
    expect(s.tools.count('edit_note')).toBe(2);
    await s.expectConsistent(threadId);
  });

  it('AGENT: a call in a new thread of the same agent runs unasked too', async () => {
    await open();
    const { grant } = await remembered({ scope: 'AGENT', ttlSeconds: 600 });
    expect(grant).toMatchObject({ scope: 'AGENT', state: 'ACTIVE', thread: null });
    const first = await send('edit n2');
    const second = await send('edit n3');
    for (const { turn } of [first, second]) {
      expect(turn.status).toBe('COMPLETED');
      expect(turn.elicitations).toEqual([]);
    }
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }]);
    const [listed] = await grants();
    expect(listed.uses.map((u: any) => u.turn.id)).toEqual([first.turn.id, second.turn.id]);
  });

  it('the same ACCEPT with remember twice: the second returns the recorded result and records no second grant', async () => {
    await open();
    const asked = await send('edit n1');
    const input = {
      elicitationId: asked.turn.pendingElicitations[0].id,
      action: 'ACCEPT',
      remember: { scope: 'THREAD', ttlSeconds: 600 },
    };
    const first = await answer(input);
    const again = await answer({ ...input, remember: { ttlSeconds: 600, scope: 'THREAD' } });
    expect(again.userErrors).toEqual([]);
    expect(again.elicitation).toEqual(first.elicitation);
    expect(await grants({ includeInactive: true })).toHaveLength(1);
    const other = await answer({ ...input, remember: { scope: 'AGENT', ttlSeconds: 600 } });
    expect(other.userErrors.map((e: any) => e.code)).toEqual(['ALREADY_RESOLVED']);
    expect(await grants({ includeInactive: true })).toHaveLength(1);
    expect(s.tools.count('edit_note')).toBe(1);
  });

  describe('in a step that pauses for another call', () => {
    /** A step of slow_read (asks) and edit_note (covered): it pauses for slow_read alone, edit_note waits in it. */
    async function pausedWithCoveredCall() {
      await open({ tools: [EDIT_NOTE, { name: 'slow_read' }] });
      const { grant } = await remembered({ scope: 'AGENT', ttlSeconds: 600 });
      const both = await send('both n2');
      expect(both.turn.status).toBe('PAUSED');
      expect(both.turn.pendingElicitations.map((e: any) => e.toolCall.name)).toEqual(['slow_read']);
      return { grant, turnId: both.turn.id as string, elicitationId: both.turn.pendingElicitations[0].id as string };
    }

    it('the covered call runs after the other one is accepted, and is a use of the grant', async () => {
      const { turnId, elicitationId } = await pausedWithCoveredCall();
      expect(s.tools.count('edit_note')).toBe(1);
      const resumed = await answer({ elicitationId, action: 'ACCEPT' });
      expect(resumed.turn.status).toBe('COMPLETED');
      expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }, { id: 'n2' }]);
      const [listed] = await grants();
      expect(listed.uses.map((u: any) => u.turn.id)).toEqual([turnId]);
    });

    it('revoked while the step waits: when the step resumes, the covered call does not run (checked again as it starts)', async () => {
      const { grant, turnId, elicitationId } = await pausedWithCoveredCall();
      expect((await revoke(grant.id)).grant.state).toBe('REVOKED');
      const resumed = await answer({ elicitationId, action: 'ACCEPT' });
      expect(resumed.turn.status).toBe('COMPLETED');
      expect(s.tools.count('slow_read')).toBe(1);
      expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }]);
      const final = await turnOf(turnId);
      expect(toolTexts(final.messages)).toEqual(['slow_read ran with {}', toolText.grantLapsed('edit_note')]);
      const [listed] = await grants({ includeInactive: true });
      expect(listed.uses).toEqual([]);
    });
  });

  it('another user still gets asked, and sees none of the first user’s grants (revoke: NOT_FOUND)', async () => {
    await open({
      config: {
        ...testConfig(),
        auth: {
          tokens: [
            { token: TOKENS.alice!, user: 'alice', admin: false },
            { token: TOKENS.bob!, user: 'bob', admin: false },
          ],
        },
      },
    });
    user = 'alice';
    const { grant } = await remembered({ scope: 'AGENT', ttlSeconds: 600 });

    user = 'bob';
    const bobs = await send('edit n2');
    expect(bobs.turn.status).toBe('PAUSED');
    expect(await grants({ includeInactive: true })).toEqual([]);
    expect(await grants({ agentId: AGENT_ID, includeInactive: true })).toEqual([]);
    const refused = await revoke(grant.id);
    expect(refused).toEqual({
      grant: null,
      userErrors: [{ code: 'NOT_FOUND', message: expect.any(String), field: ['input', 'grantId'] }],
    });
    // Bob's own ACCEPT with remember is his, and does not show to Alice as hers.
    const bobsAnswer = await answer({
      elicitationId: bobs.turn.pendingElicitations[0].id,
      action: 'ACCEPT',
      remember: { scope: 'THREAD', ttlSeconds: 60 },
    });
    expect(bobsAnswer.elicitation.grant).toMatchObject({ state: 'ACTIVE', scope: 'THREAD' });

    user = 'alice';
    const [mine] = await grants({ includeInactive: true });
    expect(mine).toMatchObject({ id: grant.id, state: 'ACTIVE', revokedAt: null });
    expect(await grants({ includeInactive: true })).toHaveLength(1);
    expect((await send('edit n3')).turn.status).toBe('COMPLETED');
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }]);
  });
});

describe('remember is refused with a clear error, and nothing is recorded', () => {
  async function pending() {
    const asked = await send('edit n1');
    expect(asked.turn.status).toBe('PAUSED');
    return { ...asked, elicitationId: asked.turn.pendingElicitations[0].id as string };
  }

  async function expectNothingRecorded(elicitationId: string, turnId: string) {
    const { elicitation } = await gql(GRANT, { id: elicitationId });
    expect(elicitation).toEqual({ status: 'PENDING', grant: null });
    expect((await turnOf(turnId)).status).toBe('PAUSED');
    expect(await grants({ includeInactive: true })).toEqual([]);
    expect(s.tools.count('edit_note')).toBe(0);
  }

  it('for a tool set to ALWAYS: INVALID_INPUT on input.remember (a plain ACCEPT still goes through)', async () => {
    await open({ agent: { toolConfirmation: { [TOOL_ID]: 'ALWAYS' } } });
    const { elicitationId, turn } = await pending();
    const result = await answer({ elicitationId, action: 'ACCEPT', remember: { scope: 'AGENT', ttlSeconds: 60 } });
    expect(result).toMatchObject({ elicitation: null, turn: null });
    expect(result.userErrors).toEqual([
      { code: 'INVALID_INPUT', message: expect.stringContaining('ALWAYS'), field: ['input', 'remember'] },
    ]);
    await expectNothingRecorded(elicitationId, turn.id);
    expect((await answer({ elicitationId, action: 'ACCEPT' })).userErrors).toEqual([]);
    expect(s.tools.count('edit_note')).toBe(1);
  });

  it('for a tool set to ALWAYS after it asked: canRemember turns false and remember is refused (no inert grant)', async () => {
    await open();
    const { elicitationId, turn } = await pending();
    const canRemember = async () =>
      (await gql(`query($id: ID!) { elicitation(id: $id) { canRemember } }`, { id: elicitationId })).elicitation
        .canRemember;
    expect(await canRemember()).toBe(true);
    const updated = await gql(
      `mutation($input: UpdateAgentInput!) { updateAgent(input: $input) { userErrors { code } } }`,
      { input: { agentId: AGENT_ID, toolConfirmation: [{ toolId: TOOL_ID, mode: 'ALWAYS' }] } },
    );
    expect(updated.updateAgent.userErrors).toEqual([]);
    expect(await canRemember()).toBe(false);
    const result = await answer({ elicitationId, action: 'ACCEPT', remember: { scope: 'AGENT', ttlSeconds: 600 } });
    expect(result.userErrors).toEqual([
      { code: 'INVALID_INPUT', message: expect.stringContaining('ALWAYS'), field: ['input', 'remember'] },
    ]);
    await expectNothingRecorded(elicitationId, turn.id);
  });

  it.each([0, -1, THIRTY_DAYS + 1])('ttlSeconds %i: INVALID_INPUT on input.remember.ttlSeconds', async (ttlSeconds) => {
    await open();
    const { elicitationId, turn } = await pending();
    const result = await answer({ elicitationId, action: 'ACCEPT', remember: { scope: 'THREAD', ttlSeconds } });
    expect(result.userErrors).toEqual([
      { code: 'INVALID_INPUT', message: expect.any(String), field: ['input', 'remember', 'ttlSeconds'] },
    ]);
    await expectNothingRecorded(elicitationId, turn.id);
  });

  it('ttlSeconds of exactly 30 days is the longest accepted', async () => {
    await open();
    const { grant } = await remembered({ scope: 'THREAD', ttlSeconds: THIRTY_DAYS });
    expect(Date.parse(grant.expiresAt) - Date.parse(grant.createdAt)).toBe(THIRTY_DAYS * 1000);
  });

  it.each(['DECLINE', 'CANCEL'] as const)('with %s: INVALID_INPUT on input.remember', async (action) => {
    await open();
    const { elicitationId, turn } = await pending();
    const result = await answer({ elicitationId, action, remember: { scope: 'AGENT', ttlSeconds: 60 } });
    expect(result.userErrors).toEqual([
      { code: 'INVALID_INPUT', message: expect.stringContaining('ACCEPT'), field: ['input', 'remember'] },
    ]);
    await expectNothingRecorded(elicitationId, turn.id);
  });
});

describe('when a grant stops holding', () => {
  it('expiry: at expiresAt the call asks again; the grant reads EXPIRED and is listed only with includeInactive', async () => {
    const clock = manualClock();
    await open({ clock: clock.now });
    const { grant, threadId } = await remembered({ scope: 'THREAD', ttlSeconds: 60 });
    clock.advance(59);
    expect((await send('edit n2', threadId)).turn.status).toBe('COMPLETED');
    clock.advance(1); // exactly expiresAt
    const asked = await send('edit n3', threadId);
    expect(asked.turn.status).toBe('PAUSED');
    expect(s.tools.count('edit_note')).toBe(2);
    expect(await grants()).toEqual([]);
    const [listed] = await grants({ includeInactive: true });
    expect(listed).toMatchObject({ id: grant.id, state: 'EXPIRED', revokedAt: null });
    expect(listed.uses).toHaveLength(1);
  });

  it('revoke: later calls ask again; the grant reads REVOKED; revoking again keeps the first revokedAt', async () => {
    const clock = manualClock();
    await open({ clock: clock.now });
    const { grant } = await remembered({ scope: 'AGENT', ttlSeconds: 3600 });
    expect((await send('edit n2')).turn.status).toBe('COMPLETED');
    clock.advance(10);
    const revoked = await revoke(grant.id);
    expect(revoked.userErrors).toEqual([]);
    expect(revoked.grant).toMatchObject({ id: grant.id, state: 'REVOKED', revokedAt: clock.now().toISOString() });
    expect(revoked.grant.uses).toHaveLength(1);
    expect(revoked.grant.uses[0].startedAt <= revoked.grant.revokedAt).toBe(true);

    const asked = await send('edit n3');
    expect(asked.turn.status).toBe('PAUSED');
    expect(s.tools.count('edit_note')).toBe(2);

    clock.advance(10);
    const again = await revoke(grant.id);
    expect(again.userErrors).toEqual([]);
    expect(again.grant).toEqual(revoked.grant);
    expect(await grants()).toEqual([]);
    expect(await grants({ includeInactive: true })).toEqual([revoked.grant]);
    expect(await revoke('grt_unknown')).toMatchObject({ grant: null, userErrors: [{ code: 'NOT_FOUND' }] });
  });

  it('a changed tool definition (a new description, on the next server start): the call asks again, the grant reads TOOL_CHANGED', async () => {
    await open({ tools: [{ name: 'edit_note', description: 'Edits a note.' }] });
    const { grant } = await remembered({ scope: 'AGENT', ttlSeconds: 3600 });
    expect((await send('edit n2')).turn.status).toBe('COMPLETED');
    const database = s.h.database;
    await s.close();

    // The same tool, as a new version of its server describes it.
    await open({ database, tools: [{ name: 'edit_note', description: 'Edits a note, and mails it to everyone.' }] });
    const [before] = await grants();
    expect(before).toMatchObject({ id: grant.id, state: 'TOOL_CHANGED' });
    const asked = await send('edit n3');
    expect(asked.turn.status).toBe('PAUSED');
    expect(s.tools.count('edit_note')).toBe(0);
    const [after] = await grants({ includeInactive: true });
    expect(after.uses).toHaveLength(1);
  });

  it('a tool set to ALWAYS afterwards (updateAgent) asks every time, its grant notwithstanding', async () => {
    await open();
    await remembered({ scope: 'AGENT', ttlSeconds: 600 });
    expect((await send('edit n2')).turn.status).toBe('COMPLETED');
    const updated = await gql(
      `mutation($input: UpdateAgentInput!) { updateAgent(input: $input) { userErrors { code } } }`,
      { input: { agentId: AGENT_ID, toolConfirmation: [{ toolId: TOOL_ID, mode: 'ALWAYS' }] } },
    );
    expect(updated.updateAgent.userErrors).toEqual([]);
    expect((await send('edit n3')).turn.status).toBe('PAUSED');
    expect(s.tools.count('edit_note')).toBe(2);
  });

  it('a listener vetoing a call wins over the grant: denied, not run, not a use', async () => {
    const protect: ToolPreExecuteListener = {
      priority: 100,
      onToolPreExecute(event) {
        if (event.toolCall.arguments.id === 'protected') event.setVeto('protected notes are read-only');
      },
    };
    await open({ listeners: [protect] });
    const { threadId } = await remembered({ scope: 'THREAD', ttlSeconds: 600 });
    const vetoed = await send('edit protected', threadId);
    expect(vetoed.turn.status).toBe('COMPLETED');
    expect(toolTexts(vetoed.turn.messages)).toEqual([toolText.denied('edit_note', 'protected notes are read-only')]);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }]);
    const [listed] = await grants();
    expect(listed).toMatchObject({ state: 'ACTIVE', uses: [] });
  });

  it('a listener asking for confirmation for reasons of its own is not skipped by a grant, and cannot be remembered', async () => {
    // Asks (without grantable) for large notes: a policy of its own, which no remembered approval may stand in for.
    const bigNotes: ToolPreExecuteListener = {
      priority: 100,
      onToolPreExecute(event) {
        if (event.toolCall.arguments.id === 'big') {
          event.setElicitationRequest({
            message: 'Big notes need a look every time.',
            requestedSchema: { type: 'object', properties: {} },
            _meta: {},
          });
        }
      },
    };
    await open({ listeners: [bigNotes] });
    const { threadId } = await remembered({ scope: 'THREAD', ttlSeconds: 600 });
    const big = await send('edit big', threadId);
    expect(big.turn.status).toBe('PAUSED');
    const elicitationId = big.turn.pendingElicitations[0].id;
    const can = await gql(`query($id: ID!) { elicitation(id: $id) { canRemember } }`, { id: elicitationId });
    expect(can.elicitation.canRemember).toBe(false);
    const refused = await answer({ elicitationId, action: 'ACCEPT', remember: { scope: 'AGENT', ttlSeconds: 60 } });
    expect(refused.userErrors).toEqual([
      { code: 'INVALID_INPUT', message: expect.stringContaining('cannot be remembered'), field: ['input', 'remember'] },
    ]);
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }]);
    // The grant still covers the tool's ordinary calls.
    expect((await send('edit n2', threadId)).turn.status).toBe('COMPLETED');
  });
});

describe('a revoke racing a call the grant let through', () => {
  /** A read that runs unasked, first in the step, and waits as long as the test says. */
  function slowRead(wait: () => Promise<void>): CountingTool {
    return {
      name: 'slow_read',
      annotations: { readOnlyHint: true },
      run: async () => {
        await wait();
        return 'read';
      },
    };
  }

  /** The step's edit_note call, and how it ended. */
  async function editOutcome(turn: any) {
    const editCall = turn.messages
      .flatMap((m: any) => m.toolCalls ?? [])
      .find((c: any) => c.name === 'edit_note' && c.arguments.id === 'race');
    const answered = turn.messages.find((m: any) => m.role === 'TOOL' && m.toolCallId === editCall.id);
    return { callId: editCall.id as string, text: (answered?.text ?? null) as string | null };
  }

  it('revoked after the gate let it through, before it started: it does not run, and the model is told why', async () => {
    const entered = deferred();
    const release = deferred();
    await open({
      tools: [
        EDIT_NOTE,
        slowRead(async () => {
          entered.resolve();
          await release.promise;
        }),
      ],
    });
    const { grant } = await remembered({ scope: 'AGENT', ttlSeconds: 3600 });
    const { turn } = await send('both race', null, true);
    await entered.promise; // the gate has passed both calls; edit_note waits behind slow_read
    const revoked = await revoke(grant.id);
    expect(revoked.grant.state).toBe('REVOKED');
    release.resolve();

    const final = await settled(turn.id);
    expect(final.status).toBe('COMPLETED');
    expect(final.elicitations).toEqual([]); // it was never asked: the grant covered it at the gate
    const { text } = await editOutcome(final);
    expect(text).toBe(toolText.grantLapsed('edit_note'));
    expect(text).toContain('revoked or expired before it started');
    expect(s.tools.runs.get('edit_note')).toEqual([{ id: 'n1' }]);
    expect(toolTexts(final.messages)).toEqual(['read', toolText.grantLapsed('edit_note')]);
    const [listed] = await grants({ includeInactive: true });
    expect(listed.uses).toEqual([]);
    await s.expectConsistent(
      (await gql(`query($id: ID!) { turn(id: $id) { thread { id } } }`, { id: turn.id })).turn.thread.id,
    );
  });

  it('expired between the gate and the start: the same, it does not run', async () => {
    const clock = manualClock();
    const entered = deferred();
    const release = deferred();
    await open({
      clock: clock.now,
      tools: [
        EDIT_NOTE,
        slowRead(async () => {
          entered.resolve();
          await release.promise;
        }),
      ],
    });
    await remembered({ scope: 'AGENT', ttlSeconds: 60 });
    const { turn } = await send('both race', null, true);
    await entered.promise;
    clock.advance(60);
    release.resolve();
    const final = await settled(turn.id);
    expect((await editOutcome(final)).text).toBe(toolText.grantLapsed('edit_note'));
    expect(s.tools.count('edit_note')).toBe(1);
  });

  const ROUNDS = 12;
  it(`${ROUNDS} races of revoke and call: the call ran before the revoke, or did not run; never after it`, async () => {
    let round = 0;
    let entered = deferred();
    // slow_read holds the step for 0-3 ms after the gate; the revoke comes 0-2 ms after the gate (every third round
    // as the turn starts, before its gate).
    await open({
      tools: [
        EDIT_NOTE,
        slowRead(async () => {
          entered.resolve();
          await new Promise((r) => setTimeout(r, round % 4));
        }),
      ],
    });
    const outcomes: string[] = [];
    for (round = 0; round < ROUNDS; round++) {
      const { grant } = await remembered({ scope: 'AGENT', ttlSeconds: 3600 });
      const runsBefore = s.tools.count('edit_note');
      entered = deferred();
      const gate = round % 3 === 0 ? Promise.resolve() : entered.promise;
      const [{ turn }, revoked] = await Promise.all([
        send('both race', null, true),
        gate.then(() => new Promise((r) => setTimeout(r, round % 3))).then(() => revoke(grant.id)),
      ]);
      expect(revoked.grant.state).toBe('REVOKED');
      const revokedAt: string = revoked.grant.revokedAt;
      const final = await settled(turn.id);
      const [listed] = (await grants({ includeInactive: true })).filter((g: any) => g.id === grant.id);
      const { callId, text } = await editOutcome(final);
      const ran = s.tools.count('edit_note') - runsBefore;

      if (final.status === 'PAUSED') {
        // The revoke came before the gate: the call asked, as if there had never been a grant.
        outcomes.push('asked');
        expect(final.pendingElicitations.map((e: any) => e.toolCall.arguments)).toEqual([{ id: 'race' }]);
        expect(ran).toBe(0);
        expect(listed.uses).toEqual([]);
        // Closed before the next round (the thread is its own, the grant is gone either way).
        await answer({ elicitationId: final.pendingElicitations[0].id, action: 'CANCEL' });
      } else if (listed.uses.length > 0) {
        outcomes.push('ran');
        expect(ran).toBe(1);
        expect(listed.uses).toEqual([{ toolCallId: callId, startedAt: expect.any(String), turn: { id: turn.id } }]);
        // The audit never shows a call started after its grant was revoked (revokedAtFor, src/domain/grants.ts).
        expect(`${listed.uses[0].startedAt} <= ${revokedAt}: ${listed.uses[0].startedAt <= revokedAt}`).toMatch(
          /true$/,
        );
        expect(text).toBe('edit_note ran with {"id":"race"}');
      } else {
        outcomes.push('lapsed');
        expect(ran).toBe(0);
        expect(text).toBe(toolText.grantLapsed('edit_note'));
      }
    }
    expect(outcomes).toHaveLength(ROUNDS);
  });
});
