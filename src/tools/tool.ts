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
  /** What the source offers besides tools (an MCP server's resources, prompts, completions); absent: nothing. */
  readonly offers?: UpstreamOffers;
  close(): Promise<void>;
}

/** What an MCP server declared it offers besides tools. */
export interface OfferedCapabilities {
  resources: boolean;
  subscribe: boolean;
  prompts: boolean;
  completions: boolean;
}

/** One source's offers, named by the source's id. */
export interface SourceOffers {
  source: string;
  offers: UpstreamOffers;
}

/** A change an MCP server announced, as a gateway's clients are told it. */
export type UpstreamChange =
  | { method: 'notifications/resources/updated'; uri: string }
  | { method: 'notifications/resources/list_changed' | 'notifications/prompts/list_changed' }
  | { method: 'notifications/tools/list_changed' };

/**
 * An MCP server's resources, prompts and completions, as it gives them (MCP's objects: Resource, ReadResourceResult,
 * Prompt, GetPromptResult, CompleteResult). A refusal of the server's is thrown as its JSON-RPC error.
 */
export interface UpstreamOffers {
  /** Connects first when the server is down; nothing declared while it cannot be reached. */
  capabilities(): Promise<OfferedCapabilities>;
  listResources(): Promise<JsonObject[]>;
  listResourceTemplates(): Promise<JsonObject[]>;
  readResource(uri: string): Promise<JsonObject>;
  /** Counted: the server is asked to stop only when the last subscriber of the URI stops. */
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  listPrompts(): Promise<JsonObject[]>;
  getPrompt(name: string, args: Record<string, string> | undefined): Promise<JsonObject>;
  /** completion/complete's params as the server takes them (its own prompt name in `ref`). */
  complete(params: JsonObject): Promise<JsonObject>;
  /** Calls `listener` with each change the server announces; returns what stops it. */
  onChange(listener: (change: UpstreamChange) => void): () => void;
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
