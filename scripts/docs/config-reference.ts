// docs/reference/config.md from the config's JSON Schema (schema/toolgate.config.schema.json, itself generated from
// the zod schema in src/config/schema.ts): one table per top-level section, one row per field.
import { cell, code, generatedNotice, table } from './markdown.js';

/** A node of the JSON Schema that zod writes (no $ref: every schema is inline). */
interface Schema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  items?: Schema;
  default?: unknown;
  description?: string;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
}

interface Row {
  path: string;
  type: string;
  required: boolean;
  default: unknown;
  description: string;
}

/** What a map's key stands for, by the map's path (anything else is `<name>`). */
const KEY_NAMES: Record<string, string> = {
  models: '<model id>',
  toolSources: '<source id>',
  'agents[].toolConfirmation': '<tool id>',
};

const variantsOf = (s: Schema): Schema[] | undefined => s.anyOf ?? s.oneOf;
const isMap = (s: Schema): s is Schema & { additionalProperties: Schema } =>
  s.type === 'object' && !s.properties && typeof s.additionalProperties === 'object';

function typeOf(s: Schema): string {
  if (s.const !== undefined) return code(JSON.stringify(s.const));
  if (s.enum) return s.enum.map((v) => code(JSON.stringify(v))).join(', ');
  const variants = variantsOf(s);
  if (variants)
    return variants.map((v) => (v.properties ? `object (${variantName(v, variants)})` : typeOf(v))).join(' or ');
  if (s.type === 'array') return s.items ? `list of ${typeOf(s.items)}` : 'list';
  if (isMap(s)) {
    const values = s.additionalProperties;
    return Object.keys(values).length === 0 ? 'object' : `map of ${typeOf(values)}`;
  }
  if (s.type === 'object') return 'object';
  return s.type ?? 'any JSON';
}

const BIGGEST_INTEGER = Number.MAX_SAFE_INTEGER;

function constraints(s: Schema): string[] {
  const out: string[] = [];
  if (s.pattern) out.push(`matching ${code(s.pattern)}`);
  if (s.format) out.push(s.format);
  if (s.minLength === 1) out.push('not empty');
  else if (s.minLength !== undefined) out.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
  if (s.minItems !== undefined) out.push(`at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`);
  if (s.exclusiveMinimum !== undefined) out.push(`> ${s.exclusiveMinimum}`);
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined && s.maximum !== BIGGEST_INTEGER) out.push(`≤ ${s.maximum}`);
  return out;
}

/** A variant's name: its constant property (`type: "mcp"`), and the required fields that tell it from the others. */
function variantName(variant: Schema, siblings: Schema[]): string {
  const props = variant.properties ?? {};
  const constant = Object.entries(props).find(([, p]) => p.const !== undefined);
  const parts = constant ? [`${constant[0]} ${JSON.stringify(constant[1].const)}`] : [];
  const sameConstant = siblings.filter((other) => {
    if (other === variant || !constant) return false;
    return other.properties?.[constant[0]]?.const === constant[1].const;
  });
  if (sameConstant.length > 0 || !constant) {
    const own = (variant.required ?? []).filter((name) => !constant || name !== constant[0]);
    if (own.length > 0) parts.push(`with ${own.map((n) => `"${n}"`).join(', ')}`);
  }
  return parts.join(' ');
}

function walk(s: Schema, path: string, required: boolean, rows: Row[], form?: string): void {
  const description = [form ? `*${form}:*` : '', s.description ?? ''].filter(Boolean).join(' ');
  const type = [typeOf(s), ...constraints(s)].join(', ');
  rows.push({ path, type, required, default: s.default, description });
  children(s, path, rows, form);
}

function children(s: Schema, path: string, rows: Row[], form?: string): void {
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    if (path === '' && name === '$schema') continue;
    walk(property, path ? `${path}.${name}` : name, s.required?.includes(name) ?? false, rows, form);
  }
  if (isMap(s) && Object.keys(s.additionalProperties).length > 0) {
    const key = KEY_NAMES[path] ?? '<name>';
    const values = s.additionalProperties;
    // A map of plain values (headers, env) is described by its own row.
    if (values.properties || variantsOf(values) || values.type === 'array')
      walk(values, `${path}.${key}`, true, rows, form);
  }
  if (s.type === 'array' && s.items && (s.items.properties || variantsOf(s.items)))
    children(s.items, `${path}[]`, rows, form);
  const variants = variantsOf(s);
  if (variants) {
    for (const variant of variants) {
      if (!variant.properties) continue;
      children(variant, path, rows, variantName(variant, variants));
    }
  }
}

function defaultText(value: unknown): string {
  if (value === undefined) return '';
  return code(JSON.stringify(value));
}

export function configReference(schema: Schema): string {
  const sections: string[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (name === '$schema') continue;
    const rows: Row[] = [];
    walk(property, name, schema.required?.includes(name) ?? false, rows);
    sections.push(
      `## ${name}\n\n${table(
        ['Field', 'Type', 'Default', 'Description'],
        rows.map((r) => [
          code(r.path),
          `${r.type}${r.required ? ', **required**' : ''}`,
          defaultText(r.default),
          cell(r.description),
        ]),
      )}`,
    );
  }
  return `${generatedNotice('schema/toolgate.config.schema.json')}

# Config reference

Every field of the config file (\`TOOLGATE_CONFIG\`), from its JSON Schema,
[\`schema/toolgate.config.schema.json\`](../../schema/toolgate.config.schema.json), which \`npm run config:schema\`
writes from the zod schema the server validates with. What the sections do, with examples:
[Configuration](../config.md).

- A path reads \`agents[].tools\` for the \`tools\` of each entry of \`agents\`, and \`models.<model id>\` for each
  entry of the \`models\` object.
- A field of one form of a value (an MCP source over stdio, say) says which form in parentheses.
- A default is what the loader fills in when the field is left out; a description may name a default the server
  applies later.
- \`"env:NAME"\`, where a description allows it, reads the value from the environment at start.

${sections.join('\n\n')}
`;
}
