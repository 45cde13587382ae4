// What the server publishes for approvers (docs/approvers.md, docs/live.md), observed on its own pub/sub: a request
// under a policy is offered to each of its roles at the pause; each later change of a request (an answer counted
// towards the quorum, the decision, a CANCEL, a supersede, the expiry) goes out on its `elicitation` channel, and a
// counted answer republishes the turn. On SQLite and PostgreSQL (TOOLGATE_TEST_BACKEND=postgres).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ElicitationRecord, TurnRecord } from '../../src/domain/records.js';
import { createInProcessPubSub, type Channel, type ToolgatePubSub } from '../../src/events/pubsub.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import { APPROVER_AGENT, APPROVER_TOOLS, approverAuth, as, type ApproverUser } from '../support/approvers.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { collector, type Received } from '../support/live.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

const START = `mutation($message: String!, $threadId: ID) {
  startTurn(input: { agentId: "${AGENT_ID}", message: $message, threadId: $threadId }) {
    thread { id }
    turn { id status pendingElicitations { id toolCall { toolId } } }
    userErrors { code }
  }
}`;
const RESOLVE = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { elicitation { id status } userErrors { code } }
}`;

let h: Harness;
let pubsub: ToolgatePubSub;
let offsetMs = 0;
const listening: Received<unknown>[] = [];

beforeAll(async () => {
  pubsub = createInProcessPubSub();
  h = await startHarness({
    config: { ...testConfig(APPROVER_AGENT), auth: approverAuth },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
    toolSources: [new CountingToolSource(SOURCE_ID, APPROVER_TOOLS)],
    pubsub,
    clock: () => new Date(Date.now() + offsetMs),
  });
});
afterAll(async () => {
  for (const received of listening) received.stop();
  await h?.close();
});

/** Everything published on these channels from now on. */
function observe<T>(...channels: Channel[]): Received<T> {
  const received = collector<T>();
  const subscription = pubsub.subscribeMany(channels);
  received.onStop(() => void subscription.return());
  void (async () => {
    for await (const event of subscription) received.push(event as T);
    received.finish();
  })();
  listening.push(received as Received<unknown>);
  return received;
}

async function start(message: string, threadId?: string) {
  const started = dataOf(await h.gql(START, { message, threadId }, as('alice'))).startTurn;
  expect(started.userErrors).toEqual([]);
  return {
    threadId: started.thread.id as string,
    turnId: started.turn.id as string,
    requests: started.turn.pendingElicitations as { id: string; toolCall: { toolId: string } }[],
  };
}

async function resolve(user: ApproverUser, elicitationId: string, action: string) {
  const answered = dataOf(await h.gql(RESOLVE, { input: { elicitationId, action } }, as(user))).resolveElicitation;
  expect(answered.userErrors).toEqual([]);
  return answered.elicitation as { id: string; status: string };
}

/** Lets what was published by now arrive (publications wait for the store's flush). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe('offered to the roles of its policy at the pause', () => {
  it('once per role of the policy; a request without a policy, and roles it does not name, get nothing', async () => {
    const reviewer = observe<ElicitationRecord>({ topic: 'approverElicitations', key: 'reviewer' });
    const ops = observe<ElicitationRecord>({ topic: 'approverElicitations', key: 'ops' });
    const oncall = observe<ElicitationRecord>({ topic: 'approverElicitations', key: 'oncall' });

    const deploy = (await start('t_deploy')).requests[0]!;
    const restart = (await start('t_restart')).requests[0]!;
    const wipe = (await start('t_wipe')).requests[0]!;

    await reviewer.waitFor((e) => e.id === restart.id, 'the restart request offered to reviewers');
    await ops.waitFor((e) => e.id === restart.id, 'the restart request offered to ops');
    await settle();
    expect(reviewer.events.map((e) => e.id)).toEqual([deploy.id, restart.id]);
    expect(reviewer.events[0]).toMatchObject({
      ownerId: 'alice',
      status: 'PENDING',
      approval: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED' },
    });
    expect(ops.events.map((e) => e.id)).toEqual([restart.id]);
    // The escalation role is offered it only when it escalates (the sweeper's part), never at the pause.
    expect(oncall.events).toEqual([]);
    for (const received of [reviewer, ops]) expect(received.events.map((e) => e.id)).not.toContain(wipe.id);

    for (const request of [deploy, restart, wipe]) await resolve('alice', request.id, 'CANCEL');
  });
});

describe('each change of a request after it was made', () => {
  it('a counted answer: the request, still pending, and its turn again; then the decision', async () => {
    const { turnId, requests } = await start('t_deploy');
    const request = requests[0]!;
    const changes = observe<ElicitationRecord>({ topic: 'elicitation', key: request.id });
    const turns = observe<TurnRecord>({ topic: 'turn', key: turnId });

    expect((await resolve('bob', request.id, 'ACCEPT')).status).toBe('PENDING');
    await changes.waitFor((e) => e.id === request.id, 'the counted answer');
    expect(changes.events).toEqual([expect.objectContaining({ id: request.id, status: 'PENDING', response: null })]);
    // Its turn did not change its own fields, but what it holds did: its subscribers read the answers anew.
    await turns.waitFor((t) => t.id === turnId, 'the turn after the counted answer');
    expect(turns.events).toEqual([expect.objectContaining({ id: turnId, status: 'PAUSED' })]);

    expect((await resolve('carol', request.id, 'ACCEPT')).status).toBe('ACCEPTED');
    await changes.waitFor((e) => e.status === 'ACCEPTED', 'the decision');
    await settle();
    expect(changes.events.map((e) => [e.status, e.resolvedBy])).toEqual([
      ['PENDING', null],
      ['ACCEPTED', 'carol'],
    ]);
  });

  it('a CANCEL closes the step: every request of it, under a policy or not, goes out once', async () => {
    const { requests } = await start('t_deploy t_wipe');
    const [deploy, wipe] = requests;
    const changes = observe<ElicitationRecord>(
      { topic: 'elicitation', key: deploy!.id },
      { topic: 'elicitation', key: wipe!.id },
    );
    await resolve('alice', wipe!.id, 'CANCEL');
    await changes.waitFor((e) => e.id === deploy!.id, 'the request closed with the turn');
    await changes.waitFor((e) => e.id === wipe!.id, 'the cancelled request');
    await settle();
    expect(changes.events.map((e) => [e.id, e.status]).sort()).toEqual(
      [
        [deploy!.id, 'CANCELLED'],
        [wipe!.id, 'CANCELLED'],
      ].sort(),
    );
  });

  it('a new message supersedes the paused turn: its requests go out CANCELLED, the answered one not again', async () => {
    const first = await start('t_deploy t_restart');
    const [deploy, restart] = first.requests;
    const changes = observe<ElicitationRecord>(
      { topic: 'elicitation', key: deploy!.id },
      { topic: 'elicitation', key: restart!.id },
    );
    await resolve('dave', restart!.id, 'ACCEPT');
    await changes.waitFor((e) => e.id === restart!.id && e.status === 'ACCEPTED', 'the decided restart');
    await start('never mind', first.threadId);
    await changes.waitFor((e) => e.id === deploy!.id, 'the superseded request');
    await settle();
    expect(changes.events.map((e) => [e.id, e.status])).toEqual([
      [restart!.id, 'ACCEPTED'],
      [deploy!.id, 'CANCELLED'],
    ]);
  });

  it('the sweep expires it: it goes out EXPIRED', async () => {
    const { requests } = await start('t_deploy');
    const request = requests[0]!;
    const changes = observe<ElicitationRecord>({ topic: 'elicitation', key: request.id });
    offsetMs += 3_601_000;
    try {
      expect((await h.server.sweep()).expiredTurns).toBeGreaterThanOrEqual(1);
    } finally {
      offsetMs = 0;
    }
    await changes.waitFor((e) => e.id === request.id, 'the expired request');
    expect(changes.events).toEqual([expect.objectContaining({ id: request.id, status: 'EXPIRED' })]);
  });
});
