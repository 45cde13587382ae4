// A gateway is an agent without a model: an MCP client chooses its calls, and each call is a turn of its own, on a
// thread of its own, whose one step is that call. The rules here say what such a turn is and what its client gets.
import type { Agent, JsonObject, PendingStep, ToolAnnotations, ToolResult } from './records.js';

/** The model id of an agent that has none (the config's agent without "model"). */
export const GATEWAY_MODEL_ID = '';

export function isGateway(agent: Pick<Agent, 'modelId'>): boolean {
  return agent.modelId === GATEWAY_MODEL_ID;
}

/**
 * The `_meta` key under which a client names a call so that, sent again, it gets the first call's result instead of
 * running the tool again; and under which toolgate names each call it makes upstream, so that the upstream server
 * can tell a call it saw before.
 */
export const IDEMPOTENCY_META_KEY = 'dev.toolgate/idempotency-key';

/** The key toolgate sends upstream for one call: stable for the call, whichever process runs it. */
export function upstreamIdempotencyKey(turnId: string, toolCallId: string): string {
  return `${turnId}/${toolCallId}`;
}

/**
 * The `_meta` key of a call's result under which its client gets the signed receipt of the decision that let it run
 * (docs/receipts.md). Reverse-DNS, as MCP asks of `_meta` prefixes, beside IDEMPOTENCY_META_KEY.
 */
export const RECEIPT_META_KEY = 'dev.toolgate/receipt';

/** What a gateway's client gets for its call: MCP's CallToolResult. */
export interface CallResult {
  content: JsonObject[];
  structuredContent?: JsonObject;
  isError: boolean;
  _meta?: JsonObject;
}

/** A call's result with the receipt of the accept that let it run, under RECEIPT_META_KEY (whatever was there). */
export function withReceiptMeta(result: CallResult, receipt: JsonObject): CallResult {
  return { ...result, _meta: { ...result._meta, [RECEIPT_META_KEY]: receipt } };
}

const textBlock = (text: string): JsonObject => ({ type: 'text', text });

/**
 * The result of a call that ran, as its client gets it: the tool's own result (an MCP server's as it gave it, else
 * its text), then `notes`, what the person who allowed it added (edited arguments, instructions), each a text block,
 * so that the client's model reads them as an agent's model would.
 */
export function ranCallResult(result: ToolResult, text: string, notes: readonly string[]): CallResult {
  const own = result.callResult;
  const content = Array.isArray(own?.content) ? (own.content as JsonObject[]) : [textBlock(text)];
  const structured = own?.structuredContent;
  return {
    content: [...content, ...notes.map(textBlock)],
    ...(structured && typeof structured === 'object' && !Array.isArray(structured)
      ? { structuredContent: structured as JsonObject }
      : {}),
    isError: result.isError,
  };
}

/**
 * The result of a call that did not run to a result of its own (declined, vetoed, refused, expired, interrupted):
 * its TOOL message, what an agent's model reads, as an error.
 */
export function unranCallResult(toolMessage: string): CallResult {
  return { content: [textBlock(toolMessage)], isError: true };
}

/**
 * Whether a gateway's call may run before anything of it is written (docs/durability.md): a read-only tool (its
 * readOnlyHint) that the gate lets run unasked, with no remembered approval to check as it starts.
 */
export function runsAtOnce(annotations: ToolAnnotations, outcome: PendingStep['calls'][number]['outcome']): boolean {
  return annotations.readOnlyHint === true && outcome.kind === 'run' && outcome.grantId === undefined;
}
