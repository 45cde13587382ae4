// Slack approval cards end to end (docs/slack.md): a real server on 127.0.0.1 with real bearer tokens, its Slack
// calls going to the Web API stand-in (test/support/slack-stand-in.ts), which checks each one's documented shape, and
// interactions sent as Slack sends them (form-encoded `payload=`, signed `v0`). On SQLite and PostgreSQL.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { APPROVER_AGENT, APPROVER_TOOLS, approverAuth, as, type ApproverUser } from '../support/approvers.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { memoryLog, type MemoryLog } from '../support/log.js';
import { MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { SlackStandIn, type StoredMessage } from '../support/slack-stand-in.js';
import { CountingToolSource } from '../support/tools.js';

const REVIEWERS = 'CREVIEWERS';
const GENERAL = 'CGENERAL';
const SLACK_USERS = { alice: 'UALICE', bob: 'UBOB', carol: 'UCAROL' } as const;

const START = `mutation($message: String!) {
  startTurn(input: { agentId: "tester", message: $message }) {
    turn { id status pendingElicitations { id } }
    userErrors { code message }
  }
}`;
const RESOLVE = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { elicitation { id status } userErrors { code message } }
}`;
const ELICITATION = `query($id: ID!) { elicitation(id: $id) { id status resolvedBy answers { approver action } } }`;

let slack: SlackStandIn;
let h: Harness;
let tools: CountingToolSource;
let log: MemoryLog;
let gate: Promise<void> = Promise.resolve();

beforeAll(async () => {
  slack = await SlackStandIn.start();
  // `wipe` waits for `gate` (open unless a test closes it).
  tools = new CountingToolSource(
    SOURCE_ID,
    APPROVER_TOOLS.map((tool) => (tool.name === 'wipe' ? { ...tool, run: () => gate.then(() => 'wiped') } : tool)),
  );
  log = memoryLog();
  h = await startHarness({
    config: {
      ...testConfig(APPROVER_AGENT),
      auth: approverAuth,
      slack: {
        ...slack.connection,
        channels: { default: GENERAL, roles: { reviewer: REVIEWERS } },
        users: Object.entries(SLACK_USERS).map(([user, slackUserId]) => ({ slackUserId, user })),
        mapByEmail: false,
        initialBackoffSeconds: 0.05,
        maxBackoffSeconds: 0.2,
        timeoutMs: 2000,
      },
    },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed({ deploy: { target: 'prod\u202Egpj.exe' } })]) },
    toolSources: [tools],
    logger: log.logger,
    notifierDelivery: { pollIntervalMs: 50 },
  });
});
afterAll(async () => {
  await h?.close();
  await slack?.close();
});
afterEach(() => {
  // Every call the server made had Slack's documented shape.
  expect(slack.problems).toEqual([]);
  expect(log.find('unexpected fault')).toEqual([]);
});

async function requestOf(tool: string): Promise<string> {
  const started = dataOf(await h.gql(START, { message: `t_${tool}` }, as('alice'))).startTurn;
  expect(started.userErrors).toEqual([]);
  return started.turn.pendingElicitations[0].id as string;
}

async function cardOf(elicitationId: string, shows?: string): Promise<StoredMessage> {
  return slack.waitFor(`the card of ${elicitationId}${shows ? ` showing "${shows}"` : ''}`, () => {
    const card = slack.cardsOf(elicitationId)[0];
    return card && (!shows || textOf(card).includes(shows)) ? card : null;
  });
}

/** Everything a card shows, as one text. */
function textOf(card: StoredMessage): string {
  return JSON.stringify(card.blocks);
}

function buttonsOf(card: StoredMessage): string[] {
  return card.blocks.filter((b) => b.type === 'actions').flatMap((b) => b.elements.map((e: any) => e.action_id));
}

async function send(request: { body: string; headers: Record<string, string> }): Promise<Response> {
  return fetch(new URL('/slack/interactions', h.url), { method: 'POST', headers: request.headers, body: request.body });
}

async function click(card: StoredMessage, user: keyof typeof SLACK_USERS | string, action: string) {
  const slackUser = SLACK_USERS[user as keyof typeof SLACK_USERS] ?? user;
  const request = slack.signedRequest(slack.buttonPayload(card, slackUser, action));
  const response = await send(request);
  return { response, request };
}

async function stateOf(id: string, user: ApproverUser = 'alice') {
  return dataOf(await h.gql(ELICITATION, { id }, as(user))).elicitation;
}

describe('a four-eyes request in Slack', () => {
  it('one card in the reviewers channel; the requester is refused; two reviewers run the tool once; the card follows', async () => {
    const id = await requestOf('deploy');
    const card = await cardOf(id);
    expect(card.channel).toBe(REVIEWERS);
    // The arguments exactly as they will run, the hidden character written as a visible escape and named.
    expect(textOf(card)).toContain('prod\\\\u202Egpj.exe');
    expect(textOf(card)).toContain('1 hidden character');
    expect(textOf(card)).toContain('four eyes');
    expect(textOf(card)).toContain('*Approvals needed:* 2');
    expect(textOf(card)).toContain('0 of 2 approvals');
    expect(buttonsOf(card)).toEqual(expect.arrayContaining(['toolgate_approve', 'toolgate_decline']));

    // The requester's click: refused, told to her alone, nothing changes.
    const mine = await click(card, 'alice', 'toolgate_approve');
    expect(mine.response.status).toBe(200);
    expect(slack.ephemerals).toContainEqual({
      channel: REVIEWERS,
      user: 'UALICE',
      text: expect.stringContaining('four eyes'),
    });
    expect((await stateOf(id)).answers).toEqual([]);

    // Bob: counted; the card shows the quorum's progress.
    expect((await click(card, 'bob', 'toolgate_approve')).response.status).toBe(200);
    await cardOf(id, '1 of 2 approvals: bob');
    expect(tools.count('deploy')).toBe(0);

    // Carol: decided; the tool runs once, the card shows who and the receipt, and offers no more buttons.
    const carols = await click(card, 'carol', 'toolgate_approve');
    expect(carols.response.status).toBe(200);
    const done = await cardOf(id, 'Approved');
    expect(textOf(done)).toContain('by *carol*');
    expect(textOf(done)).toMatch(/Receipt:\* #\d+ `[0-9a-f]{16}`/);
    expect(buttonsOf(done)).toEqual([]);
    await slack.waitFor('the tool to run', () => tools.count('deploy') === 1);
    expect(await stateOf(id)).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'carol' });

    // Carol's request again (a replay), and a forged one: refused, nothing changes.
    const ephemerals = slack.ephemerals.length;
    expect((await send(carols.request)).status).toBe(409);
    const forged = slack.signedRequest(slack.buttonPayload(card, 'UBOB', 'toolgate_approve'), {
      secret: 'not-the-secret',
    });
    expect((await send(forged)).status).toBe(401);
    const stale = slack.signedRequest(slack.buttonPayload(card, 'UBOB', 'toolgate_approve'), {
      timestamp: Math.floor(Date.now() / 1000) - 301,
    });
    expect((await send(stale)).status).toBe(401);
    const tampered = slack.signedRequest(slack.buttonPayload(card, 'UBOB', 'toolgate_approve'));
    expect((await send({ ...tampered, body: tampered.body.replace('UBOB', 'UCAROL') })).status).toBe(401);
    expect(slack.ephemerals.length).toBe(ephemerals);
    expect(tools.count('deploy')).toBe(1);

    // One card for the request, ever; every later change was an update of it.
    const posts = slack
      .ok('chat.postMessage')
      .filter((c) => JSON.parse(c.params.metadata).event_payload.elicitation_id === id);
    expect(posts).toHaveLength(1);
    expect(slack.cardsOf(id)).toHaveLength(1);
    expect(log.find('slack interaction refused: replay')).toHaveLength(1);
    expect(log.find('slack interaction refused: signature').map((l) => l.reason)).toEqual([
      'MISMATCH',
      'STALE',
      'MISMATCH',
    ]);
  });

  it('an answer in the API updates the card; a decline from Slack opens a modal and carries its instructions', async () => {
    const id = await requestOf('deploy');
    const card = await cardOf(id);
    const byBob = dataOf(await h.gql(RESOLVE, { input: { elicitationId: id, action: 'ACCEPT' } }, as('bob')));
    expect(byBob.resolveElicitation.userErrors).toEqual([]);
    await cardOf(id, '1 of 2 approvals: bob');

    // The first click's trigger expired: told so, nothing changed; the second opens the modal.
    slack.failNext('views.open', { error: 'expired_trigger_id' });
    expect((await click(card, 'carol', 'toolgate_decline')).response.status).toBe(200);
    await slack.waitFor('the message', () =>
      slack.ephemerals.find((e) => e.user === 'UCAROL' && e.text.includes('could not be opened')),
    );
    expect((await click(card, 'carol', 'toolgate_decline')).response.status).toBe(200);
    const opened = await slack.waitFor('the decline modal', () =>
      slack.views.find((v) => v.view.private_metadata === id),
    );
    const submitted = await send(
      slack.signedRequest(slack.submissionPayload(opened.view, 'UCAROL', 'Not on a Friday')),
    );
    expect(submitted.status).toBe(200);
    expect(await submitted.json()).toEqual({ response_action: 'clear' });
    const declined = await cardOf(id, 'Declined');
    expect(textOf(declined)).toContain('by *carol*');
    expect(textOf(declined)).toContain('Not on a Friday');
    expect(tools.count('deploy')).toBe(1); // the first test's run only
  });

  it("a request without a policy goes to the default channel, and the requester's answer in the API updates it", async () => {
    const id = await requestOf('wipe');
    const card = await cardOf(id);
    expect(card.channel).toBe(GENERAL);
    expect(textOf(card)).toContain('*Who may answer:* the requester, *alice*');
    const answered = dataOf(await h.gql(RESOLVE, { input: { elicitationId: id, action: 'ACCEPT' } }, as('alice')));
    expect(answered.resolveElicitation.userErrors).toEqual([]);
    const done = await cardOf(id, 'Approved');
    expect(textOf(done)).toContain('by *alice*');
  });

  it('an unlinked Slack user, and one outside the roles, are told so and change nothing', async () => {
    const id = await requestOf('deploy');
    const card = await cardOf(id);
    await click(card, 'USTRANGER', 'toolgate_approve');
    await slack.waitFor('the unlinked message', () =>
      slack.ephemerals.find((e) => e.user === 'USTRANGER' && e.text.includes('not linked')),
    );
    // A decline modal is not even opened for someone who may not answer.
    const views = slack.views.length;
    await click(card, 'alice', 'toolgate_decline');
    await slack.waitFor('the four-eyes message', () =>
      slack.ephemerals.filter((e) => e.user === 'UALICE' && e.text.includes('four eyes')).length === 2 ? true : null,
    );
    expect(slack.views.length).toBe(views);
    expect((await stateOf(id)).answers).toEqual([]);
    // Answered already: a late click is told so.
    await h.gql(RESOLVE, { input: { elicitationId: id, action: 'DECLINE' } }, as('bob'));
    await cardOf(id, 'Declined');
    await click(card, 'carol', 'toolgate_approve');
    await slack.waitFor('the already-answered message', () =>
      slack.ephemerals.find((e) => e.user === 'UCAROL' && e.text.includes('already answered (DECLINED)')),
    );
  });
});

describe('Slack waits 3 seconds at most', () => {
  it('a click whose answer runs a slow tool is acknowledged in time, and the card follows', async () => {
    let release!: () => void;
    gate = new Promise((resolve) => (release = resolve));
    try {
      const id = await requestOf('wipe');
      const card = await cardOf(id);
      const before = Date.now();
      const { response } = await click(card, 'alice', 'toolgate_approve');
      expect(response.status).toBe(200);
      expect(Date.now() - before).toBeLessThan(3000);
      await slack.waitFor('the tool to start', () => tools.count('wipe') > 0);
      release();
      const done = await cardOf(id, 'Approved');
      expect(textOf(done)).toContain('by *alice*');
    } finally {
      release();
      gate = Promise.resolve();
    }
  });
});

describe('Slack failing', () => {
  it("a 429's Retry-After is honoured and errors are retried: the card comes late, once", async () => {
    slack.failNext('chat.postMessage', { status: 429, retryAfter: 1 }, { error: 'internal_error' }, { status: 500 });
    const id = await requestOf('wipe');
    const card = await cardOf(id);
    const posts = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.params.channel === GENERAL);
    const tries = posts.slice(-4);
    expect(tries.map((c) => c.answered.status)).toEqual([429, 200, 500, 200]);
    expect(tries.map((c) => c.answered.ok)).toEqual([false, false, false, true]);
    // Not before the second Slack asked for.
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(950);
    expect(slack.cardsOf(id)).toEqual([card]);
    expect(log.find('notification not delivered; retrying').length).toBeGreaterThanOrEqual(3);
  });
});

describe('escalation and expiry in Slack, and users mapped by email', () => {
  let standIn: SlackStandIn;
  let server: Harness;
  const ONCALL = 'CONCALL';
  const memory = memoryLog();

  beforeAll(async () => {
    standIn = await SlackStandIn.start();
    standIn.users = { UERIN: { email: 'Erin@Example.com' }, UNOBODY: { email: 'nobody@example.com' } };
    server = await startHarness({
      config: {
        ...testConfig({
          pauseTtlSeconds: 4,
          toolConfirmation: {
            't:restart': {
              approvers: {
                roles: ['reviewer'],
                required: 1,
                requester: 'EXCLUDED',
                escalate: { afterSeconds: 1, roles: ['oncall'] },
              },
            },
          },
        }),
        auth: approverAuth,
        slack: {
          botToken: standIn.token,
          signingSecret: standIn.signingSecret,
          apiUrl: standIn.url,
          channels: { roles: { reviewer: REVIEWERS, oncall: ONCALL } },
          users: [{ email: 'erin@example.com', user: 'erin' }],
          mapByEmail: true,
          initialBackoffSeconds: 0.05,
          maxBackoffSeconds: 0.2,
          timeoutMs: 2000,
        },
      },
      models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
      toolSources: [new CountingToolSource(SOURCE_ID, APPROVER_TOOLS)],
      logger: memory.logger,
      notifierDelivery: { pollIntervalMs: 50 },
    });
  });
  afterAll(async () => {
    await server?.close();
    await standIn?.close();
  });

  it('an escalation posts to the escalation role, whose member (by email) answers; an expiry shows on every card', async () => {
    const start = async () => {
      const started = dataOf(await server.gql(START, { message: 't_restart' }, as('alice'))).startTurn;
      return started.turn.pendingElicitations[0].id as string;
    };
    const answered = await start();
    const expiring = await start();
    const first = await standIn.waitFor('the reviewers card', () => standIn.cardsOf(answered)[0]);
    expect(first.channel).toBe(REVIEWERS);
    expect(JSON.stringify(first.blocks)).toContain('*Escalates to:* `oncall`');

    // Past the escalation time, the sweeper offers it to oncall: a second card in their channel.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await server.server.sweep();
    const escalated = await standIn.waitFor('the oncall card', () =>
      standIn.cardsOf(answered).find((c) => c.channel === ONCALL),
    );
    expect(JSON.stringify(escalated.blocks)).toContain('*Escalated* to `oncall`');
    // Erin (oncall, mapped by her Slack email) approves on the first card: both cards follow.
    const erins = standIn.signedRequest(standIn.buttonPayload(first, 'UERIN', 'toolgate_approve'));
    const response = await fetch(new URL('/slack/interactions', server.url), {
      method: 'POST',
      headers: erins.headers,
      body: erins.body,
    });
    expect(response.status).toBe(200);
    await standIn.waitFor('both cards approved by erin', () =>
      standIn.cardsOf(answered).every((c) => JSON.stringify(c.blocks).includes('Approved by *erin*')),
    );
    expect(standIn.ok('users.info').map((c) => c.params.user)).toContain('UERIN');

    // A Slack user whose email no entry has answers as that email: no roles, so not an approver.
    const nobody = standIn.signedRequest(
      standIn.buttonPayload(standIn.cardsOf(expiring)[0]!, 'UNOBODY', 'toolgate_approve'),
    );
    await fetch(new URL('/slack/interactions', server.url), {
      method: 'POST',
      headers: nobody.headers,
      body: nobody.body,
    });
    await standIn.waitFor('the refusal', () =>
      standIn.ephemerals.find((e) => e.user === 'UNOBODY' && e.text.includes('not one of the approvers')),
    );

    // The other request expires: every card of it says so.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await server.server.sweep();
    await standIn.waitFor('both cards expired', () => {
      const cards = standIn.cardsOf(expiring);
      return cards.length === 2 && cards.every((c) => JSON.stringify(c.blocks).includes(':hourglass: Expired'));
    });
    expect(standIn.problems).toEqual([]);
    expect(memory.find('unexpected fault')).toEqual([]);
  });
});

describe('a server stopping while Slack hangs', () => {
  it('stops at once; the next server on the database finds the card the hung post made and posts no second', async () => {
    const standIn = await SlackStandIn.start();
    const memory = memoryLog();
    const options = {
      config: {
        ...testConfig(),
        slack: {
          botToken: standIn.token,
          signingSecret: standIn.signingSecret,
          apiUrl: standIn.url,
          channels: { default: GENERAL },
          mapByEmail: false,
          users: [],
          initialBackoffSeconds: 0.05,
          maxBackoffSeconds: 0.2,
          timeoutMs: 20_000,
        },
      },
      models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
      toolSources: [new CountingToolSource(SOURCE_ID, APPROVER_TOOLS)],
      logger: memory.logger,
      notifierDelivery: { pollIntervalMs: 50, cardLeaseMs: 200 },
    };
    try {
      standIn.failNext('chat.postMessage', { hang: true, thenPost: true });
      const first = await startHarness(options);
      const started = dataOf(await first.gql(START, { message: 't_wipe' })).startTurn;
      const id = started.turn.pendingElicitations[0].id as string;
      await standIn.waitFor('the hung post', () => standIn.calls.some((c) => c.method === 'chat.postMessage'));
      const before = Date.now();
      await first.close();
      expect(Date.now() - before).toBeLessThan(5000);

      // Its first update of the card it found is refused: the card exists all the same, and is not posted again.
      standIn.failNext('chat.update', { error: 'internal_error' });
      const second = await startHarness({ ...options, database: first.database });
      try {
        await standIn.waitFor('the card adopted', () => standIn.ok('chat.update').length > 0);
        expect(standIn.cardsOf(id)).toHaveLength(1);
        expect(standIn.ok('conversations.history')).toHaveLength(2);
        expect(standIn.problems).toEqual([]);
      } finally {
        await second.close();
      }
      expect(memory.find('unexpected fault')).toEqual([]);
    } finally {
      await standIn.close();
    }
  });
});
