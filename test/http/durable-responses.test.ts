// "It succeeded" is never taken back by a power cut: a mutation's response and a subscription event go out only
// after the WAL fsync that makes what they report durable, and a tool runs only after its start record is on
// disk; a Slack reviewer's decline modal closes only after the fsync too. The fsync is held back here (the server's
// syncFile), and the database read from a second connection.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';
import { connectWs, subscribeWs } from '../support/live.js';
import { CLIENT_REVISIONS, connectClientOf } from '../mcp/support.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { APPROVER_AGENT, APPROVER_TOOLS, approverAuth, as } from '../support/approvers.js';
import { MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { SlackStandIn } from '../support/slack-stand-in.js';
import { CountingToolSource } from '../support/tools.js';

/** A syncFile that holds every fsync while `held`; release() lets the waiting ones finish. */
function fsyncGate() {
  let held = false;
  const waiting: (() => void)[] = [];
  return {
    syncFile: () =>
      held
        ? new Promise<void>((resolve) => {
            waiting.push(resolve);
          })
        : Promise.resolve(),
    hold() {
      held = true;
    },
    get waiting() {
      return waiting.length;
    },
    release() {
      held = false;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

const isPending = async (promise: Promise<unknown>, ms = 200) =>
  Promise.race([
    promise.then(
      () => false,
      () => false,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms)),
  ]);

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function readDatabase(file: string) {
  const db = new Database(file, { readonly: true });
  return {
    turnStatus: () =>
      (db.prepare('SELECT status FROM turns ORDER BY rowid DESC LIMIT 1').get() as { status: string } | undefined)
        ?.status,
    entity: (id: number) => db.prepare('SELECT id FROM demo_entities WHERE id = ?').get(id) !== undefined,
    elicitations: () => (db.prepare('SELECT count(*) AS n FROM elicitations').get() as { n: number }).n,
    elicitationStatus: (id: string) =>
      (db.prepare('SELECT status FROM elicitations WHERE id = ?').get(id) as { status: string } | undefined)?.status,
    close: () => db.close(),
  };
}

describe('synchronous FULL (the default)', () => {
  it('the startTurn response waits for the fsync of the pause it reports; a query does not wait', async () => {
    const gate = fsyncGate();
    harness = await startHarness({ syncFile: gate.syncFile });
    const db = readDatabase(harness.database);
    gate.hold();
    const response = harness.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } });
    await expect.poll(() => db.turnStatus()).toBe('PAUSED'); // committed…
    expect(await isPending(response)).toBe(true); // …but not reported before it is on disk
    expect(gate.waiting).toBeGreaterThan(0);
    expect(dataOf(await harness.gql('{ viewer { id } }')).viewer.id).toBe('local');
    gate.release();
    expect(dataOf(await response).startTurn.turn.status).toBe('PAUSED');
    db.close();
  });

  it('the ACCEPT does not run the tool before its start record is on disk, nor answer before the result is', async () => {
    const gate = fsyncGate();
    harness = await startHarness({ syncFile: gate.syncFile });
    const db = readDatabase(harness.database);
    const started = dataOf(await harness.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1' } }));
    gate.hold();
    const answer = harness.gql(RESOLVE, {
      input: { elicitationId: started.startTurn.turn.pendingElicitations[0].id, action: 'ACCEPT' },
    });
    await expect.poll(() => gate.waiting).toBeGreaterThan(0);
    expect(await isPending(answer)).toBe(true);
    expect(db.entity(1)).toBe(true); // not deleted: the tool waits for its durable start
    gate.release();
    expect(dataOf(await answer).resolveElicitation.turn.status).toBe('COMPLETED');
    expect(db.entity(1)).toBe(false);
    db.close();
  });

  it('a subscriber is not told of a pause before it is on disk', async () => {
    const gate = fsyncGate();
    harness = await startHarness({ syncFile: gate.syncFile });
    const client = connectWs(harness.url);
    const requested = subscribeWs(client, 'subscription { elicitationRequested { id } }');
    await new Promise((resolve) => setTimeout(resolve, 100)); // subscribed
    gate.hold();
    const response = harness.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 2' } });
    await expect.poll(() => gate.waiting).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(requested.events).toEqual([]);
    gate.release();
    const id = dataOf(await response).startTurn.turn.pendingElicitations[0].id;
    expect((await requested.waitFor((e) => e.data?.elicitationRequested?.id === id)).data.elicitationRequested.id).toBe(
      id,
    );
    requested.stop();
    await client.dispose();
  });
});

describe('synchronous FULL: an MCP client is told what is on disk only', () => {
  it.each(CLIENT_REVISIONS)(
    'a %s client is not asked to confirm a pause, nor told a read-only result, before it is on disk',
    async (revision) => {
      const gate = fsyncGate();
      harness = await startHarness({ syncFile: gate.syncFile });
      const db = readDatabase(harness.database);
      let asked!: () => void;
      const askedOnce = new Promise<void>((resolve) => (asked = resolve));
      const client = await connectClientOf(revision, new URL('/mcp', harness.url), {
        elicit: () => {
          asked();
          return Promise.resolve({ action: 'decline' });
        },
      });
      try {
        gate.hold();
        const gated = client.call('delete_entities', { ids: [3] });
        gated.catch(() => {});
        await expect.poll(() => db.elicitations()).toBe(1); // committed…
        expect(await isPending(askedOnce)).toBe(true); // …but not asked before it is on disk
        gate.release();
        await askedOnce;
        await gated;
        expect(db.entity(3)).toBe(true);

        // A read-only call runs unasked and is recorded in one commit with its result: told once that is on disk.
        gate.hold();
        const listed = client.call('list_entities', {});
        await expect.poll(() => db.turnStatus()).toBe('COMPLETED');
        expect(await isPending(listed)).toBe(true);
        gate.release();
        expect(await listed).toMatchObject({ isError: false });
      } finally {
        gate.release();
        await client.close();
        db.close();
      }
    },
  );
});

describe('synchronous FULL: a Slack reviewer is told what is on disk only', () => {
  it('the decline modal is cleared once the decline is on disk, not at its commit', async () => {
    const slack = await SlackStandIn.start();
    const gate = fsyncGate();
    try {
      harness = await startHarness({
        syncFile: gate.syncFile,
        config: {
          ...testConfig(APPROVER_AGENT),
          auth: approverAuth,
          slack: {
            ...slack.connection,
            channels: { default: 'CREVIEWERS' },
            users: [{ slackUserId: 'UCAROL', user: 'carol' }],
            mapByEmail: false,
          },
        },
        models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed({ deploy: { target: 'prod' } })]) },
        toolSources: [new CountingToolSource(SOURCE_ID, APPROVER_TOOLS)],
        notifierDelivery: { pollIntervalMs: 50 },
      });
      const db = readDatabase(harness.database);
      const started = dataOf(
        await harness.gql(START_TURN, { input: { agentId: 'tester', message: 't_deploy' } }, as('alice')),
      ).startTurn;
      const id = started.turn.pendingElicitations[0].id as string;
      const card = await slack.waitFor('the card', () => slack.cardsOf(id)[0]);
      const click = slack.signedRequest(slack.buttonPayload(card, 'UCAROL', 'toolgate_decline'));
      await fetch(new URL('/slack/interactions', harness.url), { method: 'POST', ...click });
      const opened = await slack.waitFor('the decline modal', () =>
        slack.views.find((v) => v.view.private_metadata === id),
      );

      gate.hold();
      const submission = slack.signedRequest(slack.submissionPayload(opened.view, 'UCAROL', 'Not today'));
      const submitted = fetch(new URL('/slack/interactions', harness.url), { method: 'POST', ...submission });
      await expect.poll(() => db.elicitationStatus(id)).toBe('DECLINED'); // committed…
      expect(await isPending(submitted)).toBe(true); // …but the modal not cleared before it is on disk
      gate.release();
      expect(await (await submitted).json()).toEqual({ response_action: 'clear' });
      db.close();
    } finally {
      gate.release();
      await slack.close();
    }
  });
});

describe('synchronous NORMAL', () => {
  it('responses go out at commit, but a tool still waits for its durable start record', async () => {
    const gate = fsyncGate();
    harness = await startHarness({ syncFile: gate.syncFile, synchronous: 'NORMAL' });
    const db = readDatabase(harness.database);
    gate.hold();
    const started = dataOf(await harness.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 3' } }));
    expect(started.startTurn.turn.status).toBe('PAUSED'); // answered while the fsync is held: none was needed
    const answer = harness.gql(RESOLVE, {
      input: { elicitationId: started.startTurn.turn.pendingElicitations[0].id, action: 'ACCEPT' },
    });
    await expect.poll(() => gate.waiting).toBeGreaterThan(0);
    expect(db.entity(3)).toBe(true);
    gate.release();
    expect(dataOf(await answer).resolveElicitation.turn.status).toBe('COMPLETED');
    expect(db.entity(3)).toBe(false);
    db.close();
  });
});
