// Approvers over the GraphQL API with real bearer tokens (docs/approvers.md), the API's side of it: the card and the
// payloads of a counted answer and of the decision, each refusal as a userError (its code, its words, its path), an
// approver's view of the request without its turn, and pendingElicitations(scope: TO_ANSWER). Who may give which
// answer, the quorum's course and its races are the use case's, asserted in test/app/approvers.test.ts. On SQLite
// and PostgreSQL (TOOLGATE_TEST_BACKEND=postgres).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { APPROVER_AGENT, APPROVER_TOOLS, approverAuth, as, type ApproverUser as User } from '../support/approvers.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

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

beforeAll(async () => {
  h = await startHarness({
    config: { ...testConfig(APPROVER_AGENT), auth: approverAuth },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
    toolSources: [new CountingToolSource(SOURCE_ID, APPROVER_TOOLS)],
  });
});
afterAll(() => h?.close());

async function gql(user: User, query: string, variables: Record<string, unknown> = {}) {
  return h.gql(query, variables, as(user));
}

/** Alice's new turn calling `tool`: its one pending request. */
async function requestOf(tool: string) {
  const started = dataOf(await gql('alice', START, { message: `t_${tool}` })).startTurn;
  expect(started.userErrors).toEqual([]);
  expect(started.turn.status).toBe('PAUSED');
  return { turnId: started.turn.id as string, request: started.turn.pendingElicitations[0] };
}

async function resolve(user: User, elicitationId: string, action: string, more: Record<string, unknown> = {}) {
  return dataOf(await gql(user, RESOLVE, { input: { elicitationId, action, ...more } })).resolveElicitation;
}

describe('four eyes, two reviewers, as the API shows it', () => {
  it("the card shows the policy; a counted answer is the approver's payload; the decision is the last one's", async () => {
    const { turnId, request } = await requestOf('deploy');
    expect(request).toMatchObject({
      status: 'PENDING',
      requestedBy: 'alice',
      toolCall: { toolId: 't:deploy', arguments: {} },
      agent: { id: AGENT_ID },
      approval: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED', escalation: null },
      answers: [],
    });

    const byBob = await resolve('bob', request.id, 'ACCEPT');
    expect(byBob.userErrors).toEqual([]);
    expect(byBob.turn).toBeNull();
    expect(byBob.elicitation).toMatchObject({ status: 'PENDING', resolvedBy: null, response: null });
    expect(byBob.elicitation.answers).toEqual([
      { approver: 'bob', action: 'ACCEPT', arguments: null, answeredAt: expect.any(String), counts: true },
    ]);

    const byCarol = await resolve('carol', request.id, 'ACCEPT');
    expect(byCarol.userErrors).toEqual([]);
    expect(byCarol.turn).toBeNull();
    expect(byCarol.elicitation).toMatchObject({
      status: 'ACCEPTED',
      resolvedBy: 'carol',
      response: { action: 'ACCEPT', arguments: null },
    });

    // The requester's audit: who answered, in order, beside her turn.
    const seen = dataOf(await gql('alice', ELICITATION, { id: request.id })).elicitation;
    expect(seen.answers.map((a: { approver: string }) => a.approver)).toEqual(['bob', 'carol']);
    expect(seen.turn).toEqual({ id: turnId, status: 'COMPLETED' });
  });

  it('each refusal is a userError with its code, its words and its path, and no payload', async () => {
    const { request } = await requestOf('deploy');
    const { request: restart } = await requestOf('restart');
    const refusals: [User, string, string, { code: string; message: string; field: string[] }][] = [
      [
        'alice',
        request.id,
        'ACCEPT',
        {
          code: 'FORBIDDEN',
          message:
            'This request needs the approval of someone other than you (four eyes): you may cancel it, not accept ' +
            'or decline it.',
          field: ['input', 'action'],
        },
      ],
      [
        'bob',
        request.id,
        'CANCEL',
        {
          code: 'FORBIDDEN',
          message:
            'Only the user who made this request, or an administrator, may cancel it; accept or decline it instead.',
          field: ['input', 'action'],
        },
      ],
      [
        'root',
        request.id,
        'ACCEPT',
        {
          code: 'FORBIDDEN',
          message:
            'You hold none of the roles that approve this request: as an administrator you may cancel it, not ' +
            'accept or decline it.',
          field: ['input', 'action'],
        },
      ],
      [
        'erin',
        restart.id,
        'ACCEPT',
        {
          code: 'FORBIDDEN',
          message: `This request is offered to your role only from ${restart.approval.escalation.at}, if nobody answered it by then.`,
          field: ['input', 'action'],
        },
      ],
      [
        'mallory',
        request.id,
        'ACCEPT',
        { code: 'NOT_FOUND', message: 'No elicitation with this id.', field: ['input', 'elicitationId'] },
      ],
    ];
    for (const [user, id, action, userError] of refusals) {
      expect([user, await resolve(user, id, action)]).toEqual([
        user,
        { elicitation: null, turn: null, userErrors: [userError] },
      ]);
    }

    // Another answer of an approver who answered, while the request waits for others; then once it is decided.
    await resolve('bob', request.id, 'ACCEPT');
    expect((await resolve('bob', request.id, 'DECLINE')).userErrors).toEqual([
      {
        code: 'ALREADY_RESOLVED',
        message: 'You already answered this request; your answer stands while it waits for other approvers.',
        field: ['input', 'elicitationId'],
      },
    ]);
    await resolve('carol', request.id, 'ACCEPT');
    expect((await resolve('dave', request.id, 'ACCEPT')).userErrors).toEqual([
      {
        code: 'ALREADY_RESOLVED',
        message: 'This elicitation was already answered (ACCEPTED).',
        field: ['input', 'elicitationId'],
      },
    ]);
    await resolve('alice', restart.id, 'CANCEL');
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
});

describe('what an approver may answer', () => {
  const TO_ANSWER = `{ pendingElicitations(scope: TO_ANSWER) { totalCount edges { node { ${CARD} } } } }`;
  const toAnswer = async (user: User) =>
    dataOf(await gql(user, TO_ANSWER)).pendingElicitations.edges.map((e: { node: { id: string } }) => e.node);

  it('pendingElicitations(scope: TO_ANSWER) lists the cards offered to the viewer; elicitation(id) reads one, never its turn', async () => {
    const { request: deploy } = await requestOf('deploy');
    const card = (await toAnswer('bob')).find((node: { id: string }) => node.id === deploy.id);
    expect(card).toMatchObject({
      requestedBy: 'alice',
      agent: { id: AGENT_ID },
      toolCall: { toolId: 't:deploy' },
      approval: { required: 2 },
    });
    expect(await toAnswer('mallory')).toEqual([]);

    await resolve('bob', deploy.id, 'ACCEPT');
    const byId = dataOf(await gql('carol', `query($id: ID!) { elicitation(id: $id) { ${CARD} } }`, { id: deploy.id }));
    expect(byId.elicitation.answers.map((a: { approver: string }) => a.approver)).toEqual(['bob']);
    expect(dataOf(await gql('mallory', `query($id: ID!) { elicitation(id: $id) { id } }`, { id: deploy.id }))).toEqual({
      elicitation: null,
    });
    const turnOfIt = await gql('carol', `query($id: ID!) { elicitation(id: $id) { turn { id } } }`, { id: deploy.id });
    expect(turnOfIt.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    await resolve('alice', deploy.id, 'CANCEL');
  });
});
