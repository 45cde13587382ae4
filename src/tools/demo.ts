import type { DemoEntities } from '../domain/demo-entities.js';
import type { JsonObject } from '../domain/records.js';
import type { Tool, ToolSource, ToolSourceHealth } from './tool.js';

/**
 * The builtin `demo` source: a small entity store in the server's database, with a read-only list,
 * a create and a destructive delete of several ids.
 */
export class DemoToolSource implements ToolSource {
  readonly #tools: Tool[];

  constructor(
    readonly id: string,
    entities: DemoEntities,
  ) {
    const define = (tool: Omit<Tool, 'id' | 'source' | 'label'> & { title: string }): Tool => ({
      ...tool,
      id: `${id}:${tool.name}`,
      source: id,
      label: tool.title,
      annotations: { title: tool.title, ...tool.annotations },
    });
    this.#tools = [
      define({
        name: 'list_entities',
        title: 'List entities',
        description: 'Lists every entity in the demo store with its id and name.',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        annotations: { readOnlyHint: true, openWorldHint: false },
        async execute() {
          const rows = await entities.list();
          return {
            text: rows.length
              ? `Entities: ${rows.map((r) => `${r.id} ${r.name}`).join(', ')}.`
              : 'There are no entities.',
            isError: false,
          };
        },
      }),
      define({
        name: 'create_entity',
        title: 'Create entity',
        description: 'Creates one entity with the given name in the demo store.',
        inputSchema: {
          type: 'object',
          properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
          required: ['name'],
          additionalProperties: false,
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        async execute(args: JsonObject) {
          const name = args.name;
          if (typeof name !== 'string' || name.length === 0)
            return { text: 'create_entity needs a non-empty "name".', isError: true };
          const created = await entities.create(name);
          return { text: `Created entity ${created} ${name}.`, isError: false };
        },
      }),
      define({
        name: 'delete_entities',
        title: 'Delete entities',
        description: 'Permanently deletes the entities with the given ids from the demo store.',
        inputSchema: {
          type: 'object',
          properties: { ids: { type: 'array', items: { type: 'integer' }, minItems: 1 } },
          required: ['ids'],
          additionalProperties: false,
        },
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
        async execute(args: JsonObject) {
          const ids = args.ids;
          if (!Array.isArray(ids) || ids.some((v) => !Number.isInteger(v)))
            return { text: 'delete_entities needs "ids": a list of integers.', isError: true };
          const deleted = await entities.delete(ids as number[]);
          const missing = ids.filter((v) => !deleted.includes(v));
          return {
            text:
              `Deleted ${deleted.length} entit${deleted.length === 1 ? 'y' : 'ies'}${deleted.length ? ` (${deleted.join(', ')})` : ''}.` +
              (missing.length ? ` Not found: ${missing.join(', ')}.` : ''),
            isError: false,
          };
        },
      }),
    ];
  }

  async listTools(): Promise<Tool[]> {
    return this.#tools;
  }

  /** Code in this process on the server's own database: ready whenever the server is (the database has its own check). */
  async health(): Promise<ToolSourceHealth> {
    return { ready: true };
  }

  async close(): Promise<void> {}
}
