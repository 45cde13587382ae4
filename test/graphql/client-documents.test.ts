// `toolgate/client`'s typed documents (src/client/, docs/client.md) sent as they are to the real server, over HTTP and
// graphql-ws: each one passes the server's validation and limits (depth, cost, with full pages) and answers without
// errors, for the requester (MINE) and for an approver of another user's request (TO_ANSWER: none of their documents
// reads the requester's turn, which would be FORBIDDEN).
import { print } from 'graphql';
import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentsDocument,
  ElicitationDocument,
  ElicitationRequestedDocument,
  ElicitationRequestedToAnswerDocument,
  ElicitationUpdatedDocument,
  PendingElicitationsDocument,
  PendingElicitationsToAnswerDocument,
  ResolveElicitationDocument,
  StartTurnDocument,
  TurnDocument,
  TurnEventsDocument,
  TurnUpdatedDocument,
  ViewerDocument,
  type TypedDocumentNode,
} from '../../src/client/index.js';
import { ScriptedModel } from '../../src/models/scripted.js';
import { callsWhatIsNamed } from '../support/app.js';
import {
  APPROVER_AGENT,
  APPROVER_TOOLS,
  approverAuth,
  as,
  authorizationOf,
  type ApproverUser,
} from '../support/approvers.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { connectWs, subscribeWs, type Received } from '../support/live.js';
import { AGENT_ID, MODEL_ID, SOURCE_ID, testConfig } from '../support/scenario.js';
import { CountingToolSource } from '../support/tools.js';

let h: Harness;
const clients: Client[] = [];
const open: Received<unknown>[] = [];

beforeAll(async () => {
  h = await startHarness({
    config: { ...testConfig(APPROVER_AGENT), auth: approverAuth },
    models: { [MODEL_ID]: new ScriptedModel([callsWhatIsNamed()]) },
    toolSources: [new CountingToolSource(SOURCE_ID, APPROVER_TOOLS)],
  });
});
afterEach(async () => {
  for (const events of open.splice(0)) events.stop();
  await Promise.all(clients.splice(0).map((client) => client.dispose()));
});
afterAll(() => h?.close());

/** A query or mutation over HTTP POST as `user`: its data, typed by the document; GraphQL errors fail the test. */
async function request<R, V>(user: ApproverUser, document: TypedDocumentNode<R, V>, variables: V): Promise<R> {
  return dataOf<R>(await h.gql(print(document), variables as Record<string, unknown>, as(user)));
}

/** A subscription over graphql-ws as `user`. */
function subscribe<R, V>(user: ApproverUser, document: TypedDocumentNode<R, V>, variables: V) {
  const client = connectWs(h.url, authorizationOf(user));
  clients.push(client);
  const events = subscribeWs<R>(client, print(document), variables as Record<string, unknown>);
  open.push(events);
  return events;
}

/** The first event that matches, once none so far carried errors. */
async function waitFor<R>(events: Received<{ data?: R; errors?: unknown[] }>, match: (data: R) => boolean) {
  const event = await events.waitFor(
    (event) => Boolean(event.errors) || (event.data !== undefined && match(event.data)),
  );
  expect(event.errors).toBeUndefined();
  return event.data!;
}

async function startTurn(user: ApproverUser, message: string) {
  const { startTurn } = await request(user, StartTurnDocument, { input: { agentId: AGENT_ID, message } });
  expect(startTurn.userErrors).toEqual([]);
  expect(startTurn.turn).toMatchObject({ status: 'PAUSED', thread: { id: startTurn.thread!.id } });
  expect(startTurn.turn!.pendingElicitations).toHaveLength(1);
  return { turn: startTurn.turn!, elicitationId: startTurn.turn!.pendingElicitations[0]!.id };
}

describe('toolgate/client: the requester’s documents', { timeout: 30_000 }, () => {
  it('viewer, agents, startTurn, the pending request by query and subscription, resolve, the turn followed to COMPLETED', async () => {
    expect((await request('alice', ViewerDocument, {})).viewer).toEqual({ id: 'alice', isAdmin: false, roles: [] });
    expect((await request('alice', AgentsDocument, {})).agents.map((agent) => agent.id)).toEqual([AGENT_ID]);

    const requested = subscribe('alice', ElicitationRequestedDocument, { includePending: true });
    // t:wipe has no approvers policy: the requester alone answers.
    const { turn, elicitationId } = await startTurn('alice', 't_wipe');
    const delivered = await waitFor(requested, (data) => data.elicitationRequested.id === elicitationId);
    expect(delivered.elicitationRequested).toMatchObject({
      status: 'PENDING',
      requestedBy: 'alice',
      turn: { id: turn.id, status: 'PAUSED', thread: { id: turn.thread.id }, userMessage: { text: 't_wipe' } },
      toolCall: { toolId: 't:wipe', argumentsDisplay: { text: '{}', hiddenCharacters: [] } },
    });

    // A full page, as a polling client asks for it.
    const { pendingElicitations } = await request('alice', PendingElicitationsDocument, { first: 50 });
    expect(pendingElicitations.edges.map((edge) => [edge.node.id, edge.node.turn.id])).toEqual([
      [elicitationId, turn.id],
    ]);
    expect((await request('alice', ElicitationDocument, { id: elicitationId })).elicitation).toMatchObject({
      id: elicitationId,
      status: 'PENDING',
      canEdit: expect.any(Boolean),
    });

    const updated = subscribe('alice', TurnUpdatedDocument, { turnId: turn.id });
    const events = subscribe('alice', TurnEventsDocument, { turnId: turn.id });
    await waitFor(updated, (data) => data.turnUpdated.status === 'PAUSED');
    await waitFor(events, (data) => data.turnEvents.__typename === 'Turn' && data.turnEvents.status === 'PAUSED');

    const { resolveElicitation } = await request('alice', ResolveElicitationDocument, {
      input: { elicitationId, action: 'ACCEPT' },
    });
    expect(resolveElicitation).toMatchObject({
      userErrors: [],
      elicitation: { id: elicitationId, status: 'ACCEPTED', resolvedBy: 'alice', response: { action: 'ACCEPT' } },
      turn: { id: turn.id, status: 'COMPLETED' },
    });
    await waitFor(updated, (data) => data.turnUpdated.status === 'COMPLETED');
    await waitFor(events, (data) => data.turnEvents.__typename === 'Turn' && data.turnEvents.status === 'COMPLETED');

    const read = (await request('alice', TurnDocument, { id: turn.id })).turn!;
    expect(read).toMatchObject({ status: 'COMPLETED', text: 'done', pendingElicitations: [] });
    expect(read.messages.map((message) => message.role)).toEqual(['USER', 'ASSISTANT', 'TOOL', 'ASSISTANT']);
    expect(read.elicitations).toMatchObject([{ id: elicitationId, status: 'ACCEPTED', resolution: 'ANSWERED' }]);
  });
});

describe('toolgate/client: an approver’s documents', { timeout: 30_000 }, () => {
  it('TO_ANSWER by subscription and query, the request read and followed, the answer without the turn', async () => {
    // bob is a reviewer; t:restart asks one of reviewer or ops, never its requester.
    const toAnswer = subscribe('bob', ElicitationRequestedToAnswerDocument, { includePending: true });
    const { turn, elicitationId } = await startTurn('alice', 't_restart');
    const delivered = await waitFor(toAnswer, (data) => data.elicitationRequested.id === elicitationId);
    expect(delivered.elicitationRequested).toMatchObject({
      requestedBy: 'alice',
      agent: { id: AGENT_ID },
      approval: { roles: ['reviewer', 'ops'], required: 1, requester: 'EXCLUDED', escalation: { roles: ['oncall'] } },
    });

    const { pendingElicitations } = await request('bob', PendingElicitationsToAnswerDocument, { first: 50 });
    expect(pendingElicitations.edges.map((edge) => edge.node.id)).toEqual([elicitationId]);
    expect((await request('bob', ElicitationDocument, { id: elicitationId })).elicitation?.status).toBe('PENDING');
    // Not alice's own to answer: her MINE list has it, her TO_ANSWER list does not.
    expect((await request('alice', PendingElicitationsToAnswerDocument, {})).pendingElicitations.edges).toEqual([]);

    const updated = subscribe('bob', ElicitationUpdatedDocument, { elicitationId });
    await waitFor(updated, (data) => data.elicitationUpdated.status === 'PENDING');
    const { resolveElicitation } = await request('bob', ResolveElicitationDocument, {
      input: { elicitationId, action: 'ACCEPT' },
    });
    // The turn is the requester's: an approver's answer comes back without it.
    expect(resolveElicitation).toMatchObject({ userErrors: [], elicitation: { status: 'ACCEPTED' }, turn: null });
    const answered = await waitFor(updated, (data) => data.elicitationUpdated.status === 'ACCEPTED');
    expect(answered.elicitationUpdated.answers).toMatchObject([{ approver: 'bob', action: 'ACCEPT', counts: true }]);

    const followed = subscribe('alice', TurnUpdatedDocument, { turnId: turn.id });
    await waitFor(followed, (data) => data.turnUpdated.status === 'COMPLETED');
  });
});
