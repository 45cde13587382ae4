// The Slack card alone (src/notifiers/slack/card.ts): what a reviewer reads and which buttons they get, from the
// request as stored. Shapes are checked against Block Kit's limits by the stand-in's checker.
import { describe, expect, it } from 'vitest';
import type { ElicitationRecord } from '../../src/domain/records.js';
import { CARD_ARGUMENTS_MAX, declineModal, slackCard, type CardView } from '../../src/notifiers/slack/card.js';
import { slackSignature, verifySlackSignature } from '../../src/notifiers/slack/signature.js';
import { blocksProblem } from '../support/slack-stand-in.js';

function request(overrides: Partial<ElicitationRecord> = {}): ElicitationRecord {
  return {
    id: 'elc_1',
    turnId: 'trn_1',
    threadId: 'thr_1',
    agentId: 'ops',
    ownerId: 'alice',
    toolCallId: 'call_1',
    status: 'PENDING',
    request: {
      message: 'Allow the agent to run "Deploy"? Deploys <the> service & more.',
      requestedSchema: { type: 'object', properties: { instructions: { type: 'string' } } },
    },
    toolCall: { name: 'deploy', toolId: 't:deploy', arguments: { target: 'prod' }, annotations: { title: 'Deploy' } },
    response: null,
    grantId: null,
    resolvedBy: null,
    resolvedByIdentity: null,
    resolvedAt: null,
    withdrawn: null,
    createdAt: '2026-12-06T10:00:00.000Z',
    expiresAt: '2026-12-06T11:00:00.000Z',
    approval: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED', escalation: null },
    escalatedAt: null,
    callerWaitingUntil: null,
    ...overrides,
  } as ElicitationRecord;
}

function view(overrides: Partial<CardView> = {}): CardView {
  return {
    elicitation: request(),
    agent: { id: 'ops', name: 'Ops agent', isGateway: false },
    answers: [],
    receipt: null,
    canRemember: false,
    canEdit: false,
    inboxUrl: 'https://toolgate.example.com/inbox',
    ...overrides,
  };
}

const text = (card: { blocks: unknown[] }) => JSON.stringify(card.blocks);
const buttons = (card: { blocks: any[] }) =>
  card.blocks.filter((b) => b.type === 'actions').flatMap((b) => b.elements.map((e: any) => e.action_id));

describe('the Slack card', () => {
  it('shows the trusted question escaped, the policy, and only Approve and Decline when nothing more is allowed', () => {
    const card = slackCard(view());
    expect(blocksProblem(card.blocks)).toBeNull();
    expect(text(card)).toContain('Deploys &lt;the&gt; service &amp; more.');
    expect(text(card)).toContain('`reviewer` (not the requester: four eyes)');
    expect(text(card)).toContain('0 of 2 approvals');
    expect(buttons(card)).toEqual(['toolgate_approve', 'toolgate_decline']);
  });

  it('offers Always allow and Edit only when the request allows them', () => {
    const card = slackCard(view({ canRemember: true, canEdit: true }));
    expect(buttons(card)).toEqual([
      'toolgate_approve',
      'toolgate_decline',
      'toolgate_remember_thread',
      'toolgate_remember_agent',
      'toolgate_edit',
    ]);
    // No public URL known: no link to edit with.
    expect(buttons(slackCard(view({ canEdit: true, inboxUrl: null })))).not.toContain('toolgate_edit');
  });

  it('marks hidden characters and cuts long arguments with a link to the inbox', () => {
    const long = 'x'.repeat(CARD_ARGUMENTS_MAX * 2);
    const card = slackCard(
      view({ elicitation: request({ toolCall: { ...request().toolCall, arguments: { a: 'ad\u200Bmin', long } } }) }),
    );
    expect(blocksProblem(card.blocks)).toBeNull();
    const preformatted = (card.blocks as any[]).find((b) => b.type === 'rich_text').elements[0].elements[0].text;
    expect(preformatted).toContain('ad\\u200Bmin');
    expect(preformatted.length).toBe(CARD_ARGUMENTS_MAX);
    expect(text(card)).toContain(
      'more characters: <https://toolgate.example.com/inbox|see all arguments in the inbox>',
    );
    expect(text(card)).toContain('1 hidden character written as visible escapes: `\\\\u200B` (U+200B)');
  });

  it('after the answer: who, the receipt, the instructions, and no buttons', () => {
    const accepted = slackCard(
      view({
        elicitation: request({ status: 'ACCEPTED', resolvedBy: 'carol', resolvedAt: '2026-12-06T10:05:00.000Z' }),
        receipt: { seq: 42, hash: 'ab'.repeat(32) },
      }),
    );
    expect(text(accepted)).toContain('Approved by *carol*');
    expect(text(accepted)).toContain('*Receipt:* #42 `abababababababab`');
    expect(buttons(accepted)).toEqual([]);
    const declined = slackCard(
      view({
        elicitation: request({
          status: 'DECLINED',
          resolvedBy: 'bob',
          response: { action: 'DECLINE', content: { instructions: 'not <today>' } },
        }),
      }),
    );
    expect(text(declined)).toContain('*Instructions:* not &lt;today&gt;');
    expect(text(slackCard(view({ elicitation: request({ status: 'EXPIRED' }) })))).toContain(':hourglass: Expired');
  });

  it('the decline modal names the request and takes optional instructions', () => {
    const modal = declineModal('elc_1', 'Deploy') as any;
    expect(modal).toMatchObject({ type: 'modal', private_metadata: 'elc_1', callback_id: 'toolgate_decline_modal' });
    expect(blocksProblem(modal.blocks)).toBeNull();
  });
});

describe("Slack's request signature", () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body = Buffer.from('payload=%7B%22type%22%3A%22block_actions%22%7D');
  const now = 1_765_000_000_000;
  const ts = String(now / 1000);

  it('accepts its own signature within five minutes, and nothing else', () => {
    const signature = slackSignature(secret, ts, body);
    expect(signature).toMatch(/^v0=[0-9a-f]{64}$/);
    expect(verifySlackSignature(secret, { timestamp: ts, signature }, body, now + 299_000)).toMatchObject({ ok: true });
    expect(verifySlackSignature(secret, { timestamp: ts, signature }, body, now + 301_000)).toEqual({
      ok: false,
      reason: 'STALE',
    });
    expect(verifySlackSignature('other', { timestamp: ts, signature }, body, now)).toEqual({
      ok: false,
      reason: 'MISMATCH',
    });
    expect(verifySlackSignature(secret, { timestamp: ts, signature: 'v0=00' }, body, now)).toEqual({
      ok: false,
      reason: 'MISMATCH',
    });
    expect(verifySlackSignature(secret, { timestamp: undefined, signature }, body, now)).toEqual({
      ok: false,
      reason: 'MISSING',
    });
  });
});
