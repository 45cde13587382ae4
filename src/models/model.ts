import type { JsonObject, MessageRole } from '../domain/records.js';

/** A tool as the model sees it: under a name its API accepts (^[a-zA-Z0-9_-]{1,64}$). */
export interface ModelTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

export interface ModelToolCall {
  id: string;
  /** The model-facing name. */
  name: string;
  arguments: JsonObject;
}

export interface ModelMessage {
  role: Exclude<MessageRole, 'SYSTEM'>;
  text: string | null;
  toolCalls: ModelToolCall[];
  toolCallId: string | null;
}

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  signal?: AbortSignal;
  /**
   * Called with each piece of the answer's text as the model generates it, in order, when the model streams: the
   * pieces concatenated are the response's `text`. For live display only (best-effort): it must return at once,
   * and what it throws is ignored. A model that does not stream never calls it.
   */
  onTextDelta?: (delta: string) => void;
}

export interface ModelResponse {
  text: string | null;
  toolCalls: ModelToolCall[];
}

/** A chat model with tool calls. Implementations throw on failure; the loop turns that into a FAILED turn. */
export interface Model {
  generate(request: ModelRequest): Promise<ModelResponse>;
}
