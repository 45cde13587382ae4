import { createHash } from 'node:crypto';
import type { ToolDefinition } from '../records.js';

/** What naming needs of a tool (or of anything a gateway names the same way: an upstream server's prompts). */
type NamedTool = Pick<ToolDefinition, 'id' | 'source' | 'name'>;

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The names the model sees for an agent's tools: the tool's own name where it is API-valid and unique
 * among the agent's tools, else `<source>_<name>` made valid; mapped back to tool ids.
 */
export class ToolNames {
  readonly #toModel = new Map<string, string>();
  readonly #toTool = new Map<string, string>();

  constructor(tools: NamedTool[]) {
    const counts = new Map<string, number>();
    for (const tool of tools) counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1);
    const ownName = (tool: NamedTool) => counts.get(tool.name) === 1 && VALID.test(tool.name);
    // Two passes: every tool that can keep its own name has it before any prefixed name is made, so a prefixed name
    // (`a_search` for a:search) never takes the own name of another tool (x:a_search).
    for (const tool of tools.filter(ownName)) this.#assign(tool.id, tool.name);
    for (const tool of tools.filter((tool) => !ownName(tool))) {
      let name = modelSafe(`${tool.source}_${tool.name}`);
      if (this.#toTool.has(name)) name = modelSafe(`${name}_${hash(tool.id)}`);
      this.#assign(tool.id, name);
    }
  }

  #assign(toolId: string, name: string): void {
    this.#toModel.set(toolId, name);
    this.#toTool.set(name, toolId);
  }

  modelName(toolId: string): string {
    // A tool the agent no longer has (or never had): the name the model used, so its transcript reads as it wrote it.
    return this.#toModel.get(toolId) ?? modelSafe(toolId.slice(toolId.indexOf(':') + 1) || toolId);
  }

  toolId(modelName: string): string | undefined {
    return this.#toTool.get(modelName);
  }
}

function modelSafe(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  return cleaned.length <= 64 ? cleaned : `${cleaned.slice(0, 55)}_${hash(name)}`;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}
