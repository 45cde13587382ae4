// Caller mistakes: INVALID_CONTENT with the field at fault and no change; NOT_FOUND for unknown or malformed ids;
// null from queries for ids that do not exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../support/harness.js';
import { AGENT_ID, call, callStep, startScenario, textStep, type Scenario } from '../support/scenario.js';

let s: Scenario;
let turnId: string;
let threadId: string;
let elicitationId: string;

beforeAll(async () => {
  s = await startScenario({
    tools: [{ name: 'edit_note' }],
    script: [callStep(call('edit_note', { id: 'n1' })), textStep('done')],
  });
  const { turn, thread } = await s.start('edit n1');
  expect(turn.status).toBe('PAUSED');
  turnId = turn.id;
  threadId = thread.id;
  elicitationId = turn.pendingElicitations[0].id;
});
afterAll(async () => {
  await s.close();
});

async function expectUnchanged() {
  const turn = await s.turn(turnId);
  expect(turn.status).toBe('PAUSED');
  expect(turn.elicitations.map((e: any) => [e.status, e.response])).toEqual([['PENDING', null]]);
  expect(turn.messages.map((m: any) => m.role)).toEqual(['USER', 'ASSISTANT']);
  expect(s.tools.count('edit_note')).toBe(0);
  expect(s.model.requests).toHaveLength(1);
  expect(dataOf(await s.h.gql('{ pendingElicitations { totalCount } }')).pendingElicitations.totalCount).toBe(1);
}

describe('INVALID_CONTENT', () => {
  it.each([
    ['an unknown property', 'ACCEPT', { instructions: 'ok', force: true }, ['input', 'content', 'force']],
    ['a property of the wrong type', 'ACCEPT', { instructions: 42 }, ['input', 'content', 'instructions']],
    ['a nested object', 'DECLINE', { instructions: { text: 'no' } }, ['input', 'content', 'instructions']],
    ['a string instead of an object', 'ACCEPT', 'yes please', ['input', 'content']],
    ['an array instead of an object', 'DECLINE', [{ instructions: 'x' }], ['input', 'content']],
    ['a number instead of an object', 'ACCEPT', 1, ['input', 'content']],
    ['content with CANCEL', 'CANCEL', { instructions: 'stop' }, ['input', 'content']],
    ['empty content with CANCEL', 'CANCEL', {}, ['input', 'content']],
    // Not text: PostgreSQL could not store it, so no backend takes it.
    ['a NUL character in a string', 'DECLINE', { instructions: 'no\u0000' }, ['input', 'content', 'instructions']],
    ['an unpaired surrogate in a string', 'DECLINE', { instructions: '\udffd' }, ['input', 'content', 'instructions']],
  ])('%s: names the field, and nothing changes', async (_label, action, content, field) => {
    const result = await s.resolve(elicitationId, action as 'ACCEPT', content);
    expect(result.elicitation).toBeNull();
    expect(result.turn).toBeNull();
    expect(result.userErrors).toHaveLength(1);
    expect(result.userErrors[0]).toMatchObject({ code: 'INVALID_CONTENT', field });
    expect(result.userErrors[0].message).toBeTruthy();
    await expectUnchanged();
  });

  it('a message that is not text (a NUL character, an unpaired surrogate): INVALID_INPUT naming it, no turn', async () => {
    for (const message of ['delete\u0000 all', 'hi \ud800']) {
      const { startTurn } = dataOf(
        await s.h.gql(
          'mutation($input: StartTurnInput!) { startTurn(input: $input) { turn { id } userErrors { code field message } } }',
          { input: { agentId: AGENT_ID, message, threadId } },
        ),
      );
      expect(startTurn.turn).toBeNull();
      expect(startTurn.userErrors).toEqual([
        expect.objectContaining({
          code: 'INVALID_INPUT',
          field: ['input', 'message'],
          message: expect.stringMatching(/NUL/),
        }),
      ]);
    }
    await expectUnchanged();
  });

  it('content larger than the limit (a size limit: INVALID_INPUT, issue 5)', async () => {
    const result = await s.resolve(elicitationId, 'ACCEPT', { instructions: 'x'.repeat(20_000) });
    expect(result.userErrors).toHaveLength(1);
    expect(result.userErrors[0]).toMatchObject({ code: 'INVALID_INPUT', field: ['input', 'content'] });
    await expectUnchanged();
  });
});

describe('NOT_FOUND', () => {
  it.each([
    'elc_0000000000000000000000000000dead',
    'elc_',
    'not-an-id',
    '',
    '💥',
    'trn_0123456789abcdef0123456789abcdef',
  ])('resolveElicitation(%j)', async (id) => {
    const result = await s.resolve(id, 'ACCEPT');
    expect(result.elicitation).toBeNull();
    expect(result.userErrors).toEqual([
      expect.objectContaining({ code: 'NOT_FOUND', field: ['input', 'elicitationId'] }),
    ]);
    await expectUnchanged();
  });

  it.each([
    [
      'an unknown thread',
      { agentId: AGENT_ID, threadId: 'thr_doesnotexist', message: 'hi' },
      'NOT_FOUND',
      ['input', 'threadId'],
    ],
    [
      'a malformed thread id',
      { agentId: AGENT_ID, threadId: '???', message: 'hi' },
      'NOT_FOUND',
      ['input', 'threadId'],
    ],
    // Empty is an id that no thread has, not "no thread": a new thread would quietly drop the conversation.
    ['an empty thread id', { agentId: AGENT_ID, threadId: '', message: 'hi' }, 'NOT_FOUND', ['input', 'threadId']],
    ['an unknown agent', { agentId: 'nobody', message: 'hi' }, 'NOT_FOUND', ['input', 'agentId']],
    ['an empty message', { agentId: AGENT_ID, message: '   ' }, 'INVALID_INPUT', ['input', 'message']],
  ])('startTurn with %s', async (_label, input, code, field) => {
    const threadsBefore = dataOf(await s.h.gql('{ threads { edges { node { id } } } }')).threads.edges.length;
    const result = dataOf(
      await s.h.gql(
        `mutation($input: StartTurnInput!) { startTurn(input: $input) { turn { id } thread { id } userErrors { code field } } }`,
        { input },
      ),
    ).startTurn;
    expect(result.turn).toBeNull();
    expect(result.thread).toBeNull();
    expect(result.userErrors).toEqual([{ code, field }]);
    expect(dataOf(await s.h.gql('{ threads { edges { node { id } } } }')).threads.edges.length).toBe(threadsBefore);
    await expectUnchanged();
  });
});

describe('filters by an empty id match nothing (not "no filter")', () => {
  it.each([
    ['pendingElicitations(threadId: "")', '{ pendingElicitations(threadId: "") { totalCount } }'],
    ['pendingElicitations(agentId: "")', '{ pendingElicitations(agentId: "") { totalCount } }'],
    ['elicitations(threadId: "")', '{ elicitations(threadId: "") { totalCount } }'],
    ['threads(agentId: "")', '{ threads(agentId: "") { edges { node { id } } } }'],
  ])('%s', async (_label, query) => {
    const data = dataOf(await s.h.gql(query)) as Record<string, any>;
    const [result] = Object.values(data);
    if ('totalCount' in result) expect(result.totalCount).toBe(0);
    else expect(result.edges).toEqual([]);
    // The same query without the filter finds this file's paused turn: the empty filter is what empties it.
    const unfiltered = dataOf(await s.h.gql(query.replace(/\((agent|thread)Id: ""\)/, ''))) as Record<string, any>;
    const [all] = Object.values(unfiltered);
    if ('totalCount' in all) expect(all.totalCount).toBeGreaterThan(0);
    else expect(all.edges.length).toBeGreaterThan(0);
  });
});

describe('queries for ids that do not exist', () => {
  const ids = ['thr_nope', 'trn_nope', 'elc_nope', 'nope', '', '../../etc/passwd'];
  it.each(ids)('thread / turn / elicitation / agent / node(%j) are null', async (id) => {
    const data = dataOf(
      await s.h.gql(
        `query($id: ID!) {
      thread(id: $id) { id } turn(id: $id) { id } elicitation(id: $id) { id } agent(id: $id) { id } node(id: $id) { id }
    }`,
        { id },
      ),
    );
    expect(data).toEqual({ thread: null, turn: null, elicitation: null, agent: null, node: null });
  });

  it('the real ids resolve, through their own query and node()', async () => {
    const data = dataOf(
      await s.h.gql(
        `query($t: ID!, $r: ID!, $e: ID!, $a: ID!) {
      thread(id: $t) { id } turn(id: $r) { id } elicitation(id: $e) { id } agent(id: $a) { id }
      nt: node(id: $t) { __typename id } nr: node(id: $r) { __typename id } ne: node(id: $e) { __typename id } na: node(id: $a) { __typename id }
    }`,
        { t: threadId, r: turnId, e: elicitationId, a: AGENT_ID },
      ),
    );
    expect(data).toEqual({
      thread: { id: threadId },
      turn: { id: turnId },
      elicitation: { id: elicitationId },
      agent: { id: AGENT_ID },
      nt: { __typename: 'Thread', id: threadId },
      nr: { __typename: 'Turn', id: turnId },
      ne: { __typename: 'Elicitation', id: elicitationId },
      na: { __typename: 'Agent', id: AGENT_ID },
    });
  });
});
