// A document that keeps coming is compiled (graphql-jit) on its 10th run (src/graphql/compiled-execution.ts): what a
// client gets must not change when that happens, for queries and mutations alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, startHarness, TURN_FIELDS, type GraphQLResponse, type Harness } from '../support/harness.js';

const RUNS = 12; // across the 10th

const READ = `query($turnId: ID!, $threadId: ID!, $missing: ID!) {
  viewer { id }
  turn(id: $turnId) { ${TURN_FIELDS} createdAt updatedAt thread { id } }
  node(id: $threadId) { id __typename ... on Thread { turns { id status } } }
  missing: node(id: $missing) { id }
  pendingElicitations(first: 5) { totalCount edges { cursor node { id status createdAt resolvedBy resolution turn { id } } } pageInfo { hasNextPage endCursor } }
  elicitations(status: [PENDING, ACCEPTED]) { totalCount edges { node { id status response { action content } } } }
}`;

describe('compiled execution', () => {
  let h: Harness;
  let turnId: string;
  let threadId: string;
  beforeAll(async () => {
    h = await startHarness();
    const started = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1 and 2' } })).startTurn;
    turnId = started.turn.id;
    threadId = started.thread.id;
  });
  afterAll(async () => { await h.close(); });

  it('a query answers the same on every run, before and after its document is compiled', async () => {
    const variables = { turnId, threadId, missing: 'trn_00000000000000000000000000000000' };
    const answers: GraphQLResponse[] = [];
    for (let run = 0; run < RUNS; run++) answers.push(await h.gql(READ, variables));
    expect(answers[0]!.errors).toBeUndefined();
    expect(dataOf(answers[0]!).turn.pendingElicitations[0].toolCall.arguments).toEqual({ ids: [1, 2] });
    expect(dataOf(answers[0]!).missing).toBeNull();
    for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0]);
  });

  it('a query with invalid variables is refused the same way on every run', async () => {
    const invalid = READ.replace('query(', 'query Invalid('); // a document of its own: its first runs are not compiled
    const answers: GraphQLResponse[] = [];
    for (let run = 0; run < RUNS; run++) answers.push(await h.gql(invalid, { turnId: 5, threadId }));
    expect(answers[0]!.data).toBeUndefined();
    expect(answers[0]!.errors?.length).toBeGreaterThan(0);
    for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0]);
  });

  it('a mutation does the same on every run: each turn pauses, and an ACCEPT completes it', async () => {
    const shapes: { paused: string; arguments: unknown; completed: string; text: string; answer: unknown }[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: `delete entities ${run + 10}` } })).startTurn;
      expect(started.userErrors).toEqual([]);
      const resolved = dataOf(await h.gql(RESOLVE, { input: { elicitationId: started.turn.pendingElicitations[0].id, action: 'ACCEPT' } }))
        .resolveElicitation;
      shapes.push({
        paused: started.turn.status, arguments: started.turn.pendingElicitations[0].toolCall.arguments,
        completed: resolved.turn.status, text: resolved.turn.text, answer: resolved.elicitation.response,
      });
    }
    shapes.forEach((shape, run) => expect(shape).toEqual({
      paused: 'PAUSED', arguments: { ids: [run + 10] }, completed: 'COMPLETED', text: expect.stringContaining(String(run + 10)),
      answer: { action: 'ACCEPT', content: null },
    }));
    expect(new Set(shapes.map((s) => s.text.replace(/\d+/g, 'N'))).size).toBe(1);
  });
});
