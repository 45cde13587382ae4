// The bodies of the pass-through requests both revisions serve (resources, templates, read, prompts, completion):
// the use cases of src/app/gateway-offers.ts for one gateway agent, with their refusals and an upstream server's in
// the client's words. Each side registers them with its own SDK's schemas (pass-through.ts for 2025 sessions,
// stateless-gateway.ts for 2026-07-28), so both give the same answers under the same access rule.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  completeGatewayArgument,
  getGatewayPrompt,
  listGatewayPrompts,
  listGatewayResources,
  listGatewayResourceTemplates,
  readGatewayResource,
  ResourceNotFound,
  UnknownGateway,
  UnknownPrompt,
} from '../app/gateway-offers.js';
import type { JsonObject } from '../domain/records.js';
import { GatewayError, hidingFaults, unknownGateway } from './refusals.js';
import type { GatewaySession } from './tool-call.js';

/** MCP's code for a resource no server has. */
const RESOURCE_NOT_FOUND = -32002;

export type OfferCaller = Pick<GatewaySession, 'app' | 'agentId' | 'onError' | 'track'>;

export interface OfferHandlers {
  listResources(): Promise<{ resources: JsonObject[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: JsonObject[] }>;
  readResource(uri: string): Promise<JsonObject>;
  listPrompts(): Promise<{ prompts: JsonObject[] }>;
  getPrompt(name: string, args: Record<string, string> | undefined): Promise<JsonObject>;
  complete(params: JsonObject): Promise<JsonObject>;
}

/** Runs a pass-through request's work: refusals in MCP's words, a fault's own words to `onError` only. */
export function guardedOffer(caller: OfferCaller): <T>(run: () => Promise<T>, uri?: string) => Promise<T> {
  return (run, uri) => hidingFaults(() => run().catch((error: unknown) => asRefusal(error, uri)), caller);
}

export function offerHandlers(caller: OfferCaller): OfferHandlers {
  const { app, agentId } = caller;
  const guarded = guardedOffer(caller);
  return {
    listResources: () => guarded(async () => ({ resources: await listGatewayResources(app, agentId) })),
    listResourceTemplates: () =>
      guarded(async () => ({ resourceTemplates: await listGatewayResourceTemplates(app, agentId) })),
    readResource: (uri) => guarded(() => readGatewayResource(app, agentId, uri), uri),
    listPrompts: () => guarded(async () => ({ prompts: await listGatewayPrompts(app, agentId) })),
    getPrompt: (name, args) => guarded(() => getGatewayPrompt(app, agentId, name, args)),
    complete: (params) => guarded(() => completeGatewayArgument(app, agentId, params)),
  };
}

/**
 * The use cases' refusals, and an upstream server's, in the client's words. A resource not found names its `uri` in
 * the error's data, as the spec words it (a 2026-07-28 client's SDK recognises it by that; its code becomes -32602).
 */
function asRefusal(error: unknown, uri: string | undefined): never {
  if (error instanceof UnknownGateway) throw unknownGateway(error.agentId);
  if (error instanceof UnknownPrompt) throw new GatewayError(ErrorCode.InvalidParams, error.message);
  const notFoundData = uri === undefined ? undefined : { uri };
  if (error instanceof ResourceNotFound) throw new GatewayError(RESOURCE_NOT_FOUND, error.message, notFoundData);
  if (error instanceof McpError) {
    // The SDK's McpError words its message "MCP error <code>: …", on the upstream server's side and again on ours.
    const message = error.message.replace(/^(MCP error -?\d+: )+/, '');
    const data = error.data ?? (error.code === RESOURCE_NOT_FOUND ? notFoundData : undefined);
    throw new GatewayError(error.code, message, data);
  }
  throw error;
}
