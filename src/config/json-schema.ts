// The config file's JSON Schema, generated from the zod schema, for editors (`"$schema"` in a config file).
// `npm run config:schema` writes schema/toolgate.config.schema.json; a test fails when it is stale.
import { z } from 'zod';
import { configSchema } from './schema.js';

export const CONFIG_SCHEMA_FILE = 'schema/toolgate.config.schema.json';

export function configJsonSchema(): string {
  // `io: 'input'`: what a person writes (fields with defaults are optional), not what the loader returns.
  const schema = z.toJSONSchema(configSchema, { io: 'input', target: 'draft-2020-12' });
  return `${JSON.stringify({ ...schema, $id: 'https://toolgate.dev/schema/toolgate.config.schema.json', title: 'toolgate config' }, null, 2)}\n`;
}
