// The `mcp` tool source: an MCP server over stdio (a child process) or Streamable HTTP, through the SDK's Client.
// Tools are listed at start and again on notifications/tools/list_changed. Arguments are validated against the
// tool's inputSchema before the call. A server that died is restarted on next use; a call it died in is never
// repeated (its outcome is unknown) and fails with a message that says so.
import { isAbsolute, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonObject, ToolAnnotations, ToolResult } from '../domain/records.js';
import { ConfigError, resolveSecret } from '../config/load.js';
import { IDEMPOTENCY_META_KEY, upstreamIdempotencyKey } from '../domain/gateway.js';
import type { ToolSourceConfig } from '../config/schema.js';
import { callRelayOf, type CallRelay } from './call-relay.js';
import { relayUpstreamRequests, RELAYED_CAPABILITIES } from './mcp-call-relay.js';
import { McpOffers } from './mcp-offers.js';
import { invalidArgumentsText, mcpResultValidator, mcpSchemaValidator } from './mcp-schemas.js';
import { toolLabel, type Tool, type ToolExecutionContext, type ToolSource, type ToolSourceHealth } from './tool.js';

export type McpSourceConfig = Extract<ToolSourceConfig, { type: 'mcp' }>;

export interface McpSourceOptions {
  /** Where the config names this source, for messages: `<file>: toolSources.<id>`. */
  where: string;
  /** Relative `cwd` (and the default cwd) of a stdio server: the config file's directory. */
  baseDir: string;
  /** Forward the server's stderr to ours, prefixed with the source id (default true). */
  forwardStderr?: boolean;
}

const ANNOTATION_KEYS = ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
const CONNECT_TIMEOUT_MS = 30_000;
/** After a failed restart, the next attempt waits this long (a crashing server is not respawned per request). */
const RESTART_BACKOFF_MS = 2_000;
/** Longest a readiness probe waits for the server's answer to a ping. */
const PING_TIMEOUT_MS = 2_000;

export class McpToolSource implements ToolSource {
  #client: Client | null = null;
  #connecting: Promise<Client> | null = null;
  #refreshing: Promise<void> | null = null;
  /** The last list the server gave; kept while the server is down so calls fail clearly instead of vanishing. */
  #tools: Tool[] = [];
  #validators = mcpSchemaValidator();
  #compiled = new Map<string, ReturnType<AjvJsonSchemaValidator['getValidator']>>();
  #stderr: string[] = [];
  #lastFailure: { at: number; message: string } | null = null;
  #closed = false;
  /** The server's resources, prompts and completions, on the same connection as its tools. */
  readonly offers = new McpOffers(() => this.#usableClient());
  /** The calls in flight, each with its client's relay (null: no client of this process waits for it). */
  readonly #inFlight = new Set<{ relay: CallRelay | null }>();

  /** `env` or `headers` with their `env:NAME` values read, once, at start. */
  readonly #secrets: Record<string, string>;

  private constructor(
    readonly id: string,
    private readonly config: McpSourceConfig,
    private readonly options: McpSourceOptions,
  ) {
    const [field, values] = 'url' in config ? ['headers', config.headers] : ['env', config.env];
    this.#secrets = Object.fromEntries(
      Object.entries(values ?? {}).map(([name, value]) => [
        name,
        resolveSecret(value, `${options.where}.${field}.${name}`),
      ]),
    );
  }

  /** Connects and lists the tools; a server that cannot start is a config error (toolgate does not start). */
  static async start(id: string, config: McpSourceConfig, options: McpSourceOptions): Promise<McpToolSource> {
    const source = new McpToolSource(id, config, options);
    try {
      await source.#connect();
    } catch (error) {
      await source.close();
      throw new ConfigError(
        `${options.where}: cannot start the MCP server (${source.#describeTarget()}): ${source.#reason(error)}`,
      );
    }
    return source;
  }

  async listTools(): Promise<Tool[]> {
    if (!this.#client && !this.#closed && this.#mayRetry()) await this.#connect().catch(() => {});
    await this.#refreshing;
    return this.#tools;
  }

  /**
   * Ready while connected and the server answers an MCP ping within PING_TIMEOUT_MS. A server that is down is
   * started again in the background (with the same backoff as a call's restart), so a drained instance recovers
   * without a tool call; until it is up, not ready. The reason names the state only, never the server's output.
   */
  async health(): Promise<ToolSourceHealth> {
    if (this.#closed) return { ready: false, reason: 'closed' };
    const client = this.#client;
    if (!client) {
      const restarting = this.#connecting !== null || this.#mayRetry();
      if (restarting) this.#connect().catch(() => {});
      return {
        ready: false,
        reason: restarting ? 'the MCP server is not running (restarting it)' : 'the MCP server is not running',
      };
    }
    try {
      await client.ping({ timeout: PING_TIMEOUT_MS });
      return { ready: true };
    } catch {
      return { ready: false, reason: 'the MCP server does not answer' };
    }
  }

  /** The server's process id (stdio), for tests and diagnostics. */
  get pid(): number | null {
    const transport = this.#client?.transport;
    return transport instanceof StdioClientTransport ? transport.pid : null;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client ?? (await this.#connecting?.catch(() => null)) ?? null;
    this.#client = null;
    await client?.close().catch(() => {});
  }

  #connect(): Promise<Client> {
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #open(): Promise<Client> {
    const client = new Client(
      { name: 'toolgate', version: '0.1.0' },
      { jsonSchemaValidator: mcpResultValidator(), capabilities: RELAYED_CAPABILITIES },
    );
    client.onclose = () => {
      if (this.#client !== client) return;
      this.#client = null;
      this.#lastFailure = { at: Date.now(), message: `the server closed the connection${this.#stderrTail()}` };
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#refresh(client)
        .then(() => this.offers.announce({ method: 'notifications/tools/list_changed' }))
        .catch(() => {});
    });
    this.offers.attach(client);
    relayUpstreamRequests(client, () => {
      const [only, ...others] = this.#inFlight;
      return only && others.length === 0 ? only.relay : null;
    });
    const transport = this.#transport();
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      await this.#refresh(client);
    } catch (error) {
      await client.close().catch(() => {});
      await new Promise((resolve) => setImmediate(resolve)); // let the last stderr lines arrive
      const failure = new Error(`${this.#reason(error)}${this.#stderrTail()}`, { cause: error });
      this.#lastFailure = { at: Date.now(), message: failure.message };
      throw failure;
    }
    if (this.#closed) {
      await client.close().catch(() => {});
      throw new Error('the tool source is closed');
    }
    this.#client = client;
    this.#lastFailure = null;
    this.offers.connected(client);
    return client;
  }

  #transport(): Transport {
    const config = this.config;
    if ('url' in config)
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: this.#secrets } });
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: this.#secrets,
      cwd:
        config.cwd === undefined
          ? this.options.baseDir
          : isAbsolute(config.cwd)
            ? config.cwd
            : resolve(this.options.baseDir, config.cwd),
      stderr: 'pipe',
    });
    this.#stderr = [];
    transport.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.#stderr.push(...text.split('\n').filter((line) => line.trim()));
      this.#stderr.splice(0, Math.max(0, this.#stderr.length - 20));
      if (this.options.forwardStderr ?? true) process.stderr.write(text.replace(/^(?=.)/gm, `[mcp ${this.id}] `));
    });
    return transport;
  }

  /** Lists every page of tools; refreshes run one after another, and listTools waits for the one running. */
  #refresh(client: Client): Promise<void> {
    const list = async () => {
      const listed: McpTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: CONNECT_TIMEOUT_MS });
        listed.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      this.#tools = listed.map((tool) => this.#define(tool));
      this.#validators = mcpSchemaValidator();
      this.#compiled.clear();
    };
    const run = this.#refreshing ? this.#refreshing.then(list) : list();
    const settled: Promise<void> = run
      .catch(() => {})
      .finally(() => {
        if (this.#refreshing === settled) this.#refreshing = null;
      });
    this.#refreshing = settled;
    return run;
  }

  #define(tool: McpTool): Tool {
    const annotations: ToolAnnotations = {};
    for (const key of ANNOTATION_KEYS) {
      const value = tool.annotations?.[key];
      if (value !== undefined) (annotations as Record<string, unknown>)[key] = value;
    }
    return {
      id: `${this.id}:${tool.name}`,
      source: this.id,
      name: tool.name,
      label: toolLabel(tool.name, tool.title, tool.annotations?.title),
      description: tool.description ?? '',
      inputSchema: tool.inputSchema as JsonObject,
      ...(tool.outputSchema && { outputSchema: tool.outputSchema as JsonObject }),
      annotations,
      execute: (args, context) => this.#call(tool.name, args, context),
    };
  }

  async #call(name: string, args: JsonObject, context: ToolExecutionContext): Promise<ToolResult> {
    const invalid = this.#validate(name, args);
    if (invalid) return { isError: true, text: invalid };
    let client: Client;
    try {
      if (this.#closed) throw new Error('toolgate is shutting down');
      client = this.#client ?? (await this.#reconnect());
    } catch (error) {
      return {
        isError: true,
        text: `the MCP server "${this.id}" is not running and could not be restarted: ${this.#reason(error)}`,
      };
    }
    let result: CallToolResult;
    const inFlight = { relay: callRelayOf(context.turnId) };
    const progress = inFlight.relay?.progress;
    this.#inFlight.add(inFlight);
    try {
      // A key stable for this call, whichever process runs it: an upstream server may use it to tell a call it saw.
      const _meta = { [IDEMPOTENCY_META_KEY]: upstreamIdempotencyKey(context.turnId, context.toolCallId) };
      result = (await client.callTool({ name, arguments: args, _meta }, undefined, {
        signal: context.signal,
        timeout: this.config.timeoutMs,
        ...(progress && { onprogress: (update) => progress(update) }),
      })) as CallToolResult;
    } catch (error) {
      if (isConnectionLost(error)) {
        // The call may or may not have happened: never repeat it. The next use restarts the server.
        if (this.#client === client) this.#client = null;
        await client.close().catch(() => {});
        return {
          isError: true,
          text: `the MCP server "${this.id}" stopped during the call, so its outcome is unknown (${this.#reason(error)}${this.#stderrTail()})`,
        };
      }
      return { isError: true, text: this.#reason(error) };
    } finally {
      this.#inFlight.delete(inFlight);
    }
    const { content, structuredContent } = result;
    return {
      isError: result.isError === true,
      text: resultText(result),
      callResult: { content, ...(structuredContent && { structuredContent }) } as JsonObject,
    };
  }

  /** The connected client, or the server started again (as a call would); refused once closed. */
  #usableClient(): Promise<Client> {
    if (this.#closed) return Promise.reject(new Error('toolgate is shutting down'));
    return this.#client ? Promise.resolve(this.#client) : this.#reconnect();
  }

  #reconnect(): Promise<Client> {
    if (!this.#mayRetry()) return Promise.reject(new Error(this.#lastFailure!.message));
    return this.#connect();
  }

  #mayRetry(): boolean {
    return (
      !this.#lastFailure ||
      Date.now() - this.#lastFailure.at >= RESTART_BACKOFF_MS ||
      this.#lastFailure.message.startsWith('the server closed')
    );
  }

  /** Null when the arguments fit the tool's inputSchema; else what is wrong, for the model to read. */
  #validate(name: string, args: JsonObject): string | null {
    const tool = this.#tools.find((t) => t.name === name);
    if (!tool) return `the MCP server "${this.id}" no longer offers the tool ${name}`;
    let validator = this.#compiled.get(name);
    if (!validator) {
      try {
        validator = this.#validators.getValidator(
          tool.inputSchema as Parameters<AjvJsonSchemaValidator['getValidator']>[0],
        );
      } catch (error) {
        return `the input schema of ${name} cannot be used: ${this.#reason(error)}`;
      }
      this.#compiled.set(name, validator);
    }
    const result = validator(args);
    return result.valid ? null : invalidArgumentsText(result.errorMessage);
  }

  #describeTarget(): string {
    return 'url' in this.config ? this.config.url : [this.config.command, ...(this.config.args ?? [])].join(' ');
  }

  #stderrTail(): string {
    const last = this.#stderr.at(-1);
    return last ? `; its last words: ${last.slice(0, 300)}` : '';
  }

  #reason(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    return message.replace(/^MCP error -?\d+: /, '');
  }
}

function isConnectionLost(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  // Transport failures (fetch errors, an HTTP session the server forgot) are not JSON-RPC errors.
  return !(error instanceof Error && error.name === 'AbortError');
}

/** The text the model reads: text parts as they are, other parts named; structured content when there is no text. */
function resultText(result: CallToolResult): string {
  const parts = result.content
    .map((part) => {
      switch (part.type) {
        case 'text':
          return part.text;
        case 'image':
          return `[image ${part.mimeType}]`;
        case 'audio':
          return `[audio ${part.mimeType}]`;
        case 'resource':
          return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
        case 'resource_link':
          return `[resource ${part.uri}]`;
        default:
          return '';
      }
    })
    .filter((text) => text !== '');
  if (parts.length === 0 && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}
