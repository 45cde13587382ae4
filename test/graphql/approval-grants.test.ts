// Remembered approvals (docs/approvals.md) over the real HTTP API, the API's side of them: a grant as the answer's
// payload, approvalGrants and its request show it, with its uses and its state; the refusals of a remember and of a
// revoke as userErrors; canRemember. And what needs the server's own clock or a restart: a grant expiring (also
// between the gate and the call's start) and a tool whose definition changed. What a grant lets run, what refuses a
// remember and what stops a grant holding are the use cases', asserted in test/app/grants.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUsersAuthenticator } from '../support/live.js';
import { dataOf, START_TURN } from '../support/harness.js';
import { bigNotes, notesModel, notesTools, NOTES_GATING } from '../support/notes.js';
import { AGENT_ID, deferred, manualClock, startScenario, toolTexts, type Scenario } from '../support/scenario.js';

const TOOL_ID = 't:edit_note';
const grantLapsed = (name: string) =>
  `Execution of ${name} did not run: the user's remembered approval of it was revoked or expired before it started. Call it again to ask the user.`;

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

const GRANT = `query Grant($id: ID!) { elicitation(id: $id) { status canRemember grant { ${GRANT_FIELDS} } } }`;

const REVOKE = `mutation Revoke($input: RevokeApprovalGrantInput!) {
  revokeApprovalGrant(input: $input) { grant { ${GRANT_FIELDS} } userErrors { code message field } }
}`;

const TURN = `query Turn($id: ID!) {
  turn(id: $id) { id status messages { role text toolCallId toolCalls { id name arguments } } elicitations { id } }
}`;

/** The API as one user (`Bearer <name>`, testUsersAuthenticator): each case its own, so grants are the case's own. */
function as(s: Scenario, user: string) {
  const gql = async (query: string, variables: Record<string, unknown> = {}) =>
    dataOf(await s.h.gql(query, variables, { authorization: `Bearer ${user}` }));
  const send = async (message: string, threadId: string | null = null, background = false) => {
    const { startTurn } = await gql(START_TURN, { input: { agentId: AGENT_ID, message, threadId, background } });
    expect(startTurn.userErrors).toEqual([]);
    return { turn: startTurn.turn, threadId: startTurn.thread.id as string };
  };
  const answer = async (input: Record<string, unknown>) => (await gql(ANSWER, { input })).resolveElicitation;
  return {
    gql,
    send,
    answer,
    turn: async (id: string) => (await gql(TURN, { id })).turn,
    grants: async (variables: Record<string, unknown> = {}) =>
      (await gql(GRANTS, variables)).approvalGrants.edges.map((e: any) => e.node),
    revoke: async (grantId: string) => (await gql(REVOKE, { input: { grantId } })).revokeApprovalGrant,
    /** A call of edit_note in a new thread (or `threadId`), paused, then ACCEPTed with `remember`. */
    async remembered(remember: { scope: 'THREAD' | 'AGENT'; ttlSeconds: number }, threadId: string | null = null) {
      const asked = await send('edit n1', threadId);
      expect(asked.turn.status).toBe('PAUSED');
      const result = await answer({ elicitationId: asked.turn.pendingElicitations[0].id, action: 'ACCEPT', remember });
      expect(result.userErrors).toEqual([]);
      return { grant: result.elicitation.grant, elicitation: result.elicitation, threadId: asked.threadId };
    },
  };
}

describe('one server on a clock the test moves', () => {
  const clock = manualClock();
  /** What slow_read waits for before it answers; a test sets it. */
  let slowRead: () => Promise<void> = async () => {};
  let s: Scenario;
  let users = 0;
  const someone = () => as(s, `user${++users}`);

  beforeAll(async () => {
    s = await startScenario({
      tools: notesTools(() => slowRead()),
      script: [notesModel],
      agent: NOTES_GATING,
      listeners: [bigNotes],
      authenticator: testUsersAuthenticator,
      clock: clock.now,
    });
  });
  afterAll(() => s?.close());

  it('a remembered ACCEPT: its grant in the payload, on its request and in approvalGrants, with the uses it let run', async () => {
    const alice = someone();
    const { grant, elicitation, threadId } = await alice.remembered({ scope: 'THREAD', ttlSeconds: 600 });
    expect(elicitation.response).toEqual({
      action: 'ACCEPT',
      arguments: null,
      remember: { scope: 'THREAD', ttlSeconds: 600 },
    });
    expect(grant).toEqual({
      id: expect.stringMatching(/^grt_/),
      scope: 'THREAD',
      toolId: TOOL_ID,
      state: 'ACTIVE',
      createdAt: elicitation.resolvedAt,
      expiresAt: new Date(Date.parse(elicitation.resolvedAt) + 600_000).toISOString(),
      revokedAt: null,
      agent: { id: AGENT_ID },
      thread: { id: threadId },
      elicitation: { id: elicitation.id },
      uses: [],
    });
    expect((await alice.gql(GRANT, { id: elicitation.id })).elicitation).toEqual({
      status: 'ACCEPTED',
      canRemember: true,
      grant,
    });

    const again = await alice.send('edit n2', threadId);
    expect(again.turn.status).toBe('COMPLETED');
    const callId = (await alice.turn(again.turn.id)).messages.find((m: any) => m.toolCalls.length).toolCalls[0].id;
    const page = (await alice.gql(GRANTS, { first: 1 })).approvalGrants;
    expect(page.pageInfo).toEqual({ hasNextPage: false, endCursor: page.edges[0].cursor });
    expect(page.edges[0].node).toEqual({
      ...grant,
      uses: [{ toolCallId: callId, startedAt: expect.any(String), turn: { id: again.turn.id } }],
    });
    expect(await alice.grants({ threadId })).toHaveLength(1);
    expect(await alice.grants({ agentId: AGENT_ID })).toHaveLength(1);
  });

  it('a refused remember is a userError on input.remember (or its ttlSeconds), in words; canRemember says so first', async () => {
    const alice = someone();
    const requestOf = async (message: string) => (await alice.send(message)).turn.pendingElicitations[0].id as string;
    const [plain, always, big] = [
      await requestOf('edit n1'),
      await requestOf('always n1'),
      await requestOf('edit big'),
    ];
    const canRemember = async (id: string) => (await alice.gql(GRANT, { id })).elicitation.canRemember;
    expect([await canRemember(plain), await canRemember(always), await canRemember(big)]).toEqual([true, false, false]);
    const notRemembered = (tool: string) =>
      `The approval of ${tool} cannot be remembered: it asks every time (ALWAYS, or a policy of its own), or was ` +
      'requested before approvals could be remembered.';
    const refusals: [string, Record<string, unknown>, { code: string; message: string; field: string[] }][] = [
      [
        always,
        { action: 'ACCEPT', remember: { scope: 'AGENT', ttlSeconds: 60 } },
        { code: 'INVALID_INPUT', message: notRemembered('always_note'), field: ['input', 'remember'] },
      ],
      [
        big,
        { action: 'ACCEPT', remember: { scope: 'AGENT', ttlSeconds: 60 } },
        { code: 'INVALID_INPUT', message: notRemembered('edit_note'), field: ['input', 'remember'] },
      ],
      [
        plain,
        { action: 'ACCEPT', remember: { scope: 'THREAD', ttlSeconds: 0 } },
        {
          code: 'INVALID_INPUT',
          message: 'ttlSeconds must be between 1 and 2592000.',
          field: ['input', 'remember', 'ttlSeconds'],
        },
      ],
      [
        plain,
        { action: 'DECLINE', remember: { scope: 'AGENT', ttlSeconds: 60 } },
        { code: 'INVALID_INPUT', message: 'remember can only be given with ACCEPT.', field: ['input', 'remember'] },
      ],
    ];
    for (const [elicitationId, input, userError] of refusals) {
      expect(await alice.answer({ elicitationId, ...input })).toEqual({
        elicitation: null,
        turn: null,
        userErrors: [userError],
      });
    }
    for (const id of [plain, always, big]) {
      expect((await alice.gql(GRANT, { id })).elicitation).toMatchObject({ status: 'PENDING', grant: null });
    }
    expect(await alice.grants({ includeInactive: true })).toEqual([]);
  });

  it('revoke: the payload reads REVOKED at its time, and again as first revoked; an unknown or another’s grant is NOT_FOUND', async () => {
    const [alice, bob] = [someone(), someone()];
    const { grant } = await alice.remembered({ scope: 'AGENT', ttlSeconds: 3600 });
    const notFound = {
      grant: null,
      userErrors: [{ code: 'NOT_FOUND', message: expect.any(String), field: ['input', 'grantId'] }],
    };
    expect(await bob.revoke(grant.id)).toEqual(notFound);
    expect(await alice.revoke('grt_unknown')).toEqual(notFound);
    clock.advance(10);
    const revoked = await alice.revoke(grant.id);
    expect(revoked).toEqual({
      grant: { ...grant, state: 'REVOKED', revokedAt: clock.now().toISOString() },
      userErrors: [],
    });
    clock.advance(10);
    expect(await alice.revoke(grant.id)).toEqual(revoked);
    expect(await alice.grants()).toEqual([]);
    expect(await alice.grants({ includeInactive: true })).toEqual([revoked.grant]);
  });

  it('expiry: at expiresAt the call asks again; the grant reads EXPIRED and is listed only with includeInactive', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const { grant, threadId } = await alice.remembered({ scope: 'THREAD', ttlSeconds: 60 });
    clock.advance(59);
    expect((await alice.send('edit n2', threadId)).turn.status).toBe('COMPLETED');
    clock.advance(1); // exactly expiresAt
    expect((await alice.send('edit n3', threadId)).turn.status).toBe('PAUSED');
    expect(s.tools.count('edit_note') - ran).toBe(2);
    expect(await alice.grants()).toEqual([]);
    const [listed] = await alice.grants({ includeInactive: true });
    expect(listed).toMatchObject({ id: grant.id, state: 'EXPIRED', revokedAt: null });
    expect(listed.uses).toHaveLength(1);
  });

  it('expired between the gate and the start: the call does not run, and the model is told why', async () => {
    const alice = someone();
    const ran = s.tools.count('edit_note');
    const entered = deferred();
    const release = deferred();
    slowRead = async () => {
      entered.resolve();
      await release.promise;
    };
    try {
      await alice.remembered({ scope: 'AGENT', ttlSeconds: 60 });
      const { turn } = await alice.send('both race', null, true);
      await entered.promise; // the gate has passed both calls; edit_note waits behind slow_read
      clock.advance(60);
      release.resolve();
      await expect.poll(async () => (await alice.turn(turn.id)).status).toBe('COMPLETED');
      const final = await alice.turn(turn.id);
      expect(final.elicitations).toEqual([]);
      expect(toolTexts(final.messages)).toEqual(['read', grantLapsed('edit_note')]);
      expect(s.tools.count('edit_note') - ran).toBe(1);
    } finally {
      slowRead = async () => {};
    }
  });
});

describe('a changed tool definition', () => {
  it('on the next server start: the call asks again, and the grant reads TOOL_CHANGED', async () => {
    const first = await startScenario({
      tools: [{ name: 'edit_note', description: 'Edits a note.' }],
      script: [notesModel],
      authenticator: testUsersAuthenticator,
    });
    let database: string;
    let grantId: string;
    try {
      database = first.h.database;
      const alice = as(first, 'alice');
      grantId = (await alice.remembered({ scope: 'AGENT', ttlSeconds: 3600 })).grant.id;
      expect((await alice.send('edit n2')).turn.status).toBe('COMPLETED');
    } finally {
      await first.close();
    }
    // The same tool, as a new version of its server describes it.
    const second = await startScenario({
      database,
      tools: [{ name: 'edit_note', description: 'Edits a note, and mails it to everyone.' }],
      script: [notesModel],
      authenticator: testUsersAuthenticator,
    });
    try {
      const alice = as(second, 'alice');
      expect(await alice.grants()).toEqual([expect.objectContaining({ id: grantId, state: 'TOOL_CHANGED' })]);
      expect((await alice.send('edit n3')).turn.status).toBe('PAUSED');
      expect(second.tools.count('edit_note')).toBe(0);
      const [after] = await alice.grants({ includeInactive: true });
      expect(after.uses).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
