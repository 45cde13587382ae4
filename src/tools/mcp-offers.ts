// An MCP server's resources, prompts and completions, through the `mcp` tool source's client: what a gateway passes
// through to its clients as the server gives it. The connection is the source's (one per server, shared by every
// gateway session), so subscriptions are counted here and the server's announcements go to every listener.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CompleteRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../domain/records.js';
import type { OfferedCapabilities, UpstreamChange, UpstreamOffers } from './tool.js';

const REQUEST_TIMEOUT_MS = 30_000;
const NOTHING: OfferedCapabilities = { resources: false, subscribe: false, prompts: false, completions: false };

export class McpOffers implements UpstreamOffers {
  readonly #listeners = new Set<(change: UpstreamChange) => void>();
  /** URI → how many subscribers; the server is subscribed while it is above zero. */
  readonly #subscriptions = new Map<string, number>();

  /** `client`: the source's connected client, connecting (or restarting) the server first when it is down. */
  constructor(private readonly client: () => Promise<Client>) {}

  /** Listens to a new client's announcements (before it connects: none is missed). */
  attach(client: Client): void {
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) =>
      this.announce({ method: 'notifications/resources/updated', uri: params.uri }),
    );
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () =>
      this.announce({ method: 'notifications/resources/list_changed' }),
    );
    client.setNotificationHandler(PromptListChangedNotificationSchema, () =>
      this.announce({ method: 'notifications/prompts/list_changed' }),
    );
  }

  /** Renews, on a connected client, the subscriptions a restarted server lost. */
  connected(client: Client): void {
    if (!client.getServerCapabilities()?.resources?.subscribe) return;
    for (const uri of this.#subscriptions.keys()) client.subscribeResource({ uri }).catch(() => {});
  }

  announce(change: UpstreamChange): void {
    for (const listener of this.#listeners) listener(change);
  }

  onChange(listener: (change: UpstreamChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async capabilities(): Promise<OfferedCapabilities> {
    const declared = await this.client().then(
      (client) => client.getServerCapabilities(),
      () => undefined,
    );
    if (!declared) return NOTHING;
    return {
      resources: Boolean(declared.resources),
      subscribe: Boolean(declared.resources?.subscribe),
      prompts: Boolean(declared.prompts),
      completions: Boolean(declared.completions),
    };
  }

  async listResources(): Promise<JsonObject[]> {
    const client = await this.client();
    return allPages((cursor) => client.listResources(cursor, options()).then((p) => [p.resources, p.nextCursor]));
  }

  async listResourceTemplates(): Promise<JsonObject[]> {
    const client = await this.client();
    return allPages((cursor) =>
      client.listResourceTemplates(cursor, options()).then((p) => [p.resourceTemplates, p.nextCursor]),
    );
  }

  async readResource(uri: string): Promise<JsonObject> {
    return (await (await this.client()).readResource({ uri }, options())) as JsonObject;
  }

  async subscribe(uri: string): Promise<void> {
    const count = this.#subscriptions.get(uri) ?? 0;
    if (count === 0) await (await this.client()).subscribeResource({ uri }, options());
    this.#subscriptions.set(uri, count + 1);
  }

  async unsubscribe(uri: string): Promise<void> {
    const count = this.#subscriptions.get(uri) ?? 0;
    if (count > 1) return void this.#subscriptions.set(uri, count - 1);
    this.#subscriptions.delete(uri);
    if (count === 1) await (await this.client()).unsubscribeResource({ uri }, options());
  }

  async listPrompts(): Promise<JsonObject[]> {
    const client = await this.client();
    return allPages((cursor) => client.listPrompts(cursor, options()).then((p) => [p.prompts, p.nextCursor]));
  }

  async getPrompt(name: string, args: Record<string, string> | undefined): Promise<JsonObject> {
    const params = { name, ...(args && { arguments: args }) };
    return (await (await this.client()).getPrompt(params, options())) as JsonObject;
  }

  async complete(params: JsonObject): Promise<JsonObject> {
    const client = await this.client();
    return (await client.complete(params as CompleteRequest['params'], options())) as JsonObject;
  }
}

const options = () => ({ timeout: REQUEST_TIMEOUT_MS });

/** Every page of a list, in the server's order. */
async function allPages<T>(
  page: (params: { cursor: string } | undefined) => Promise<[T[], string | undefined]>,
): Promise<JsonObject[]> {
  const listed: T[] = [];
  let cursor: string | undefined;
  do {
    const [items, next] = await page(cursor ? { cursor } : undefined);
    listed.push(...items);
    cursor = next;
  } while (cursor);
  return listed as JsonObject[];
}
