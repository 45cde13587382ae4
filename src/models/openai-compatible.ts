// The `openai-compatible` provider: any Chat Completions server with tool calls (OpenAI, vLLM, llama.cpp server,
// Ollama, LM Studio), through the AI SDK. toolgate runs tools itself, so the tools go to the model without
// `execute` and one call is one model step.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  generateText,
  jsonSchema,
  RetryError,
  streamText,
  type LanguageModel,
  type ModelMessage as SdkMessage,
  type ToolSet,
} from 'ai';
import type { JsonObject } from '../domain/records.js';
import { resolveSecret } from '../config/load.js';
import type { ModelConfig } from '../config/schema.js';
import type { Model, ModelMessage, ModelRequest, ModelResponse, ModelToolCall } from './model.js';

export type OpenAiCompatibleConfig = Extract<ModelConfig, { provider: 'openai-compatible' }>;

export class OpenAiCompatibleModel implements Model {
  readonly #model: LanguageModel;
  readonly #config: OpenAiCompatibleConfig;

  /** `where` names the config entry; a missing `env:` secret is a config error at start. */
  constructor(config: OpenAiCompatibleConfig, where: string) {
    this.#config = config;
    const headers = Object.fromEntries(
      Object.entries(config.headers ?? {}).map(([name, value]) => [
        name,
        resolveSecret(value, `${where}.headers.${name}`),
      ]),
    );
    const provider = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: config.baseURL,
      apiKey: config.apiKey === undefined ? undefined : resolveSecret(config.apiKey, `${where}.apiKey`),
      headers,
    });
    this.#model = provider.chatModel(config.model);
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const config = this.#config;
    // One bound on the whole call, retries included, so a turn never waits longer than the config says.
    const deadline = config.timeoutMs ? AbortSignal.timeout(config.timeoutMs) : undefined;
    const signals = [request.signal, deadline].filter((signal): signal is AbortSignal => signal !== undefined);
    const call = {
      model: this.#model,
      system: request.system,
      messages: toSdkMessages(request.messages),
      tools: toSdkTools(request.tools),
      temperature: config.temperature,
      // The AI SDK retries 429, 408, 409 and 5xx with exponential backoff (2 s, 4 s, … or what Retry-After says).
      maxRetries: config.maxRetries ?? 2,
      abortSignal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
    };
    try {
      if (!config.stream) {
        const result = await generateText(call);
        return { text: result.text || null, toolCalls: result.toolCalls.map(toModelToolCall) };
      }
      let failure: unknown;
      const result = streamText({
        ...call,
        onError: ({ error }) => {
          failure ??= error;
        },
      });
      let text = '';
      const toolCalls: ModelToolCall[] = [];
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') {
          text += part.text;
          if (part.text) tellTextDelta(request, part.text);
        } else if (part.type === 'tool-call') toolCalls.push(toModelToolCall(part));
        else if (part.type === 'error') failure ??= part.error;
        else if (part.type === 'abort') failure ??= new Error('the call was aborted');
      }
      if (failure !== undefined) throw failure;
      return { text: text || null, toolCalls };
    } catch (error) {
      if (deadline?.aborted && !request.signal?.aborted) {
        throw new Error(`${config.model} at ${config.baseURL} did not answer within ${config.timeoutMs} ms`, {
          cause: error,
        });
      }
      throw new Error(describeModelError(error, config), { cause: error });
    }
  }
}

/** Hands a piece of streamed text to the listener; a listener's fault never fails the model call. */
function tellTextDelta(request: ModelRequest, delta: string): void {
  try {
    request.onTextDelta?.(delta);
  } catch {
    // Live text is best-effort: the answer is still returned whole and saved.
  }
}

/** The transcript in the AI SDK's message form: tool results carry the name of the call they answer. */
export function toSdkMessages(messages: ModelMessage[]): SdkMessage[] {
  const toolNames = new Map<string, string>();
  const out: SdkMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'USER':
        out.push({ role: 'user', content: message.text ?? '' });
        break;
      case 'ASSISTANT': {
        if (message.toolCalls.length === 0) {
          out.push({ role: 'assistant', content: message.text ?? '' });
          break;
        }
        for (const call of message.toolCalls) toolNames.set(call.id, call.name);
        out.push({
          role: 'assistant',
          content: [
            ...(message.text ? [{ type: 'text' as const, text: message.text }] : []),
            ...message.toolCalls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id,
              toolName: call.name,
              input: call.arguments,
            })),
          ],
        });
        break;
      }
      case 'TOOL': {
        const part = {
          type: 'tool-result' as const,
          toolCallId: message.toolCallId ?? '',
          toolName: toolNames.get(message.toolCallId ?? '') ?? 'unknown',
          output: { type: 'text' as const, value: message.text ?? '' },
        };
        // Consecutive tool results answer one assistant message: one tool message with several parts.
        const last = out.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else out.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return out;
}

/** Tools as schemas only: no `execute`, so the AI SDK returns the calls and toolgate gates and runs them. */
function toSdkTools(tools: ModelRequest['tools']): ToolSet | undefined {
  if (tools.length === 0) return undefined;
  return Object.fromEntries(
    tools.map((tool) => [
      tool.name,
      {
        description: tool.description,
        inputSchema: jsonSchema(tool.inputSchema as Parameters<typeof jsonSchema>[0]),
      },
    ]),
  );
}

interface SdkToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  invalid?: boolean;
  error?: unknown;
}

function toModelToolCall(call: SdkToolCall): ModelToolCall {
  const known = !call.invalid || isNoSuchTool(call.error);
  if (!known || !isPlainObject(call.input)) {
    // Arguments that are not a JSON object cannot be shown to the user or run as the model meant them.
    const raw = typeof call.input === 'string' ? call.input : JSON.stringify(call.input);
    throw new Error(
      `the model sent arguments for ${call.toolName} that are not a JSON object: ${truncate(raw ?? '', 200)}`,
    );
  }
  // An unknown tool name passes through: the loop answers it with a TOOL message ("no such tool").
  return { id: call.toolCallId, name: call.toolName, arguments: call.input };
}

function isNoSuchTool(error: unknown): boolean {
  return error instanceof Error && error.name === 'AI_NoSuchToolError';
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One readable line for the turn's `error`: where, what, and after how many attempts. */
export function describeModelError(error: unknown, config: OpenAiCompatibleConfig): string {
  const attempts = RetryError.isInstance(error) ? error.errors.length : 1;
  const last = RetryError.isInstance(error) ? error.lastError : error;
  const after = attempts > 1 ? ` (after ${attempts} attempts)` : '';
  if (APICallError.isInstance(last)) {
    return last.statusCode
      ? `${config.model} at ${config.baseURL} answered HTTP ${last.statusCode}: ${truncate(last.message, 300)}${after}`
      : `${config.model} at ${config.baseURL} could not be reached: ${truncate(last.message, 300)}${after}`;
  }
  const message = last instanceof Error ? last.message : String(last);
  return `${config.model} at ${config.baseURL}: ${truncate(message, 300)}${after}`;
}

function truncate(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
