// The package's entry point, `import { createServer } from 'toolgate'`: what a program that embeds toolgate may use.
// Deliberately small; everything else is internal and may change in any release. api/toolgate.api.d.ts is this
// surface as the compiler declares it, and `npm run package-api:check` (in `npm test`) fails when it changes without
// that file being updated with it (docs/embedding.md).
export { createServer } from './embed.js';
export type { Toolgate, ToolgateOptions } from './embed.js';
export { ConfigError, loadConfigFile, parseConfig } from './config/load.js';
export type { LoadedConfig } from './config/load.js';
export type { ToolgateConfig } from './config/schema.js';
export { defineToolSource } from './tools/code.js';
export type { FunctionTool } from './tools/code.js';
export type { Tool, ToolExecutionContext, ToolSource, ToolSourceHealth } from './tools/tool.js';
export type { JsonObject, ToolAnnotations, ToolDefinition, ToolResult } from './domain/records.js';
