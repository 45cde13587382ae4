// What the use cases reach: the store, the loop, the tools, the clock and the limits. createServer builds them once
// (src/services.ts extends this); a test can build them from a real store without any API in front.
import type { AgentRunner } from '../agent/runner.js';
import type { Agent, TurnRecord } from '../domain/records.js';
import type { Passkeys } from '../domain/passkeys.js';
import type { Agents, GatewayCallers, Grants, Reads, WebhookDeliveries } from '../domain/store.js';
import type { SourceOffers, Tool } from '../tools/tool.js';
import type { PasskeySettings } from './passkeys.js';

/** An agent's tools as their sources list them now. */
export interface ToolLookup {
  toolsFor(agent: Pick<Agent, 'toolIds'>): Promise<Tool[]>;
  /** null when the agent no longer has the tool. */
  toolOf(agent: Pick<Agent, 'toolIds'>, toolId: string): Promise<Tool | null>;
  /** What the agent's whole sources offer besides tools; absent: nothing (builtin tools only). */
  offersFor?(agent: Pick<Agent, 'toolIds'>): SourceOffers[];
}

export interface AppLimits {
  /** Longest user message, in characters. */
  maxMessageLength: number;
  /** Largest elicitation content, in bytes of JSON. */
  maxContentBytes: number;
  /** Largest arguments of a tool call, in UTF-8 bytes of JSON (a model's, or a gateway client's). */
  maxToolArgumentsBytes: number;
  /** Deepest arguments of a tool call, in levels of objects and arrays (a model's, or a gateway client's). */
  maxToolArgumentsDepth: number;
}

/** The store as the use cases see it: reads, agents, grants and the webhook list; writes to turns go through the runner. */
export type AppStore = Agents & Reads & Grants & GatewayCallers & WebhookDeliveries & Passkeys;

export interface AppDeps {
  store: AppStore;
  runner: Pick<AgentRunner, 'startTurn' | 'resolveElicitation'>;
  tools: ToolLookup;
  clock: () => Date;
  limits: AppLimits;
  /** Every change of a turn, published by whichever instance made it: a waiting gateway call listens here. */
  pubsub: TurnChanges;
  /** Passkey step-up (src/app/passkeys.ts); absent: no tool requires it, and the relying party is the request's. */
  passkeys?: PasskeySettings;
}

/** The pub/sub of turn changes as a use case listens to it (src/events/pubsub.ts is one). */
export interface TurnChanges {
  subscribe(
    topic: 'turn',
    turnId: string,
  ): AsyncIterableIterator<TurnRecord> & {
    return(): Promise<IteratorResult<TurnRecord>>;
    /** Resolves once what any instance publishes reaches this subscription. */
    readonly listening: Promise<void>;
  };
}
