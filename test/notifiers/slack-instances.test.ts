// Slack cards across a SIGKILL and two instances (docs/slack.md), with real server processes
// (test/fixtures/durability-server.ts) on one PostgreSQL database and the Slack Web API stand-in: a four-eyes request
// is posted to the reviewers' channel by a process that is killed while Slack's answer to the post is on its way;
// two new instances take over, find the card it posted and post none again; clicks on either instance answer
// through the same rules, run the tool once, and a replay sent to the other instance is refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { FixtureOptions } from '../fixtures/durability-server.js';
import { approverAuth, as, type ApproverUser } from '../support/approvers.js';
import { dataOf, type GraphQLResponse } from '../support/harness.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { SlackStandIn, type StoredMessage } from '../support/slack-stand-in.js';
import { killAll, runsOf, startFixture, type ServerProcess } from '../durability/processes.js';

const REVIEWERS = 'CREVIEWERS';
const SLACK_USERS = { alice: 'UALICE', bob: 'UBOB', carol: 'UCAROL' } as const;

let dir: string;
let slack: SlackStandIn;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-slack-instances-'));
  slack = await SlackStandIn.start();
});

afterEach(async () => {
  await killAll();
  await slack.close();
  rmSync(dir, { recursive: true, force: true });
});

async function gql(server: ServerProcess, user: ApproverUser, query: string, variables: Record<string, unknown>) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...as(user) },
    body: JSON.stringify({ query, variables }),
  });
  return dataOf((await response.json()) as GraphQLResponse);
}

const START = `mutation($message: String!) {
  startTurn(input: { agentId: "confirm", message: $message }) {
    turn { id status pendingElicitations { id } } userErrors { code message }
  }
}`;
const RESOLVE = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { elicitation { id status } userErrors { code message } }
}`;
const ELICITATION = `query($id: ID!) { elicitation(id: $id) { status resolvedBy answers { approver } } }`;

function interactionsUrl(server: ServerProcess): string {
  return new URL('/slack/interactions', server.url).toString();
}

async function click(server: ServerProcess, card: StoredMessage, user: keyof typeof SLACK_USERS, action: string) {
  const request = slack.signedRequest(slack.buttonPayload(card, SLACK_USERS[user], action));
  const response = await fetch(interactionsUrl(server), {
    method: 'POST',
    headers: request.headers,
    body: request.body,
  });
  return { status: response.status, request };
}

describe('Slack cards across a SIGKILL and two instances', () => {
  it('a four-eyes request gets one card; two reviewers on two instances run it once; the requester and a replay are refused', async () => {
    const database = (await migratedPostgresDatabase()).url;
    const options: FixtureOptions = {
      database,
      runsFile: join(dir, 'runs.log'),
      auth: approverAuth,
      confirmApprovers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED' },
      slack: {
        ...slack.connection,
        channels: { roles: { reviewer: REVIEWERS } },
        users: Object.entries(SLACK_USERS).map(([user, slackUserId]) => ({ slackUserId, user })),
        mapByEmail: false,
        initialBackoffSeconds: 0.1,
        maxBackoffSeconds: 0.5,
        timeoutMs: 2000,
      },
      // One row per claim: a dead process's claim lapses after 3 × timeoutMs + 5 s, its card's lease after 1.5 s.
      notifierDelivery: { pollIntervalMs: 50, batchSize: 1, cardLeaseMs: 1500 },
    };
    const servers: ServerProcess[] = [];
    onTestFailed(() => {
      console.error(servers.map((s) => `stderr of ${s.pid}:\n${s.stderr()}`).join('\n'));
      console.error(
        JSON.stringify(
          slack.calls.map((c) => [c.method, c.answered]),
          null,
          1,
        ),
      );
    });

    // Slack takes the first post, and its answer never comes back: the process dies with the post in flight.
    slack.failNext('chat.postMessage', { hang: true, thenPost: true });
    const first = await startFixture(options);
    servers.push(first);
    const started = await gql(first, 'alice', START, { message: 'append deploy' });
    expect(started.startTurn.userErrors).toEqual([]);
    const id = started.startTurn.turn.pendingElicitations[0].id as string;
    await slack.waitFor('the post in flight', () => slack.calls.some((c) => c.method === 'chat.postMessage'));
    await first.kill();
    expect(slack.cardsOf(id)).toHaveLength(1);

    // Two instances take over: the card is found in the channel (its metadata), brought up to date, not posted again.
    const [b, c] = await Promise.all([startFixture(options), startFixture(options)]);
    servers.push(b, c);
    await slack.waitFor(
      'the card taken over',
      () => slack.ok('conversations.history').length > 0 && slack.ok('chat.update').length > 0,
    );
    expect(slack.cardsOf(id)).toHaveLength(1);
    const card = slack.cardsOf(id)[0]!;
    expect(card.channel).toBe(REVIEWERS);

    // The requester's click (on one instance): refused with the reason, told to her alone.
    expect((await click(b, card, 'alice', 'toolgate_approve')).status).toBe(200);
    expect(slack.ephemerals).toEqual([
      { channel: REVIEWERS, user: 'UALICE', text: expect.stringContaining('four eyes') },
    ]);

    // Bob on one instance, Carol on the other: the tool runs once.
    const bobs = await click(b, card, 'bob', 'toolgate_approve');
    expect(bobs.status).toBe(200);
    await slack.waitFor('the progress on the card', () =>
      JSON.stringify(card.blocks).includes('1 of 2 approvals: bob'),
    );
    expect((await click(c, card, 'carol', 'toolgate_approve')).status).toBe(200);
    await slack.waitFor('the outcome on the card', () => JSON.stringify(card.blocks).includes('Approved'));
    await slack.waitFor('the run', () => runsOf(options.runsFile, 'deploy') === 1);

    // Bob's request replayed to the other instance, and a forged one: refused; nothing changes.
    const replayed = await fetch(interactionsUrl(c), {
      method: 'POST',
      headers: bobs.request.headers,
      body: bobs.request.body,
    });
    expect(replayed.status).toBe(409);
    const forged = slack.signedRequest(slack.buttonPayload(card, 'UBOB', 'toolgate_approve'), { secret: 'forged' });
    expect(
      (await fetch(interactionsUrl(b), { method: 'POST', headers: forged.headers, body: forged.body })).status,
    ).toBe(401);
    expect(await gql(c, 'alice', ELICITATION, { id })).toMatchObject({
      elicitation: { status: 'ACCEPTED', resolvedBy: 'carol', answers: [{ approver: 'bob' }, { approver: 'carol' }] },
    });

    // An answer in the inbox (the API it uses) updates a new request's card on whichever instance posted it.
    const next = await gql(b, 'alice', START, { message: 'append second' });
    const nextId = next.startTurn.turn.pendingElicitations[0].id as string;
    const nextCard = await slack.waitFor('the second card', () => slack.cardsOf(nextId)[0]);
    expect(
      (await gql(c, 'carol', RESOLVE, { input: { elicitationId: nextId, action: 'DECLINE' } })).resolveElicitation
        .userErrors,
    ).toEqual([]);
    await slack.waitFor('the decline on the card', () => JSON.stringify(nextCard.blocks).includes('Declined'));

    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(slack.cardsOf(id)).toHaveLength(1);
    expect(slack.cardsOf(nextId)).toHaveLength(1);
    expect(runsOf(options.runsFile, 'deploy')).toBe(1);
    expect(runsOf(options.runsFile, 'second')).toBe(0);
    expect(slack.problems).toEqual([]);
  }, 90_000);
});
