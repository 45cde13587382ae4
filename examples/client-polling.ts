// A frontend's round trip with plain fetch and the typed documents of `toolgate/client` (docs/client.md): start a
// turn, poll pendingElicitations until its confirmation request shows, accept it, read the completed turn. Every
// variable and result is typed from the document: `request(StartTurnDocument, …)` returns a StartTurnMutation.
// Start the demo first (`npm start` in a checkout, or `npx toolgate` where the package is installed), then run it
// with `node --import tsx examples/client-polling.ts` (or compiled). TOOLGATE_GRAPHQL_URL (default
// http://127.0.0.1:4000/graphql) and TOOLGATE_TOKEN (a token of the server's "auth" section, if it has one) are read
// here, by the example.
import { print } from 'graphql';
import {
  PendingElicitationsDocument,
  ResolveElicitationDocument,
  StartTurnDocument,
  TurnDocument,
  type TypedDocumentNode,
} from 'toolgate/client';

const url = process.env.TOOLGATE_GRAPHQL_URL || 'http://127.0.0.1:4000/graphql';
const token = process.env.TOOLGATE_TOKEN;

/** One operation over HTTP POST, its result typed by the document; GraphQL errors are thrown. */
async function request<Result, Variables>(
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
): Promise<Result> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ query: print(document), variables }),
  });
  const body = (await response.json()) as { data?: Result; errors?: { message: string }[] };
  if (body.errors?.length || !body.data) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
  return body.data;
}

// In the background: startTurn answers at once with the turn RUNNING, and the pause is found by polling.
const { startTurn } = await request(StartTurnDocument, {
  input: { agentId: 'demo', message: 'delete entities 1', background: true },
});
if (!startTurn.turn || startTurn.userErrors.length > 0) throw new Error(startTurn.userErrors[0]?.message);
const turnId = startTurn.turn.id;
console.log(`turn ${turnId}: ${startTurn.turn.status}`);

// What a polling client calls: the viewer's requests that wait for an answer, here of this turn's thread.
let pending;
for (let tries = 0; !pending; tries++) {
  if (tries === 100) throw new Error('no confirmation request within 10 s');
  const { pendingElicitations } = await request(PendingElicitationsDocument, { threadId: startTurn.thread!.id });
  pending = pendingElicitations.edges.map((edge) => edge.node).find((node) => node.turn.id === turnId);
  if (!pending) await new Promise((resolve) => setTimeout(resolve, 100));
}
// toolCall.argumentsDisplay.text is the arguments as they may be shown to a person (hidden characters escaped).
console.log(`asks: ${pending.message}\narguments: ${pending.toolCall.argumentsDisplay.text}`);

const { resolveElicitation } = await request(ResolveElicitationDocument, {
  input: { elicitationId: pending.id, action: 'ACCEPT' },
});
if (resolveElicitation.userErrors.length > 0) throw new Error(resolveElicitation.userErrors[0]!.message);
console.log(`answered: ${resolveElicitation.elicitation?.status}`);

// The answer resumes the turn: read it until it has stopped (resolveElicitation's own `turn` is where it stopped
// next, when the viewer is its requester).
let turn = (await request(TurnDocument, { id: turnId })).turn;
for (let tries = 0; turn?.status === 'RUNNING' && tries < 100; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  turn = (await request(TurnDocument, { id: turnId })).turn;
}
console.log(`turn ${turnId}: ${turn?.status}: ${turn?.text}`);
if (turn?.status !== 'COMPLETED') process.exit(1);
