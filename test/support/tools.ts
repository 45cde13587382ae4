// A builtin tool source for tests: tools with chosen annotations that count how often they ran.
import type { JsonObject, ToolAnnotations } from '../../src/domain/records.js';
import type { Tool, ToolSource } from '../../src/tools/tool.js';

export interface CountingTool {
  name: string;
  annotations?: ToolAnnotations;
  description?: string;
  /** The tool's input schema; default: any object. */
  inputSchema?: JsonObject;
  /** What the tool returns; throw to fail. */
  run?: (args: JsonObject) => Promise<string> | string;
}

export class CountingToolSource implements ToolSource {
  /** Arguments of every run, by tool name. */
  readonly runs = new Map<string, JsonObject[]>();
  readonly #tools: Tool[];

  constructor(
    readonly id: string,
    tools: CountingTool[],
  ) {
    this.#tools = tools.map((spec) => ({
      id: `${id}:${spec.name}`,
      source: id,
      name: spec.name,
      label: spec.annotations?.title ?? spec.name,
      description: spec.description ?? `The ${spec.name} test tool.`,
      inputSchema: spec.inputSchema ?? { type: 'object', properties: {}, additionalProperties: true },
      annotations: spec.annotations ?? {},
      execute: async (args: JsonObject) => {
        this.runs.set(spec.name, [...(this.runs.get(spec.name) ?? []), args]);
        const text = spec.run ? await spec.run(args) : `${spec.name} ran with ${JSON.stringify(args)}`;
        return { text, isError: false };
      },
    }));
  }

  count(name: string): number {
    return this.runs.get(name)?.length ?? 0;
  }

  async listTools(): Promise<Tool[]> {
    return this.#tools;
  }

  async close(): Promise<void> {}
}
