// What a gateway passes through besides tools: the resources, prompts and completions of the upstream MCP servers
// its agent has whole (`<source>:*` in its tools), as the servers give them. Prompts are named as the gateway's
// tools are (their own name where unique, else `<source>_<name>`); resource URIs are the servers' own, and a read
// goes to the server that lists the URI, else to each server in the agent's order until one has it.
import { isGateway } from '../domain/gateway.js';
import { ToolNames } from '../domain/gate/tool-names.js';
import type { JsonObject } from '../domain/records.js';
import type { SourceOffers, UpstreamChange } from '../tools/tool.js';
import type { AppDeps } from './deps.js';

/** No gateway agent with this id: the session's agent was removed. */
export class UnknownGateway extends Error {
  constructor(readonly agentId: string) {
    super(`No gateway agent "${agentId}"`);
  }
}

/** The gateway has no prompt of this name. (An upstream server's refusals are thrown as its own errors.) */
export class UnknownPrompt extends Error {
  constructor(readonly promptName: string) {
    super(`Prompt ${promptName} not found`);
  }
}

async function offersOf(app: AppDeps, agentId: string): Promise<SourceOffers[]> {
  const agent = await app.store.getAgent(agentId);
  if (!agent || !isGateway(agent)) throw new UnknownGateway(agentId);
  return app.tools.offersFor?.(agent) ?? [];
}

type Capability = 'resources' | 'subscribe' | 'prompts' | 'completions';

/** The agent's sources that declared `capability`, in the agent's order. */
async function offering(app: AppDeps, agentId: string, capability: Capability): Promise<SourceOffers[]> {
  const all = await offersOf(app, agentId);
  const declared = await Promise.all(all.map(({ offers }) => offers.capabilities()));
  return all.filter((_, index) => declared[index]![capability]);
}

/** Each item of every source, the first of each key kept (a later server's duplicate is not reachable anyway). */
async function listEach(
  sources: SourceOffers[],
  list: (source: SourceOffers) => Promise<JsonObject[]>,
  key: (item: JsonObject) => unknown,
): Promise<JsonObject[]> {
  const lists = await Promise.all(sources.map(list));
  const seen = new Set<unknown>();
  return lists.flat().filter((item) => !seen.has(key(item)) && seen.add(key(item)));
}

export async function listGatewayResources(app: AppDeps, agentId: string): Promise<JsonObject[]> {
  const sources = await offering(app, agentId, 'resources');
  return listEach(
    sources,
    ({ offers }) => offers.listResources(),
    (resource) => resource.uri,
  );
}

export async function listGatewayResourceTemplates(app: AppDeps, agentId: string): Promise<JsonObject[]> {
  const sources = await offering(app, agentId, 'resources');
  return listEach(
    sources,
    ({ offers }) => offers.listResourceTemplates(),
    (template) => template.uriTemplate,
  );
}

/** The sources to ask for `uri`, in order: the one that lists it, else every one that serves resources. */
async function resourceOwners(app: AppDeps, agentId: string, uri: string, capability: Capability) {
  const sources = await offering(app, agentId, capability);
  if (sources.length <= 1) return sources;
  for (const source of sources) {
    const listed = await source.offers.listResources().catch(() => []);
    if (listed.some((resource) => resource.uri === uri)) return [source];
  }
  return sources;
}

/** Asks each source in turn; the first answer wins, and when none has one the first refusal is thrown. */
async function firstAnswer<T>(sources: SourceOffers[], ask: (source: SourceOffers) => Promise<T>): Promise<T> {
  let refusal: unknown = null;
  for (const source of sources) {
    try {
      return await ask(source);
    } catch (error) {
      refusal ??= error;
    }
  }
  throw refusal ?? new ResourceNotFound();
}

/** No server of the gateway serves resources. */
export class ResourceNotFound extends Error {
  constructor() {
    super('Resource not found');
  }
}

export async function readGatewayResource(app: AppDeps, agentId: string, uri: string): Promise<JsonObject> {
  const owners = await resourceOwners(app, agentId, uri, 'resources');
  return firstAnswer(owners, ({ offers }) => offers.readResource(uri));
}

/** Subscribes at the server that has `uri`; the result stops it (once). */
export async function subscribeGatewayResource(
  app: AppDeps,
  agentId: string,
  uri: string,
): Promise<{ source: string; unsubscribe(): Promise<void> }> {
  const owners = await resourceOwners(app, agentId, uri, 'subscribe');
  return firstAnswer(owners, async ({ source, offers }) => {
    await offers.subscribe(uri);
    let subscribed = true;
    return {
      source,
      unsubscribe: async () => {
        if (!subscribed) return;
        subscribed = false;
        await offers.unsubscribe(uri);
      },
    };
  });
}

/** The gateway's names of its servers' prompts, and back. */
async function promptNames(app: AppDeps, agentId: string) {
  const sources = await offering(app, agentId, 'prompts');
  const lists = await Promise.all(sources.map(({ offers }) => offers.listPrompts()));
  const prompts = sources.flatMap(({ source, offers }, index) =>
    lists[index]!.map((prompt) => ({ source, offers, prompt, id: `${source}:${String(prompt.name)}` })),
  );
  const names = new ToolNames(prompts.map(({ source, prompt, id }) => ({ id, source, name: String(prompt.name) })));
  return { prompts, names };
}

export async function listGatewayPrompts(app: AppDeps, agentId: string): Promise<JsonObject[]> {
  const { prompts, names } = await promptNames(app, agentId);
  return prompts.map(({ prompt, id }) => ({ ...prompt, name: names.modelName(id) }));
}

/** The prompt this gateway name stands for; UnknownPrompt when there is none. */
async function gatewayPrompt(app: AppDeps, agentId: string, name: string) {
  const { prompts, names } = await promptNames(app, agentId);
  const id = names.toolId(name);
  const found = prompts.find((prompt) => prompt.id === id);
  if (!found) throw new UnknownPrompt(name);
  return found;
}

export async function getGatewayPrompt(
  app: AppDeps,
  agentId: string,
  name: string,
  args: Record<string, string> | undefined,
): Promise<JsonObject> {
  const { offers, prompt } = await gatewayPrompt(app, agentId, name);
  return offers.getPrompt(String(prompt.name), args);
}

const NO_COMPLETIONS: JsonObject = { completion: { values: [], hasMore: false } };

/**
 * completion/complete for a prompt's argument (at the prompt's server, by its own name) or a resource template's
 * (at the server that lists the template); nothing to suggest when that server offers no completions.
 */
export async function completeGatewayArgument(app: AppDeps, agentId: string, params: JsonObject): Promise<JsonObject> {
  const ref = params.ref as JsonObject;
  const completing = await offering(app, agentId, 'completions');
  if (ref.type === 'ref/prompt') {
    const { source, offers, prompt } = await gatewayPrompt(app, agentId, String(ref.name));
    if (!completing.some((c) => c.source === source)) return NO_COMPLETIONS;
    return offers.complete({ ...params, ref: { ...ref, name: prompt.name } });
  }
  for (const { offers } of completing) {
    const templates = await offers.listResourceTemplates().catch(() => []);
    if (templates.some((template) => template.uriTemplate === ref.uri)) return offers.complete(params);
  }
  return NO_COMPLETIONS;
}

/** Calls `listener` with each change the gateway's servers announce; returns what stops it. */
export async function watchGatewayOffers(
  app: AppDeps,
  agentId: string,
  listener: (change: UpstreamChange & { source: string }) => void,
): Promise<() => void> {
  const sources = await offersOf(app, agentId);
  const stops = sources.map(({ source, offers }) => offers.onChange((change) => listener({ ...change, source })));
  return () => stops.forEach((stop) => stop());
}
