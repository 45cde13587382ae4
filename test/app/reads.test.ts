// The reads and revokeGrant, called directly (no GraphQL): a user's records are theirs alone (another user's read as
// absent, as an unknown id does), lists are capped, the webhook outbox is for administrators.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation } from '../../src/app/answer-elicitation.js';
import { getGrant, listGrants } from '../../src/app/grant-reads.js';
import {
  findNode,
  getElicitation,
  getThread,
  getTurn,
  listElicitations,
  listPendingElicitations,
  listThreads,
} from '../../src/app/reads.js';
import { revokeGrant } from '../../src/app/revoke-grant.js';
import { startTurn } from '../../src/app/start-turn.js';
import { listWebhookDeliveries } from '../../src/app/webhook-deliveries.js';
import type { ApprovalGrantRecord, ElicitationRecord, ThreadRecord, TurnRecord } from '../../src/domain/records.js';
import { ADMIN, ALICE, BOB, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { AGENT_ID } from '../support/scenario.js';

let s: AppScenario;
let thread: ThreadRecord;
let turn: TurnRecord;
let elicitation: ElicitationRecord;
let grant: ApprovalGrantRecord;

beforeAll(async () => {
  s = await startApp({ tools: [{ name: 'rw' }], script: [callsWhatIsNamed()] });
  const started = await startTurn(s.app, ALICE, {
    agentId: AGENT_ID,
    threadId: null,
    message: 't_rw',
    background: false,
  });
  if (!started.ok) throw new Error(`refused: ${started.code}`);
  ({ thread, turn } = started);
  const [request] = started.pausedWith!;
  const answered = await answerElicitation(s.app, ALICE, {
    elicitationId: request!.id,
    action: 'ACCEPT',
    remember: { scope: 'AGENT', ttlSeconds: 3600 },
  });
  if (!answered.ok) throw new Error(`refused: ${answered.code}`);
  elicitation = answered.elicitation;
  grant = (await getGrant(s.app, ALICE, elicitation.grantId!))!;
});
afterAll(() => s?.close());

describe('the reads', () => {
  it('give the owner their records and anyone else nothing, by id, by node id and in lists', async () => {
    expect((await getThread(s.app, ALICE, thread.id))?.id).toBe(thread.id);
    expect((await getTurn(s.app, ALICE, turn.id))?.id).toBe(turn.id);
    expect((await getElicitation(s.app, ALICE, elicitation.id))?.id).toBe(elicitation.id);
    expect((await findNode(s.app, ALICE, elicitation.id))?.id).toBe(elicitation.id);
    expect(grant.id).toBe(elicitation.grantId);

    expect(await getThread(s.app, BOB, thread.id)).toBeNull();
    expect(await getTurn(s.app, BOB, turn.id)).toBeNull();
    expect(await getElicitation(s.app, BOB, elicitation.id)).toBeNull();
    expect(await getGrant(s.app, BOB, grant.id)).toBeNull();
    for (const id of [thread.id, turn.id, elicitation.id]) expect(await findNode(s.app, BOB, id)).toBeNull();
    // Agents are shared.
    expect((await findNode(s.app, BOB, AGENT_ID))?.id).toBe(AGENT_ID);

    const none = { threadId: null, agentId: null };
    expect((await listThreads(s.app, BOB, { agentId: null })).items).toEqual([]);
    expect((await listElicitations(s.app, BOB, { ...none, statuses: null })).items).toEqual([]);
    expect((await listGrants(s.app, BOB, { agentId: null, threadId: null, includeInactive: true })).items).toEqual([]);
    expect((await listThreads(s.app, ALICE, { agentId: null })).items.map((t) => t.id)).toEqual([thread.id]);
    expect((await listElicitations(s.app, ALICE, { ...none, statuses: ['ACCEPTED'] })).totalCount).toBe(1);
    expect((await listPendingElicitations(s.app, ALICE, none)).totalCount).toBe(0);
  });

  it('cap a page, whatever the caller asks for', async () => {
    for (let i = 0; i < 3; i++) {
      await startTurn(s.app, ALICE, { agentId: AGENT_ID, threadId: null, message: 'hello', background: false });
    }
    expect((await listThreads(s.app, ALICE, { agentId: null, first: 2 })).items).toHaveLength(2);
    expect((await listThreads(s.app, ALICE, { agentId: null, first: -5 })).items).toHaveLength(0);
    expect((await listThreads(s.app, ALICE, { agentId: null, first: 10_000 })).items).toHaveLength(4);
  });

  it('list webhook deliveries for administrators only', async () => {
    expect(await listWebhookDeliveries(s.app, ALICE, { status: null })).toEqual({
      ok: false,
      code: 'FORBIDDEN',
      reason: 'ADMIN_ONLY',
    });
    const listed = await listWebhookDeliveries(s.app, ADMIN, { status: null });
    expect(listed.ok && listed.page.totalCount).toBe(0);
  });
});

describe('revokeGrant', () => {
  it("answers another user's grant as unknown, revokes the owner's, and again returns it as first revoked", async () => {
    const before = await s.snapshot();
    for (const grantId of [grant.id, 'grt_unknown']) {
      expect(await revokeGrant(s.app, BOB, { grantId })).toEqual({
        ok: false,
        code: 'NOT_FOUND',
        of: 'grant',
        field: 'grantId',
      });
    }
    expect(await s.snapshot()).toEqual(before);
    const revoked = await revokeGrant(s.app, ALICE, { grantId: grant.id });
    if (!revoked.ok) throw new Error('refused');
    expect(revoked.grant.revokedAt).not.toBeNull();
    expect(await revokeGrant(s.app, ALICE, { grantId: grant.id })).toEqual(revoked);
  });
});
