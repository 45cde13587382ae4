import type Database from 'better-sqlite3';
import { ConfigError } from '../config/load.js';
import type { ToolSourceConfig } from '../config/schema.js';
import { DemoToolSource } from './demo.js';
import type { ToolSource } from './tool.js';

/** The builtin sources, by the name a config gives them. */
const BUILTIN: Record<string, (id: string, db: Database.Database) => ToolSource> = {
  demo: (id, db) => new DemoToolSource(id, db),
};

export interface ToolSourceContext {
  /** The server's SQLite database, for builtin sources that keep state. */
  db: Database.Database;
  /** Where the config names this source, for error messages. */
  where: string;
}

export async function createToolSource(id: string, config: ToolSourceConfig, context: ToolSourceContext): Promise<ToolSource> {
  if (config.type === 'builtin') {
    const make = BUILTIN[id];
    if (!make) throw new ConfigError(`${context.where}: no builtin tool source is called "${id}" (builtin: ${Object.keys(BUILTIN).join(', ')})`);
    return make(id, context.db);
  }
  throw new ConfigError(`${context.where}.type: MCP tool sources are not available in this build`);
}
