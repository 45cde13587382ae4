// answerElicitation, called directly (no GraphQL): whose request may be answered, and which answers are refused
// before anything is recorded: an edit the agent does not allow or the tool's schema refuses, a remember the gating
// refuses, content that does not match the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerElicitation, type AnswerElicitationInput } from '../../src/app/answer-elicitation.js';
import { startTurn } from '../../src/app/start-turn.js';
import type { ElicitationRecord } from '../../src/domain/records.js';
import type { Viewer } from '../../src/app/viewer.js';
import { ALICE, BOB, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { AGENT_ID } from '../support/scenario.js';

let s: AppScenario;

beforeAll(async () => {
  s = await startApp({
    tools: [
      {
        name: 'rw',
        inputSchema: {
          type: 'object',
          properties: { id: { type: 'string' } },
          required: ['id'],
          additionalProperties: false,
        },
      },
      { name: 'locked' },
      { name: 'always' },
    ],
    script: [callsWhatIsNamed({ rw: { id: 'a' } })],
    agent: { toolConfirmation: { 't:locked': { allowEdit: false }, 't:always': 'ALWAYS' } },
  });
});
afterAll(() => s?.close());

/** Starts a turn of `viewer` that calls the tools `message` names; returns its confirmation requests. */
async function paused(viewer: Viewer, message: string): Promise<ElicitationRecord[]> {
  const outcome = await startTurn(s.app, viewer, { agentId: AGENT_ID, threadId: null, message, background: false });
  if (!outcome.ok || !outcome.pausedWith) throw new Error(`did not pause: ${JSON.stringify(outcome)}`);
  return outcome.pausedWith;
}

const answer = (
  elicitation: ElicitationRecord,
  rest: Partial<AnswerElicitationInput> = {},
): AnswerElicitationInput => ({
  elicitationId: elicitation.id,
  action: 'ACCEPT',
  ...rest,
});

/** Refused, and nothing stored, nothing run. */
async function expectRefused(viewer: Viewer, input: AnswerElicitationInput, refusal: object): Promise<void> {
  const before = await s.snapshot();
  const runs = JSON.stringify([...s.tools.runs]);
  expect(await answerElicitation(s.app, viewer, input)).toEqual({ ok: false, ...refusal });
  expect(await s.snapshot()).toEqual(before);
  expect(JSON.stringify([...s.tools.runs])).toBe(runs);
}

describe('answerElicitation', () => {
  it("runs the viewer's accepted call with the edited arguments, and resumes the turn", async () => {
    const [request] = await paused(ALICE, 't_rw');
    const outcome = await answerElicitation(s.app, ALICE, answer(request!, { arguments: { id: 'b' } }));
    if (!outcome.ok) throw new Error(`refused: ${outcome.code}`);
    expect(outcome.elicitation).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'alice' });
    expect(outcome.turn).toMatchObject({ status: 'COMPLETED', text: 'done' });
    expect(s.tools.runs.get('rw')).toEqual([{ id: 'b' }]);
  });

  it("answers another user's request as it answers an unknown one", async () => {
    const [request] = await paused(ALICE, 't_rw');
    const refusal = { code: 'NOT_FOUND', of: 'elicitation', field: 'elicitationId' };
    await expectRefused(BOB, answer(request!), refusal);
    await expectRefused(ALICE, { elicitationId: 'elc_unknown', action: 'ACCEPT' }, refusal);
  });

  it("refuses an edit the tool's inputSchema refuses, naming the argument at fault", async () => {
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(ALICE, answer(request!, { arguments: { id: 5 } }), {
      code: 'INVALID_CONTENT',
      field: 'arguments',
      at: ['id'],
      problem: expect.any(String),
    });
    await expectRefused(ALICE, answer(request!, { arguments: { id: 'a', more: true } }), {
      code: 'INVALID_CONTENT',
      field: 'arguments',
      at: expect.any(Array),
      problem: expect.stringContaining('more'),
    });
  });

  it('refuses an edit where the agent turned editing off (FORBIDDEN), and edits and remember without ACCEPT', async () => {
    const [locked] = await paused(ALICE, 't_locked');
    await expectRefused(ALICE, answer(locked!, { arguments: { x: 1 } }), {
      code: 'FORBIDDEN',
      field: 'arguments',
      reason: 'EDIT_OFF',
      toolName: 'locked',
    });
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(ALICE, answer(request!, { action: 'DECLINE', arguments: { id: 'b' } }), {
      code: 'INVALID_INPUT',
      field: 'arguments',
      reason: 'ACCEPT_ONLY',
    });
    await expectRefused(ALICE, answer(request!, { action: 'DECLINE', remember: { scope: 'AGENT', ttlSeconds: 60 } }), {
      code: 'INVALID_INPUT',
      field: 'remember',
      reason: 'ACCEPT_ONLY',
    });
  });

  it('refuses to remember a call that asks every time, and a ttl out of range', async () => {
    const [always] = await paused(ALICE, 't_always');
    await expectRefused(ALICE, answer(always!, { remember: { scope: 'AGENT', ttlSeconds: 60 } }), {
      code: 'INVALID_INPUT',
      field: 'remember',
      reason: 'NOT_REMEMBERABLE',
      toolName: 'always',
    });
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(ALICE, answer(request!, { remember: { scope: 'THREAD', ttlSeconds: 0 } }), {
      code: 'INVALID_INPUT',
      field: 'remember',
      at: ['ttlSeconds'],
      reason: 'OUT_OF_RANGE',
      max: 30 * 24 * 3600,
    });
    const remembered = await answerElicitation(
      s.app,
      ALICE,
      answer(request!, { remember: { scope: 'THREAD', ttlSeconds: 60 } }),
    );
    expect(remembered.ok && remembered.elicitation.grantId).toEqual(expect.stringMatching(/^grt_/));
  });

  it("checks content against the request's schema, and its size before anything else", async () => {
    const [request] = await paused(ALICE, 't_rw');
    await expectRefused(ALICE, answer(request!, { content: { nope: 'x' } }), {
      code: 'INVALID_CONTENT',
      field: 'content',
      at: ['nope'],
      problem: expect.stringContaining('nope'),
    });
    const maxBytes = s.app.limits.maxContentBytes;
    // Too large is the answer for any id, known or not.
    await expectRefused(BOB, answer(request!, { content: { instructions: 'x'.repeat(maxBytes) } }), {
      code: 'INVALID_INPUT',
      field: 'content',
      reason: 'TOO_LARGE',
      maxBytes,
    });
  });

  it('returns the recorded result for the same answer again, and refuses another one (ALREADY_RESOLVED)', async () => {
    const [request] = await paused(ALICE, 't_rw');
    const first = await answerElicitation(s.app, ALICE, answer(request!, { action: 'DECLINE' }));
    expect(first.ok && first.turn?.status).toBe('COMPLETED');
    const again = await answerElicitation(s.app, ALICE, answer(request!, { action: 'DECLINE' }));
    expect(again.ok && again.elicitation.id).toBe(request!.id);
    // An edit of an answered request is not judged: the store says it was answered.
    await expectRefused(ALICE, answer(request!, { arguments: { id: 5 } }), {
      code: 'ALREADY_RESOLVED',
      field: 'elicitationId',
      status: 'DECLINED',
    });
  });
});
