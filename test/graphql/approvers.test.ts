// Approvers over the GraphQL API with real bearer tokens (docs/approvers.md): a requester and the members of roles
// answer under four eyes, M of N, an edit that restarts the count, an escalation; who is refused, and with which words;
// the races: N approvers at once run the tool exactly once after exactly the quorum, and the requester and an
// approver at once leave one outcome. On SQLite and PostgreSQL (TOOLGATE_TEST_BACKEND=postgres).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentConfig, ToolgateConfig } from '../../src/config/schema.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

const USERS = {
  alice: { roles: [] as string[] },
  bob: { roles: ['reviewer'] },
  carol: { roles: ['reviewer'] },
  dave: { roles: ['reviewer', 'ops'] },
  erin: { roles: ['oncall'] },
  frank: { roles: ['reviewer'] },
  gina: { roles: ['reviewer'] },
  mallory: { roles: ['ops'] },
  root: { roles: [] as string[], admin: true },
};
type User = keyof typeof USERS;
const tokenOf = (user: User) => `${user}-token-5f0c1d2e3a4b`;
const as = (user: User) => ({ authorization: `Bearer ${tokenOf(user)}` });
const auth: NonNullable<ToolgateConfig['auth']> = {
  tokens: Object.entries(USERS).map(([user, spec]) => ({
    token: tokenOf(user as User),
    user,
    admin: 'admin' in spec,
    roles: spec.roles,
  })),
};

/** The policies of the test agent's tools. */
const AGENT: Partial<AgentConfig> = {
  toolConfirmation: {
    // Four eyes, two reviewers.
    't:deploy': { approvers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED' } },
    // The requester and one reviewer, or two reviewers.
    't:scale': { approvers: { roles: ['reviewer'], required: 2, requester: 'ALSO' } },
    // Four eyes, one reviewer; oncall after a minute.
    't:restart': {
      approvers: {
        roles: ['reviewer'],
        required: 1,
        requester: 'EXCLUDED',
        escalate: { afterSeconds: 60, roles: ['oncall'] },
      },
    },
  },
};

const CARD = `id status message toolCall { toolId arguments } requestedBy agent { id } expiresAt
  approval { roles required requester escalation { roles at } }
  answers { approver action arguments answeredAt counts }`;

const START = `mutation($message: String!) {
  startTurn(input: { agentId: "${AGENT_ID}", message: $message }) {
    turn { id status pendingElicitations { ${CARD} } }
    userErrors { code message }
  }
}`;

const RESOLVE = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    elicitation { ${CARD} resolvedBy response { action arguments } }
    turn { id status }
    userErrors { code message field }
  }
}`;

const ELICITATION = `query($id: ID!) { elicitation(id: $id) { ${CARD} resolvedBy turn { id status } } }`;

let h: Harness;
let tools: CountingToolSource;
let offsetMs = 0;

beforeAll(async () => {
  tools = new CountingToolSource(SOURCE_ID, [
    { name: 'deploy' },
    { name: 'scale' },
    { name: 'restart' },
    { name: 'wipe' },
  ]);
  h = await startHarness({
    config: { ...testConfig(AGENT), auth },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed({ scale: { replicas: 2 } })]) },
    toolSources: [tools],
    // The test moves time forward (an escalation) without waiting.
    clock: () => new Date(Date.now() + offsetMs),
  });
});
afterAll(() => h?.close());

async function gql(user: User, query: string, variables: Record<string, unknown> = {}) {
  return h.gql(query, variables, as(user));
}

/** Alice's new turn calling `tool`: its one pending request. */
async function requestOf(tool: string, user: User = 'alice') {
  const started = dataOf(await gql(user, START, { message: `t_${tool}` })).startTurn;
  expect(started.userErrors).toEqual([]);
  expect(started.turn.status).toBe('PAUSED');
  return { turnId: started.turn.id as string, request: started.turn.pendingElicitations[0] };
}

async function resolve(user: User, elicitationId: string, action: string, more: Record<string, unknown> = {}) {
  return dataOf(await gql(user, RESOLVE, { input: { elicitationId, action, ...more } })).resolveElicitation;
}

async function turnStatus(turnId: string): Promise<string> {
  return dataOf(await gql('alice', `query($id: ID!) { turn(id: $id) { status } }`, { id: turnId })).turn.status;
}

describe('four eyes, two reviewers', () => {
  it('the card shows the policy; the requester is refused, two reviewers resolve it, the tool runs once', async () => {
    const before = tools.count('deploy');
    const { turnId, request } = await requestOf('deploy');
    expect(request).toMatchObject({
      status: 'PENDING',
      requestedBy: 'alice',
      approval: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED', escalation: null },
      answers: [],
    });

    const byAlice = await resolve('alice', request.id, 'ACCEPT');
    expect(byAlice).toEqual({
      elicitation: null,
      turn: null,
      userErrors: [
        {
          code: 'FORBIDDEN',
          message:
            'This request needs the approval of someone other than you (four eyes): you may cancel it, not accept ' +
            'or decline it.',
          field: ['input', 'action'],
        },
      ],
    });

    const byBob = await resolve('bob', request.id, 'ACCEPT');
    expect(byBob.userErrors).toEqual([]);
    expect(byBob.turn).toBeNull();
    expect(byBob.elicitation).toMatchObject({ status: 'PENDING', resolvedBy: null, response: null });
    expect(byBob.elicitation.answers).toEqual([
      { approver: 'bob', action: 'ACCEPT', arguments: null, answeredAt: expect.any(String), counts: true },
    ]);
    expect(tools.count('deploy')).toBe(before);
    expect(await turnStatus(turnId)).toBe('PAUSED');

    // The same answer again is the recorded one; another answer is refused while it waits for others.
    expect((await resolve('bob', request.id, 'ACCEPT')).elicitation.status).toBe('PENDING');
    expect((await resolve('bob', request.id, 'DECLINE')).userErrors).toEqual([
      {
        code: 'ALREADY_RESOLVED',
        message: 'You already answered this request; your answer stands while it waits for other approvers.',
        field: ['input', 'elicitationId'],
      },
    ]);

    const byCarol = await resolve('carol', request.id, 'ACCEPT');
    expect(byCarol.userErrors).toEqual([]);
    expect(byCarol.elicitation).toMatchObject({
      status: 'ACCEPTED',
      resolvedBy: 'carol',
      response: { action: 'ACCEPT' },
    });
    expect(tools.count('deploy')).toBe(before + 1);
    expect(await turnStatus(turnId)).toBe('COMPLETED');

    // The requester's audit: who answered, in order.
    const seen = dataOf(await gql('alice', ELICITATION, { id: request.id })).elicitation;
    expect(seen.answers.map((a: { approver: string }) => a.approver)).toEqual(['bob', 'carol']);
    expect(seen.turn).toEqual({ id: turnId, status: 'COMPLETED' });
    // A latecomer finds it decided.
    expect((await resolve('dave', request.id, 'ACCEPT')).userErrors[0]).toMatchObject({
      code: 'ALREADY_RESOLVED',
      message: 'This elicitation was already answered (ACCEPTED).',
    });
  });

  it("an approver sees the request, not the requester's turn", async () => {
    const { request } = await requestOf('deploy');
    const response = await gql(
      'bob',
      `mutation($input: ResolveElicitationInput!) {
      resolveElicitation(input: $input) { elicitation { id turn { id } } userErrors { code } }
    }`,
      { input: { elicitationId: request.id, action: 'ACCEPT' } },
    );
    expect(response.errors).toEqual([
      expect.objectContaining({
        message:
          'Only the user who made this request sees its turn; as an approver you see the request itself (toolCall, message, answers).',
        extensions: expect.objectContaining({ code: 'FORBIDDEN' }),
      }),
    ]);
    await resolve('alice', request.id, 'CANCEL');
  });

  it('refuses whoever is not an approver, and only the requester or an admin cancels', async () => {
    const { turnId, request } = await requestOf('deploy');
    expect((await resolve('mallory', request.id, 'ACCEPT')).userErrors).toEqual([
      { code: 'NOT_FOUND', message: 'No elicitation with this id.', field: ['input', 'elicitationId'] },
    ]);
    expect((await resolve('bob', request.id, 'CANCEL')).userErrors).toEqual([
      {
        code: 'FORBIDDEN',
        message:
          'Only the user who made this request, or an administrator, may cancel it; accept or decline it instead.',
        field: ['input', 'action'],
      },
    ]);
    expect((await resolve('root', request.id, 'ACCEPT')).userErrors).toEqual([
      {
        code: 'FORBIDDEN',
        message:
          'You hold none of the roles that approve this request: as an administrator you may cancel it, not accept ' +
          'or decline it.',
        field: ['input', 'action'],
      },
    ]);
    const cancelled = await resolve('root', request.id, 'CANCEL');
    expect(cancelled.elicitation).toMatchObject({ status: 'CANCELLED', resolvedBy: 'root' });
    expect(await turnStatus(turnId)).toBe('CANCELLED');
  });

  it('a DECLINE of one reviewer decides at once; its instructions reach the model', async () => {
    const before = tools.count('deploy');
    const { turnId, request } = await requestOf('deploy');
    await resolve('bob', request.id, 'ACCEPT');
    const declined = await resolve('carol', request.id, 'DECLINE', { content: { instructions: 'not on Fridays' } });
    expect(declined.elicitation).toMatchObject({ status: 'DECLINED', resolvedBy: 'carol' });
    expect(await turnStatus(turnId)).toBe('COMPLETED');
    expect(tools.count('deploy')).toBe(before);
    const thread = dataOf(
      await gql('alice', `query($id: ID!) { turn(id: $id) { messages { role text } } }`, { id: turnId }),
    ).turn;
    expect(
      thread.messages.filter((m: { role: string }) => m.role === 'TOOL').map((m: { text: string }) => m.text),
    ).toEqual(['User declined execution of deploy: not on Fridays']);
  });
});

describe('the requester counts as one (ALSO), and an edit restarts the count', () => {
  it("the requester's ACCEPT and a reviewer's edit: only the edit counts; a second ACCEPT of it runs it", async () => {
    const before = tools.count('scale');
    const { turnId, request } = await requestOf('scale');
    expect(request.toolCall.arguments).toEqual({ replicas: 2 });
    expect((await resolve('alice', request.id, 'ACCEPT')).elicitation.status).toBe('PENDING');
    const edited = await resolve('bob', request.id, 'ACCEPT', { arguments: { replicas: 5 } });
    expect(edited.elicitation.status).toBe('PENDING');
    expect(edited.elicitation.answers).toEqual([
      expect.objectContaining({ approver: 'alice', arguments: null, counts: false }),
      expect.objectContaining({ approver: 'bob', arguments: { replicas: 5 }, counts: true }),
    ]);
    // Alice's approval was of the model's arguments: she approves the edited ones anew, and that completes it.
    const done = await resolve('alice', request.id, 'ACCEPT', { arguments: { replicas: 5 } });
    expect(done.elicitation).toMatchObject({
      status: 'ACCEPTED',
      resolvedBy: 'alice',
      response: { action: 'ACCEPT', arguments: { replicas: 5 } },
    });
    expect(done.turn.status).toBe('COMPLETED');
    expect(tools.count('scale')).toBe(before + 1);
    expect(tools.runs.get('scale')!.at(-1)).toEqual({ replicas: 5 });
    expect(await turnStatus(turnId)).toBe('COMPLETED');
  });
});

describe('escalation', () => {
  it('oncall may answer only once the escalation time has come', async () => {
    const { request } = await requestOf('restart');
    expect(request.approval.escalation).toEqual({ roles: ['oncall'], at: expect.any(String) });
    expect((await resolve('erin', request.id, 'ACCEPT')).userErrors).toEqual([
      {
        code: 'FORBIDDEN',
        message: `This request is offered to your role only from ${request.approval.escalation.at}, if nobody answered it by then.`,
        field: ['input', 'action'],
      },
    ]);
    offsetMs += 61_000;
    const byErin = await resolve('erin', request.id, 'ACCEPT');
    expect(byErin.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'erin' });
  });
});

describe('without a policy', () => {
  it("the request stays the requester's alone, and its answers show the requester", async () => {
    const { request } = await requestOf('wipe');
    expect(request.approval).toBeNull();
    expect((await resolve('bob', request.id, 'ACCEPT')).userErrors[0].code).toBe('NOT_FOUND');
    const done = await resolve('alice', request.id, 'ACCEPT');
    expect(done.elicitation.answers).toEqual([
      { approver: 'alice', action: 'ACCEPT', arguments: null, answeredAt: expect.any(String), counts: true },
    ]);
  });
});

describe('races', () => {
  it('five reviewers accept at once under two required: the tool runs exactly once, after exactly two', async () => {
    const before = tools.count('deploy');
    const { turnId, request } = await requestOf('deploy');
    const reviewers: User[] = ['bob', 'carol', 'dave', 'frank', 'gina'];
    const results = await Promise.all(reviewers.map((user) => resolve(user, request.id, 'ACCEPT')));
    const accepted = results.filter((r) => r.elicitation?.status === 'ACCEPTED');
    const counted = results.filter((r) => r.elicitation?.status === 'PENDING');
    const refused = results.filter((r) => r.userErrors.length > 0);
    expect([accepted.length, counted.length, refused.length]).toEqual([1, 1, 3]);
    for (const r of refused) expect(r.userErrors[0].code).toBe('ALREADY_RESOLVED');
    expect(tools.count('deploy')).toBe(before + 1);
    const seen = dataOf(await gql('alice', ELICITATION, { id: request.id })).elicitation;
    expect(seen.answers).toHaveLength(2);
    expect(seen.resolvedBy).toBe(seen.answers[1].approver);
    expect(seen.resolvedBy).toBe(accepted[0].elicitation.resolvedBy);
    expect(await turnStatus(turnId)).toBe('COMPLETED');
  });

  it('under four eyes, the requester and a reviewer accepting at once: the reviewer decides, the requester is refused', async () => {
    const before = tools.count('restart');
    const { request } = await requestOf('restart');
    const [byAlice, byBob] = await Promise.all([
      resolve('alice', request.id, 'ACCEPT'),
      resolve('bob', request.id, 'ACCEPT'),
    ]);
    expect(byAlice.userErrors[0].code).toBe('FORBIDDEN');
    expect(byBob.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'bob' });
    expect(tools.count('restart')).toBe(before + 1);
  });

  it("the requester's CANCEL and a reviewer's ACCEPT at once: exactly one of them stands", async () => {
    for (let round = 0; round < 3; round++) {
      const before = tools.count('restart');
      const { turnId, request } = await requestOf('restart');
      const [cancel, accept] = await Promise.all([
        resolve('alice', request.id, 'CANCEL'),
        resolve('bob', request.id, 'ACCEPT'),
      ]);
      const status = await turnStatus(turnId);
      if (cancel.userErrors.length === 0) {
        expect(accept.userErrors[0].code).toBe('ALREADY_RESOLVED');
        expect(status).toBe('CANCELLED');
        expect(tools.count('restart')).toBe(before);
      } else {
        expect(cancel.userErrors[0].code).toBe('ALREADY_RESOLVED');
        expect(accept.elicitation.status).toBe('ACCEPTED');
        expect(status).toBe('COMPLETED');
        expect(tools.count('restart')).toBe(before + 1);
      }
    }
  });
});

describe('visibility: what an approver may answer', () => {
  const TO_ANSWER = `{ pendingElicitations(scope: TO_ANSWER) { totalCount edges { node { ${CARD} } } } }`;
  const toAnswer = async (user: User): Promise<string[]> =>
    dataOf(await gql(user, TO_ANSWER)).pendingElicitations.edges.map((e: { node: { id: string } }) => e.node.id);

  it('pendingElicitations(scope: TO_ANSWER) lists the requests of others offered to the viewer, until they answered', async () => {
    const { request: deploy } = await requestOf('deploy');
    const { request: restart } = await requestOf('restart');
    const { request: wipe } = await requestOf('wipe');
    expect(await toAnswer('bob')).toEqual(expect.arrayContaining([deploy.id, restart.id]));
    expect(await toAnswer('bob')).not.toContain(wipe.id);
    // The requester's own are hers (MINE), not to answer; no role, nothing to answer.
    expect(await toAnswer('alice')).toEqual([]);
    expect(await toAnswer('mallory')).toEqual([]);
    // Oncall sees the restart only once it escalated.
    expect(await toAnswer('erin')).not.toContain(restart.id);
    const card = dataOf(await gql('bob', TO_ANSWER)).pendingElicitations.edges.find(
      (e: { node: { id: string } }) => e.node.id === deploy.id,
    ).node;
    expect(card).toMatchObject({
      requestedBy: 'alice',
      agent: { id: AGENT_ID },
      toolCall: { toolId: 't:deploy' },
      approval: { required: 2 },
    });

    // Bob answers: gone from his list, still on carol's; the approver reads the card by id, never the turn.
    await resolve('bob', deploy.id, 'ACCEPT');
    expect(await toAnswer('bob')).not.toContain(deploy.id);
    expect(await toAnswer('carol')).toContain(deploy.id);
    const byId = dataOf(await gql('carol', `query($id: ID!) { elicitation(id: $id) { ${CARD} } }`, { id: deploy.id }));
    expect(byId.elicitation.answers.map((a: { approver: string }) => a.approver)).toEqual(['bob']);
    expect(dataOf(await gql('mallory', `query($id: ID!) { elicitation(id: $id) { id } }`, { id: deploy.id }))).toEqual({
      elicitation: null,
    });
    const turnOfIt = await gql('carol', `query($id: ID!) { elicitation(id: $id) { turn { id } } }`, { id: deploy.id });
    expect(turnOfIt.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // Decided: offered to no one any more.
    await resolve('carol', deploy.id, 'ACCEPT');
    await resolve('alice', restart.id, 'CANCEL');
    for (const user of ['bob', 'carol', 'dave'] as User[]) {
      expect(await toAnswer(user)).not.toContain(deploy.id);
      expect(await toAnswer(user)).not.toContain(restart.id);
    }
    await resolve('alice', wipe.id, 'CANCEL');
  });
});

describe('remembered approvals under a policy', () => {
  const REMEMBER = { scope: 'AGENT', ttlSeconds: 3600 };

  it("a quorum that all asked to remember lets the requester's later calls run; one the requester gave alone never skips reviewers", async () => {
    // A server of its own: its config changes below, on the same database.
    const source = new CountingToolSource(SOURCE_ID, [{ name: 'deploy' }, { name: 'scale' }, { name: 'restart' }]);
    const serve = (agent: Partial<AgentConfig>, database?: string) =>
      startHarness({
        config: { ...testConfig(agent), auth },
        models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
        toolSources: [source],
        ...(database && { database }),
      });
    const ask = async (server: Harness, tool: string) =>
      dataOf(await server.gql(START, { message: `t_${tool}` }, as('alice'))).startTurn.turn;
    const answer = async (server: Harness, user: User, id: string, input: Record<string, unknown> = {}) =>
      dataOf(await server.gql(RESOLVE, { input: { elicitationId: id, action: 'ACCEPT', ...input } }, as(user)))
        .resolveElicitation;

    // Before any policy: alice remembers her own approval of deploy for the whole agent.
    const before = await serve({});
    let database: string;
    try {
      database = before.database;
      const first = await ask(before, 'deploy');
      expect((await answer(before, 'alice', first.pendingElicitations[0].id, { remember: REMEMBER })).turn.status).toBe(
        'COMPLETED',
      );
      expect((await ask(before, 'deploy')).status).toBe('COMPLETED'); // her grant lets it run unasked
    } finally {
      await before.close();
    }

    const after = await serve(AGENT, database);
    try {
      // Under four eyes her grant does not stand in: the reviewers are asked.
      const asked = await ask(after, 'deploy');
      expect(asked.status).toBe('PAUSED');
      const id = asked.pendingElicitations[0].id;
      // Both reviewers of the quorum ask to remember: a grant for alice, bound to this policy, with the shorter ttl.
      await answer(after, 'bob', id, { remember: REMEMBER });
      const done = await answer(after, 'carol', id, { remember: { scope: 'AGENT', ttlSeconds: 600 } });
      expect(done.elicitation.status).toBe('ACCEPTED');
      const grants = dataOf(
        await after.gql('{ approvalGrants { edges { node { scope toolId elicitation { id } } } } }', {}, as('alice')),
      ).approvalGrants.edges.map((e: { node: unknown }) => e.node);
      expect(grants).toContainEqual({ scope: 'AGENT', toolId: 't:deploy', elicitation: { id } });
      // Her next call of deploy runs under the quorum's grant.
      expect((await ask(after, 'deploy')).status).toBe('COMPLETED');
      // Scale under its ALSO policy: alice alone cannot remember past the quorum either.
      const scale = await ask(after, 'scale');
      expect(
        (await answer(after, 'alice', scale.pendingElicitations[0].id, { remember: REMEMBER })).elicitation.status,
      ).toBe('PENDING');
      expect(source.count('deploy')).toBe(4);
    } finally {
      await after.close();
    }
  });
});
