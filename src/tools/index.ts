import { dirname } from 'node:path';
import { ConfigError } from '../config/load.js';
import type { ToolgateConfig, ToolSourceConfig } from '../config/schema.js';
import type { DemoEntities } from '../domain/demo-entities.js';
import { DemoToolSource } from './demo.js';
import { McpToolSource } from './mcp.js';
import type { ToolSource } from './tool.js';

/** The builtin sources, by the name a config gives them. */
const BUILTIN: Record<string, (id: string, context: ToolSourceContext) => ToolSource> = {
  demo: (id, context) => new DemoToolSource(id, context.demoEntities),
};

export interface ToolSourceContext {
  /** The demo source's entities, in the server's database. */
  demoEntities: DemoEntities;
  /** Where the config names this source, for error messages. */
  where: string;
  /** The config file's directory: relative paths in a source's config are relative to it. */
  baseDir?: string;
}

export async function createToolSource(
  id: string,
  config: ToolSourceConfig,
  context: ToolSourceContext,
): Promise<ToolSource> {
  if (config.type === 'builtin') {
    const make = BUILTIN[id];
    if (!make)
      throw new ConfigError(
        `${context.where}: no builtin tool source is called "${id}" (builtin: ${Object.keys(BUILTIN).join(', ')}; a source written in code is given to createServer as toolSources)`,
      );
    return make(id, context);
  }
  return McpToolSource.start(id, config, { where: context.where, baseDir: context.baseDir ?? process.cwd() });
}

/**
 * Starts every configured source at once (MCP servers connect in parallel). If any fails, the ones that
 * started are closed again (no child process outlives a failed start) and the error names each failure.
 */
export async function createToolSources(
  config: ToolgateConfig['toolSources'],
  context: { demoEntities: DemoEntities; configFile: string | null },
): Promise<Map<string, ToolSource>> {
  const where = context.configFile ?? '<config>';
  const baseDir = context.configFile ? dirname(context.configFile) : process.cwd();
  const entries = Object.entries(config);
  const started = await Promise.allSettled(
    entries.map(([id, sourceConfig]) =>
      createToolSource(id, sourceConfig, {
        demoEntities: context.demoEntities,
        where: `${where}: toolSources.${id}`,
        baseDir,
      }),
    ),
  );
  const failures = started.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  if (failures.length > 0) {
    await Promise.allSettled(
      started.flatMap((result) => (result.status === 'fulfilled' ? [result.value.close()] : [])),
    );
    if (failures.length === 1) throw failures[0];
    throw new ConfigError(failures.map((error) => (error instanceof Error ? error.message : String(error))).join('\n'));
  }
  return new Map(entries.map(([id], i) => [id, (started[i] as PromiseFulfilledResult<ToolSource>).value]));
}
