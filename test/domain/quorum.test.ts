// Answers under an approvers policy (src/domain/quorum.ts): what the answers so far decide, and whether an approver's
// answer may be recorded.
import { describe, expect, it } from 'vitest';
import { decideApproverAnswer, tallyAnswers } from '../../src/domain/quorum.js';
import type { ApproverAnswer, ElicitationAction, JsonObject, RememberChoice } from '../../src/domain/records.js';

const REQUESTER = 'ann';
let position = 0;
const answer = (
  approverId: string,
  action: ElicitationAction,
  more: { content?: JsonObject | null; arguments?: JsonObject | null; remember?: RememberChoice | null } = {},
): ApproverAnswer => ({
  elicitationId: 'elc-1',
  approverId,
  position: ++position,
  action,
  content: more.content ?? null,
  arguments: more.arguments ?? null,
  remember: more.remember ?? null,
  createdAt: '2026-01-01T00:00:00.000Z',
  identity: null,
});
const TWO = { required: 2, requester: 'ALSO' as const };
const TWO_FOUR_EYES = { required: 2, requester: 'EXCLUDED' as const };

describe('tallyAnswers', () => {
  it('is pending until M distinct approvers accepted, then ACCEPT by the one who completed it', () => {
    expect(tallyAnswers(TWO, [], REQUESTER)).toEqual({ kind: 'pending', proposal: null, accepted: [] });
    const bob = answer('bob', 'ACCEPT');
    expect(tallyAnswers(TWO, [bob], REQUESTER)).toEqual({ kind: 'pending', proposal: null, accepted: ['bob'] });
    const carol = answer('carol', 'ACCEPT', { content: { instructions: 'go ahead' } });
    expect(tallyAnswers(TWO, [bob, carol], REQUESTER)).toEqual({
      kind: 'decided',
      by: 'carol',
      answer: { action: 'ACCEPT', content: { instructions: 'go ahead' } },
    });
  });

  it('a DECLINE decides at once, with its instructions, however many accepted', () => {
    const tally = tallyAnswers(
      TWO,
      [answer('bob', 'ACCEPT'), answer('carol', 'DECLINE', { content: { instructions: 'not on Fridays' } })],
      REQUESTER,
    );
    expect(tally).toEqual({
      kind: 'decided',
      by: 'carol',
      answer: { action: 'DECLINE', content: { instructions: 'not on Fridays' } },
    });
  });

  it("a CANCEL decides at once (only the requester's or an administrator's is ever recorded)", () => {
    expect(tallyAnswers(TWO, [answer('bob', 'ACCEPT'), answer(REQUESTER, 'CANCEL')], REQUESTER)).toEqual({
      kind: 'decided',
      by: REQUESTER,
      answer: { action: 'CANCEL', content: null },
    });
  });

  it('under ALSO the requester counts as one approver; under EXCLUDED their ACCEPT and DECLINE never count', () => {
    const answers = [answer(REQUESTER, 'ACCEPT'), answer('bob', 'ACCEPT')];
    expect(tallyAnswers(TWO, answers, REQUESTER).kind).toBe('decided');
    expect(tallyAnswers(TWO_FOUR_EYES, answers, REQUESTER)).toEqual({
      kind: 'pending',
      proposal: null,
      accepted: ['bob'],
    });
    expect(tallyAnswers(TWO_FOUR_EYES, [answer(REQUESTER, 'DECLINE')], REQUESTER).kind).toBe('pending');
  });

  it('an edit restarts the count: only ACCEPTs of the arguments proposed last count, the editor as one', () => {
    const plain = answer('bob', 'ACCEPT');
    const edit = answer('carol', 'ACCEPT', { arguments: { ids: [3] } });
    expect(tallyAnswers(TWO, [plain, edit], REQUESTER)).toEqual({
      kind: 'pending',
      proposal: { ids: [3] },
      accepted: ['carol'],
    });
    // Key order aside, the same arguments: the approver approves the edited proposal anew.
    const again = answer('dave', 'ACCEPT', { arguments: { ids: [3] } });
    expect(tallyAnswers(TWO, [plain, edit, again], REQUESTER)).toEqual({
      kind: 'decided',
      by: 'dave',
      answer: { action: 'ACCEPT', content: null, arguments: { ids: [3] } },
    });
    // Another edit restarts it again; bob's approval of the model's arguments stays outdated.
    const other = answer('erin', 'ACCEPT', { arguments: { ids: [4] } });
    expect(tallyAnswers(TWO, [plain, edit, other], REQUESTER)).toMatchObject({ kind: 'pending', accepted: ['erin'] });
  });

  it('remembers only if every counted ACCEPT asked to: the narrowest scope, the shortest ttl', () => {
    const thread = answer('bob', 'ACCEPT', { remember: { scope: 'THREAD', ttlSeconds: 3600 } });
    const agent = answer('carol', 'ACCEPT', { remember: { scope: 'AGENT', ttlSeconds: 600 } });
    expect(tallyAnswers(TWO, [thread, agent], REQUESTER)).toEqual({
      kind: 'decided',
      by: 'carol',
      answer: { action: 'ACCEPT', content: null, remember: { scope: 'THREAD', ttlSeconds: 600 } },
    });
    const agentOnly = answer('dave', 'ACCEPT', { remember: { scope: 'AGENT', ttlSeconds: 60 } });
    expect(tallyAnswers(TWO, [agent, agentOnly], REQUESTER)).toMatchObject({
      answer: { remember: { scope: 'AGENT', ttlSeconds: 60 } },
    });
    const forgetful = answer('erin', 'ACCEPT');
    const decided = tallyAnswers(TWO, [thread, forgetful], REQUESTER);
    expect(decided).toEqual({ kind: 'decided', by: 'erin', answer: { action: 'ACCEPT', content: null } });
    // An outdated ACCEPT's wish is not asked: it does not count.
    const edit = answer('frank', 'ACCEPT', { arguments: { a: 1 }, remember: { scope: 'AGENT', ttlSeconds: 30 } });
    const second = answer('gina', 'ACCEPT', { arguments: { a: 1 }, remember: { scope: 'AGENT', ttlSeconds: 90 } });
    expect(tallyAnswers(TWO, [forgetful, edit, second], REQUESTER)).toMatchObject({
      answer: { arguments: { a: 1 }, remember: { scope: 'AGENT', ttlSeconds: 30 } },
    });
  });
});

describe('decideApproverAnswer', () => {
  const pending = { status: 'PENDING' as const, expiresAt: '2026-01-01T01:00:00.000Z' };
  const NOW = '2026-01-01T00:10:00.000Z';

  it('records a first answer; the same again is a duplicate, another one already_resolved', () => {
    expect(decideApproverAnswer(pending, [], 'bob', { action: 'ACCEPT', content: null }, NOW)).toEqual({
      kind: 'record',
    });
    const answers = [answer('bob', 'ACCEPT', { arguments: { b: 1, a: 2 } })];
    const same = { action: 'ACCEPT' as const, content: null, arguments: { a: 2, b: 1 } };
    expect(decideApproverAnswer(pending, answers, 'bob', same, NOW)).toEqual({ kind: 'duplicate' });
    expect(decideApproverAnswer(pending, answers, 'bob', { action: 'DECLINE', content: null }, NOW)).toEqual({
      kind: 'already_resolved',
    });
  });

  it('lets an approver whose ACCEPT an edit outdated answer anew; a CANCEL always goes through', () => {
    const answers = [answer('bob', 'ACCEPT'), answer('carol', 'ACCEPT', { arguments: { x: 1 } })];
    const anew = { action: 'ACCEPT' as const, content: null, arguments: { x: 1 } };
    expect(decideApproverAnswer(pending, answers, 'bob', anew, NOW)).toEqual({ kind: 'record' });
    expect(decideApproverAnswer(pending, answers, 'carol', { action: 'DECLINE', content: null }, NOW)).toEqual({
      kind: 'already_resolved',
    });
    expect(decideApproverAnswer(pending, answers, 'carol', { action: 'CANCEL', content: null }, NOW)).toEqual({
      kind: 'record',
    });
  });

  it('once decided: the approver gets their recorded result again, anything else is already_resolved', () => {
    const decided = { status: 'ACCEPTED' as const, expiresAt: pending.expiresAt };
    const answers = [answer('bob', 'ACCEPT'), answer('carol', 'ACCEPT')];
    expect(decideApproverAnswer(decided, answers, 'bob', { action: 'ACCEPT', content: null }, NOW)).toEqual({
      kind: 'duplicate',
    });
    expect(decideApproverAnswer(decided, answers, 'dave', { action: 'ACCEPT', content: null }, NOW)).toEqual({
      kind: 'already_resolved',
    });
  });

  it('never fails open: at or after the expiry nothing is recorded, also for an approver who answered before', () => {
    const answers = [answer('bob', 'ACCEPT')];
    const late = pending.expiresAt;
    expect(decideApproverAnswer(pending, answers, 'carol', { action: 'ACCEPT', content: null }, late)).toEqual({
      kind: 'expired',
      expireTurn: true,
    });
    expect(decideApproverAnswer(pending, answers, 'bob', { action: 'ACCEPT', content: null }, late)).toEqual({
      kind: 'expired',
      expireTurn: true,
    });
    const expired = { status: 'EXPIRED' as const, expiresAt: late };
    expect(decideApproverAnswer(expired, answers, 'bob', { action: 'ACCEPT', content: null }, NOW)).toEqual({
      kind: 'expired',
      expireTurn: false,
    });
  });
});
