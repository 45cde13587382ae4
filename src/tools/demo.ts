import type Database from 'better-sqlite3';
import type { JsonObject } from '../domain/records.js';
import type { Tool, ToolSource, ToolSourceHealth } from './tool.js';

const SEED = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];

/**
 * The builtin `demo` source: a small entity store in the server's SQLite file, with a read-only list,
 * a create and a destructive delete of several ids.
 */
export class DemoToolSource implements ToolSource {
  readonly #tools: Tool[];

  constructor(
    readonly id: string,
    db: Database.Database,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS demo_entities (
      id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, created_at TEXT NOT NULL)`);
    const count = db.prepare('SELECT count(*) AS n FROM demo_entities').get() as { n: number };
    const insert = db.prepare('INSERT INTO demo_entities (name, created_at) VALUES (?, ?)');
    if (count.n === 0 && !db.prepare("SELECT 1 FROM sqlite_sequence WHERE name = 'demo_entities'").get()) {
      db.transaction(() => SEED.forEach((name) => insert.run(name, new Date().toISOString())))();
    }
    const list = db.prepare('SELECT id, name FROM demo_entities ORDER BY id');
    const remove = db.prepare('DELETE FROM demo_entities WHERE id = ?');

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
          const rows = list.all() as { id: number; name: string }[];
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
          const result = insert.run(name, new Date().toISOString());
          return { text: `Created entity ${result.lastInsertRowid} ${name}.`, isError: false };
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
          const deleted = db.transaction(() => ids.filter((v) => remove.run(v).changes > 0))() as number[];
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
