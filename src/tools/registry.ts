import type { Agent } from '../domain/records.js';
import type { SourceOffers, Tool, ToolCatalog, ToolSource } from './tool.js';

/** True when a tool id matches an agent's entry: an exact id, or `<source>:*` for all of a source's tools. */
export function matchesToolPattern(pattern: string, toolId: string): boolean {
  return pattern.endsWith(':*') ? toolId.startsWith(pattern.slice(0, -1)) : pattern === toolId;
}

/** All configured tool sources; resolves an agent's tool patterns against what the sources list now. */
export class ToolRegistry implements ToolCatalog {
  constructor(readonly sources: ReadonlyMap<string, ToolSource>) {}

  async allTools(): Promise<Tool[]> {
    const lists = await Promise.all([...this.sources.values()].map((source) => source.listTools()));
    return lists.flat();
  }

  async toolsFor(agent: Pick<Agent, 'toolIds'>): Promise<Tool[]> {
    const wanted = new Set(agent.toolIds.map((pattern) => pattern.split(':')[0]!));
    const lists = await Promise.all(
      [...this.sources.values()].filter((s) => wanted.has(s.id)).map((s) => s.listTools()),
    );
    const tools = lists.flat();
    // The agent's order: patterns first to last, each in its source's order, no duplicates.
    const seen = new Set<string>();
    const ordered: Tool[] = [];
    for (const pattern of agent.toolIds) {
      for (const tool of tools) {
        if (!seen.has(tool.id) && matchesToolPattern(pattern, tool.id)) {
          seen.add(tool.id);
          ordered.push(tool);
        }
      }
    }
    return ordered;
  }

  /**
   * What the sources the agent has whole (`<source>:*`) offer besides tools, in the agent's order: a gateway passes
   * their resources, prompts and completions through. A source named tool by tool gives its tools only.
   */
  offersFor(agent: Pick<Agent, 'toolIds'>): SourceOffers[] {
    const offered: SourceOffers[] = [];
    for (const pattern of agent.toolIds) {
      if (!pattern.endsWith(':*')) continue;
      const source = this.sources.get(pattern.slice(0, -2));
      if (source?.offers && !offered.some((o) => o.source === source.id))
        offered.push({ source: source.id, offers: source.offers });
    }
    return offered;
  }

  /** The agent's tool with this id, as its source lists it now; null when the agent no longer has it. */
  async toolOf(agent: Pick<Agent, 'toolIds'>, toolId: string): Promise<Tool | null> {
    return (await this.toolsFor(agent)).find((tool) => tool.id === toolId) ?? null;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.sources.values()].map((source) => source.close()));
  }
}
