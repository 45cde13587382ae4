import { DEFAULT_MAX_TOOL_ARGUMENTS_BYTES, DEFAULT_MAX_TOOL_ARGUMENTS_DEPTH } from './domain/gate/argument-size.js';
import type { AgentRunner } from './agent/runner.js';
import type { AppDeps, AppLimits } from './app/deps.js';
import type { Store } from './domain/store.js';
import type { ToolRegistry } from './tools/registry.js';
import type { ToolgatePubSub } from './events/pubsub.js';
import type { RunnerEventPublisher } from './events/runner-events.js';

/** What the API layer reaches: built once by createServer. The use cases of src/app/ take it as their AppDeps. */
export interface Services extends AppDeps {
  store: Store;
  runner: AgentRunner;
  tools: ToolRegistry;
  pubsub: ToolgatePubSub;
  clock: () => Date;
  limits: Limits;
  /** The text of model calls streaming in this process, for a turnEvents subscriber that joins mid-answer. */
  turnText: Pick<RunnerEventPublisher, 'textSoFar'>;
}

export interface Limits extends AppLimits {
  /** Largest HTTP request body and WebSocket message (graphql-ws maxPayload), in bytes: one setting for every transport. */
  maxRequestBytes: number;
  /** List items all list fields of one operation (one event, for a subscription) may return: src/http/list-budget.ts. */
  maxListItems: number;
  /** Largest arguments of a model's tool call, in UTF-8 bytes of JSON: src/domain/gate/argument-size.ts. */
  maxToolArgumentsBytes: number;
  /** Subscriptions open at once on one WebSocket: src/http/subscription-limits.ts. */
  maxSubscriptionsPerSocket: number;
  /** Subscriptions open at once for one user on this instance, WebSocket and SSE together. */
  maxSubscriptionsPerUser: number;
  /** Seconds an MCP session may go without a request and without an open response: src/http/mcp-sessions.ts. */
  mcpSessionIdleSeconds: number;
  /** MCP sessions open at once for one user on this instance. */
  maxMcpSessionsPerUser: number;
}

export const defaultLimits: Limits = {
  maxMessageLength: 32_000,
  maxContentBytes: 16_384,
  maxRequestBytes: 1_048_576,
  maxListItems: 20_000,
  maxToolArgumentsBytes: DEFAULT_MAX_TOOL_ARGUMENTS_BYTES,
  maxToolArgumentsDepth: DEFAULT_MAX_TOOL_ARGUMENTS_DEPTH,
  maxSubscriptionsPerSocket: 100,
  maxSubscriptionsPerUser: 500,
  mcpSessionIdleSeconds: 1800,
  maxMcpSessionsPerUser: 100,
};
