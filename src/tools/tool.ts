import type { Agent, JsonObject, ToolDefinition, ToolResult } from '../domain/records.js';

export interface ToolExecutionContext {
  agentId: string;
  threadId: string;
  turnId: string;
  toolCallId: string;
  signal?: AbortSignal;
}

/** A trusted tool definition with the function that runs it. */
export interface Tool extends ToolDefinition {
  execute(args: JsonObject, context: ToolExecutionContext): Promise<ToolResult>;
}

/** Where tools come from: builtin code, an MCP server, … */
export interface ToolSource {
  readonly id: string;
  /** The source's tools now; may change over time (MCP list_changed). */
  listTools(): Promise<Tool[]>;
  /** Readiness (/readyz): can the source serve calls now? Absent: always ready (builtin code). */
  health?(): Promise<ToolSourceHealth>;
  close(): Promise<void>;
}

/** Resolves an agent's tools (by its tool ids) to runnable tools: what the loop runs a turn's calls with. */
export interface ToolCatalog {
  toolsFor(agent: Agent): Promise<Tool[]>;
}

/** A source's readiness; `reason` is shown on /readyz, so it names a state, never a secret or a server's output. */
export type ToolSourceHealth = { ready: true } | { ready: false; reason: string };

/** `label`: title, then annotations.title, then name (docs/design.md). */
export function toolLabel(name: string, title?: string, annotationsTitle?: string): string {
  return title || annotationsTitle || name;
}
