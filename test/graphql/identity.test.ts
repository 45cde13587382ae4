// Approvers known through a real OpenID provider (test/support/oidc-provider.ts): the record keeps who answered as
// they were then (issuer, subject, display name, roles), and the quorum rule of docs/approvers.md: roles are read
// from the token of each request, so a reviewer removed from the group at the provider is refused on a request still
// pending, while an approval already counted stays counted, after a restart too. On SQLite and PostgreSQL.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { oidcIssuerConfig } from '../../src/config/schema.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { APPROVER_AGENT, APPROVER_TOOLS } from '../support/approvers.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

/** The resource the tokens are for: fixed, so that a server started again on the same database takes them too. */
const AUDIENCE = 'http://127.0.0.1:7';

const ANSWERS = 'answers { approver action counts approverName approverIssuer approverSubject approverRoles }';

const START = `mutation($message: String!) {
  startTurn(input: { agentId: "${AGENT_ID}", message: $message }) {
    turn { id status pendingElicitations { id } }
    userErrors { code message }
  }
}`;

const RESOLVE = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    elicitation { id status ${ANSWERS} }
    userErrors { code message }
  }
}`;

const ELICITATION = `query($id: ID!) { elicitation(id: $id) { id status ${ANSWERS} } }`;

let provider: OidcProvider;
let tools: CountingToolSource;
let h: Harness;
const started: Harness[] = [];

const config = () => ({
  ...testConfig(APPROVER_AGENT),
  auth: { oidc: oidcIssuerConfig.parse({ issuer: provider.issuer, audience: AUDIENCE }) },
});

async function start(database?: string): Promise<Harness> {
  const harness = await startHarness({
    config: config(),
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
    toolSources: [tools],
    ...(database ? { database } : {}),
  });
  started.push(harness);
  return harness;
}

beforeAll(async () => {
  provider = await startOidcProvider({
    users: {
      alice: { name: 'Alice Requester', groups: [] },
      bob: { name: 'Bob Reviewer', email: 'bob@example.test', groups: ['reviewer'] },
      carol: { email: 'carol@example.test', groups: ['reviewer'] },
      dave: { name: 'Dave Reviewer', groups: ['reviewer', 'ops'] },
    },
  });
  tools = new CountingToolSource(SOURCE_ID, APPROVER_TOOLS);
  h = await start();
});
afterAll(async () => {
  for (const harness of started) await harness.close();
  await provider.close();
});

const restoreGroups = { bob: ['reviewer'], carol: ['reviewer'], dave: ['reviewer', 'ops'] };
afterEach(() => {
  for (const [user, groups] of Object.entries(restoreGroups)) provider.users[user]!.groups = [...groups];
});

/** A GraphQL request with a token the provider mints now: the user's groups as they are at this moment. */
async function gql(server: Harness, user: string, query: string, variables: Record<string, unknown> = {}) {
  const token = await provider.accessToken(user, { resource: AUDIENCE });
  return server.gql(query, variables, { authorization: `Bearer ${token}` });
}

async function requestOf(tool: string): Promise<string> {
  const turn = dataOf(await gql(h, 'alice', START, { message: `t_${tool}` })).startTurn;
  expect(turn.userErrors).toEqual([]);
  return turn.turn.pendingElicitations[0].id as string;
}

const resolve = async (server: Harness, user: string, elicitationId: string, action = 'ACCEPT') =>
  dataOf(await gql(server, user, RESOLVE, { input: { elicitationId, action } })).resolveElicitation;

describe('who answered, as they were then', () => {
  it('keeps the issuer, subject, display name (else email) and roles of each approver', async () => {
    const id = await requestOf('deploy');
    expect((await resolve(h, 'bob', id)).userErrors).toEqual([]);
    const decided = await resolve(h, 'carol', id);
    expect(decided.elicitation).toEqual({
      id,
      status: 'ACCEPTED',
      answers: [
        {
          approver: 'bob',
          action: 'ACCEPT',
          counts: true,
          approverName: 'Bob Reviewer',
          approverIssuer: provider.issuer,
          approverSubject: 'bob',
          approverRoles: ['reviewer'],
        },
        {
          approver: 'carol',
          action: 'ACCEPT',
          counts: true,
          approverName: 'carol@example.test',
          approverIssuer: provider.issuer,
          approverSubject: 'carol',
          approverRoles: ['reviewer'],
        },
      ],
    });
  });

  it('keeps the requester’s identity too when they answer their own request', async () => {
    const id = await requestOf('wipe');
    expect((await resolve(h, 'alice', id)).elicitation.answers).toEqual([
      {
        approver: 'alice',
        action: 'ACCEPT',
        counts: true,
        approverName: 'Alice Requester',
        approverIssuer: provider.issuer,
        approverSubject: 'alice',
        approverRoles: [],
      },
    ]);
  });
});

describe('the quorum when an approver loses the role', () => {
  it('a reviewer removed from the group at the provider is refused on a request still pending', async () => {
    const id = await requestOf('deploy');
    provider.users.carol!.groups = [];
    expect((await resolve(h, 'carol', id)).userErrors).toEqual([
      { code: 'NOT_FOUND', message: 'No elicitation with this id.' },
    ]);
    // Back in the group, the next token carries the role again and the answer counts.
    provider.users.carol!.groups = ['reviewer'];
    expect((await resolve(h, 'carol', id)).elicitation.answers).toMatchObject([{ approver: 'carol', counts: true }]);
  });

  it('an approval already counted stays counted after its approver leaves the group, on a second instance too', async () => {
    const id = await requestOf('deploy');
    const runsBefore = tools.count('deploy');
    expect((await resolve(h, 'bob', id)).userErrors).toEqual([]);
    provider.users.bob!.groups = [];

    // A second server on the same database, the first still running (two instances, or one after a restart): the
    // record still holds bob's ACCEPT, with the roles he had then.
    const next = await start(h.database);
    const seen = dataOf(await gql(next, 'dave', ELICITATION, { id })).elicitation;
    expect(seen).toMatchObject({
      status: 'PENDING',
      answers: [{ approver: 'bob', counts: true, approverRoles: ['reviewer'] }],
    });
    // Bob's next act is refused: his token no longer carries the role.
    expect((await resolve(next, 'bob', id, 'DECLINE')).userErrors).toEqual([
      { code: 'NOT_FOUND', message: 'No elicitation with this id.' },
    ]);
    // Dave's ACCEPT is the second of two: the request is decided and the call runs, once.
    const decided = await resolve(next, 'dave', id);
    expect(decided.userErrors).toEqual([]);
    expect(decided.elicitation).toMatchObject({
      status: 'ACCEPTED',
      answers: [
        { approver: 'bob', counts: true, approverRoles: ['reviewer'] },
        { approver: 'dave', counts: true, approverRoles: ['reviewer', 'ops'], approverName: 'Dave Reviewer' },
      ],
    });
    await expect.poll(() => tools.count('deploy')).toBe(runsBefore + 1);
  });
});
