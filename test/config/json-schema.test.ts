// The committed JSON Schema is the one the zod schema generates, and it describes real configs for editors.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { CONFIG_SCHEMA_FILE, configJsonSchema } from '../../src/config/json-schema.js';
import { parseConfig } from '../../src/config/load.js';

const root = new URL('../../', import.meta.url);
const committed = readFileSync(new URL(CONFIG_SCHEMA_FILE, root), 'utf8');
const examples = readdirSync(new URL('examples/', root)).filter((name) => name.endsWith('.json'));

// Formats (uri) are left to the loader: ajv-formats is not a dependency of ours.
const compiled = new Ajv2020({ allErrors: true, strict: false, validateFormats: false }).compile(JSON.parse(committed));
const validator = () => compiled;

describe('schema/toolgate.config.schema.json', () => {
  it('is current: `npm run config:schema` writes exactly what is committed', () => {
    expect(committed, 'schema/toolgate.config.schema.json is stale: run `npm run config:schema`').toBe(
      configJsonSchema(),
    );
  });

  it.each(examples)('accepts examples/%s, which the loader accepts too', (name) => {
    const config = JSON.parse(readFileSync(new URL(`examples/${name}`, root), 'utf8'));
    const validate = validator();
    expect(validate(config), JSON.stringify(validate.errors)).toBe(true);
    expect(() => parseConfig(config, name)).not.toThrow();
  });

  it('accepts the built-in demo config', () => {
    expect(validator()(demoConfig)).toBe(true);
  });

  it('rejects what the loader rejects: an unknown field, a wrong type, an MCP source without command or url', () => {
    const validate = validator();
    const base = { models: { m: { provider: 'scripted' } }, agents: [{ id: 'a', name: 'A', model: 'm' }] };
    expect(validate(base)).toBe(true);
    expect(validate({ ...base, extra: 1 })).toBe(false);
    expect(validate({ ...base, agents: [{ id: 'a', name: 'A', model: 'm', maxIterations: 'ten' }] })).toBe(false);
    expect(validate({ ...base, toolSources: { fs: { type: 'mcp' } } })).toBe(false);
    expect(validate({ ...base, toolSources: { fs: { type: 'mcp', command: 'node', args: ['server.js'] } } })).toBe(
      true,
    );
  });
});
