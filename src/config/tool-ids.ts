import type { ToolDefinition } from '../domain/records.js';
import { ConfigError } from './load.js';
import type { ToolgateConfig } from './schema.js';

/**
 * Checks the agents' tool ids against what the sources list at start: an exact id that no source lists is a
 * typo (or a server that changed), and so is an override for such a tool. `<source>:*` patterns are not
 * checked against the list: a source may offer tools later (MCP list_changed).
 */
export function checkAgentTools(
  config: Pick<ToolgateConfig, 'agents'>,
  file: string,
  tools: Pick<ToolDefinition, 'id' | 'source' | 'name'>[],
): void {
  const known = new Set(tools.map((tool) => tool.id));
  const offered = (source: string) => {
    const names = tools.filter((tool) => tool.source === source).map((tool) => tool.name);
    return names.length === 0
      ? `"${source}" lists no tools`
      : `"${source}" lists: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}`;
  };
  const problems: string[] = [];
  config.agents.forEach((agent, i) => {
    agent.tools.forEach((id, j) => {
      if (!id.endsWith(':*') && !known.has(id))
        problems.push(
          `${file}: agents[${i}].tools[${j}]: no tool source lists "${id}" (${offered(id.split(':')[0]!)})`,
        );
    });
    for (const id of Object.keys(agent.toolConfirmation)) {
      if (!id.endsWith(':*') && !known.has(id))
        problems.push(
          `${file}: agents[${i}].toolConfirmation.${id}: no tool source lists "${id}" (${offered(id.split(':')[0]!)})`,
        );
    }
  });
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
}
