// An upstream MCP server's log messages, elicitation/create and sampling/createMessage during a call, passed to the
// gateway client that waits for the call (call-relay.ts). The server shares one connection among all calls and does
// not say which call it speaks of, so they are passed on only while one call of this process is in flight on it:
// with several, a log message is dropped and a request refused, rather than shown to another caller.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  type CreateMessageResult,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../domain/records.js';
import type { CallRelay } from './call-relay.js';

/** What toolgate's client declares to upstream servers: it can pass their questions on. */
export const RELAYED_CAPABILITIES = { elicitation: { form: {} }, sampling: {} };

/** Passes `client`'s log messages and requests to the relay of the one call in flight, as `soleRelay` finds it. */
export function relayUpstreamRequests(client: Client, soleRelay: () => CallRelay | null): void {
  client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    soleRelay()?.log(params as JsonObject);
  });
  client.setRequestHandler(ElicitRequestSchema, async ({ params }) => {
    const elicit = soleRelay()?.elicit;
    if (!elicit) throw cannotRelay('elicitation/create', 'elicit');
    return (await elicit(params as JsonObject)) as ElicitResult;
  });
  client.setRequestHandler(CreateMessageRequestSchema, async ({ params }) => {
    const sample = soleRelay()?.sample;
    if (!sample) throw cannotRelay('sampling/createMessage', 'sample');
    return (await sample(params as JsonObject)) as CreateMessageResult;
  });
}

function cannotRelay(method: string, verb: string): McpError {
  return new McpError(
    ErrorCode.InvalidRequest,
    `toolgate cannot pass ${method} on: no client that can ${verb} waits for this call alone`,
  );
}
