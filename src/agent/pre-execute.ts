// The pre-execute event of one tool call: built from the trusted definition and a copy of the call, dispatched to
// the listeners in order, and read back as what they decided. The gate of a step and the re-check of arguments a
// user edited before accepting both come here, so a listener sees one event however the call got there.
import type { Agent, ElicitationRequest, ToolCall } from '../domain/records.js';
import type { Tool } from '../tools/tool.js';
import { checkedElicitationRequest } from './elicitation-request.js';
import { type ListenerRegistry, ToolPreExecuteEvent } from '../domain/gate/listeners.js';

/** What the listeners decided for a call. */
export type PreExecuteVerdict =
  | { kind: 'vetoed'; reason: string }
  /** `request`: checked and ready to store; `grantable`: a remembered approval may stand in for asking. */
  | { kind: 'ask'; request: ElicitationRequest; grantable: boolean }
  | { kind: 'run' };

/** Where the call is made. */
export interface CallSite {
  agent: Agent;
  threadId: string;
  turnId: string;
}

/**
 * Dispatches the event of `call` to `tool` and returns the verdict: a veto beats a request to ask. A request that is
 * not an MCP form elicitation throws (src/agent/elicitation-request.ts), as a listener that throws does.
 * `confirmed`: the user already accepted exactly these arguments, so a request to ask counts as answered: the verdict
 * is `run` unless vetoed, and the request is not read.
 */
export async function preExecute(
  listeners: ListenerRegistry,
  site: CallSite,
  tool: Tool,
  call: ToolCall,
  options: { confirmed?: boolean } = {},
): Promise<PreExecuteVerdict> {
  // The definition and the call are copies: what a listener does to them never reaches the stored call or the tool.
  const event = new ToolPreExecuteEvent(
    site.agent,
    site.threadId,
    site.turnId,
    definitionOf(tool),
    structuredClone(call),
  );
  await listeners.dispatch(event);
  if (event.isVetoed()) return { kind: 'vetoed', reason: event.getVetoReason() ?? 'vetoed' };
  if (options.confirmed) return { kind: 'run' };
  const given = event.getElicitationRequest();
  if (!given) return { kind: 'run' };
  return { kind: 'ask', request: checkedElicitationRequest(given, tool, call), grantable: event.isGrantable() };
}

function definitionOf(tool: Tool) {
  const { execute: _execute, ...definition } = tool;
  return structuredClone(definition);
}
