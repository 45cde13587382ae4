// The GraphQL operations the bench sends: what a client of the demo agent sends.

export const TRIVIAL = '{ __typename }';

/** Starts a turn on the demo agent; the scripted model asks to delete entity 1, which pauses for confirmation. */
export const START_TURN = `mutation Start($input: StartTurnInput!) {
  startTurn(input: $input) {
    turn { id status pendingElicitations { id } }
    thread { id }
    userErrors { code message }
  }
}`;

export const RESOLVE = `mutation Resolve($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) {
    turn { id status }
    userErrors { code message }
  }
}`;

export const PENDING = `query Pending($first: Int) {
  pendingElicitations(first: $first) {
    totalCount
    edges { cursor node { id status message expiresAt toolCall { name toolId arguments } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const ELICITATION_REQUESTED = `subscription Requested {
  elicitationRequested { id status message toolCall { name toolId arguments } }
}`;

export const UPDATE_AGENT = `mutation Update($input: UpdateAgentInput!) {
  updateAgent(input: $input) { agent { id requireToolConfirmation tools { toolId confirmation requiresConfirmation } } userErrors { code message } }
}`;

export const DELETE_MESSAGE = 'delete entities 1';

export function startTurnBody(message = DELETE_MESSAGE, threadId?: string) {
  return { query: START_TURN, variables: { input: { agentId: 'demo', message, ...(threadId && { threadId }) } } };
}

/** The bodies of one HITL round trip, as the load generators send them: the start that pauses, then its ACCEPT. */
export const START = JSON.stringify(startTurnBody());
export const resolveBody = (elicitationId: string) =>
  JSON.stringify({ query: RESOLVE, variables: { input: { elicitationId, action: 'ACCEPT' } } });

export interface StartTurnData {
  startTurn: {
    turn: { id: string; status: string; pendingElicitations: { id: string }[] } | null;
    thread: { id: string } | null;
    userErrors: { code: string; message: string }[];
  };
}

/** The parsed startTurn payload of a response body, or null. */
export function parseStartTurn(body: string): StartTurnData['startTurn'] | null {
  try {
    return (JSON.parse(body) as { data?: StartTurnData }).data?.startTurn ?? null;
  } catch {
    return null;
  }
}
