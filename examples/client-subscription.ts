// A live frontend with graphql-ws and the typed documents of `toolgate/client` (docs/client.md): subscribe to the
// viewer's confirmation requests (includePending: true, so the pause of a turn started next is never missed), start
// a turn, accept its request when it arrives, and follow the turn with turnUpdated until it has COMPLETED. One
// WebSocket carries it all, the mutations too. Start the demo first (`npm start` in a checkout, or `npx toolgate`
// where the package is installed), then run it with `node --import tsx examples/client-subscription.ts` (or
// compiled). TOOLGATE_GRAPHQL_URL (default http://127.0.0.1:4000/graphql) and TOOLGATE_TOKEN (a token of the
// server's "auth" section, if it has one) are read here, by the example.
import { print } from 'graphql';
import { createClient } from 'graphql-ws';
import {
  ElicitationRequestedDocument,
  ResolveElicitationDocument,
  StartTurnDocument,
  TurnUpdatedDocument,
  type TypedDocumentNode,
} from 'toolgate/client';
import WebSocket from 'ws';

const url = new URL(process.env.TOOLGATE_GRAPHQL_URL || 'http://127.0.0.1:4000/graphql');
url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
const token = process.env.TOOLGATE_TOKEN;

const client = createClient({
  url: url.href,
  // Node 20 has no WebSocket of its own; a browser's is used when this is left out.
  webSocketImpl: WebSocket,
  // The same `Bearer <token>` as the HTTP header; without an "auth" section everyone is the local admin.
  connectionParams: token ? { authorization: `Bearer ${token}` } : {},
});

/** The results of one operation on the socket, typed by the document; GraphQL errors are thrown. */
async function* subscribe<Result, Variables>(
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
): AsyncGenerator<Result> {
  const results = client.iterate<Result>({ query: print(document), variables: variables as Record<string, unknown> });
  for await (const result of results) {
    if (result.errors?.length || !result.data) throw new Error(`GraphQL errors: ${JSON.stringify(result.errors)}`);
    yield result.data;
  }
}

/** A query or mutation over the socket: its one result. */
async function execute<Result, Variables>(
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
): Promise<Result> {
  for await (const data of subscribe(document, variables)) return data;
  throw new Error('no result');
}

// Listening before the turn starts; with includePending the order does not matter (docs/live.md).
const requests = subscribe(ElicitationRequestedDocument, { includePending: true });

const { startTurn } = await execute(StartTurnDocument, {
  input: { agentId: 'demo', message: 'delete entities 1', background: true },
});
if (!startTurn.turn || startTurn.userErrors.length > 0) throw new Error(startTurn.userErrors[0]?.message);
const turnId = startTurn.turn.id;
console.log(`turn ${turnId}: ${startTurn.turn.status}`);
// The turn from now on: first as it is, then after each change. Its first event says the subscription listens, so
// every change the answer below brings arrives.
const updates = subscribe(TurnUpdatedDocument, { turnId });
const { value: now } = await updates.next();
console.log(`turn ${turnId}: ${now?.turnUpdated.status}`);

for await (const { elicitationRequested: request } of requests) {
  if (request.turn.id !== turnId) continue; // another turn's, pending from before
  console.log(`asks: ${request.message}\narguments: ${request.toolCall.argumentsDisplay.text}`);
  const { resolveElicitation } = await execute(ResolveElicitationDocument, {
    input: { elicitationId: request.id, action: 'ACCEPT' },
  });
  if (resolveElicitation.userErrors.length > 0) throw new Error(resolveElicitation.userErrors[0]!.message);
  console.log(`answered: ${resolveElicitation.elicitation?.status}`);
  break; // ends the subscription
}

let status;
for await (const { turnUpdated: turn } of updates) {
  console.log(`turn ${turnId}: ${turn.status}${turn.text ? `: ${turn.text}` : ''}`);
  status = turn.status;
  if (!['RUNNING', 'PAUSED'].includes(status)) break;
}
await client.dispose();
if (status !== 'COMPLETED') process.exit(1);
