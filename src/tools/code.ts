// Tools written as functions, in the embedding program (createServer({ toolSources }), src/index.ts): one source of
// them, gated like every other tool (annotations, the agent's overrides, argument rules, approvers). The config names
// the source as `{"type": "builtin"}`, code in the server's process, like the demo's.
import type { JsonObject, ToolAnnotations, ToolResult } from '../domain/records.js';
import { invalidArgumentsText, mcpSchemaValidator } from './mcp-schemas.js';
import { toolLabel, type Tool, type ToolExecutionContext, type ToolSource, type ToolSourceHealth } from './tool.js';

/** A tool written as a function. */
export interface FunctionTool {
  /** Its name in the source: the tool's id is `<source id>:<name>`. */
  name: string;
  /** What the inbox and the MCP client show; default: `annotations.title`, else the name. */
  title?: string;
  /** What the model (or the MCP client) reads to decide when to call it. */
  description: string;
  /**
   * A JSON Schema of the arguments (`"type": "object"`); a call whose arguments it refuses does not run, and the model
   * reads why. Default: no arguments.
   */
  inputSchema?: JsonObject;
  /**
   * MCP's hints. Under the default gating only `readOnlyHint: true` runs without asking; `destructiveHint` and the
   * others are shown to whoever answers.
   */
  annotations?: ToolAnnotations;
  /**
   * Runs a call, once it passed the gate, at most once. A string is the result's text; `{ text, isError: true }` or a
   * thrown error is a failed call, which the model reads as `Execution of <name> failed: <text>`.
   */
  execute(args: JsonObject, context: ToolExecutionContext): Promise<string | ToolResult> | string | ToolResult;
}

const NO_ARGUMENTS: JsonObject = { type: 'object', properties: {}, additionalProperties: false };

/**
 * A tool source of functions, for createServer's `toolSources`. Throws at once for an id or a name a config could not
 * name, a name given twice, or an input schema that cannot be compiled.
 */
export function defineToolSource(id: string, tools: readonly FunctionTool[]): ToolSource {
  if (!/^[A-Za-z0-9_.-]+$/.test(id))
    throw new TypeError(`defineToolSource: the id "${id}" is not a tool source id (letters, digits, "_", "." or "-")`);
  const validators = mcpSchemaValidator();
  const seen = new Set<string>();
  const defined = tools.map((tool): Tool => {
    const where = `defineToolSource("${id}"): ${JSON.stringify(tool.name)}`;
    if (!/^\S+$/.test(tool.name)) throw new TypeError(`${where}: a tool's name is one or more characters, no spaces`);
    if (seen.has(tool.name)) throw new TypeError(`${where}: two tools have this name`);
    seen.add(tool.name);
    const inputSchema = tool.inputSchema ?? NO_ARGUMENTS;
    let validate: ReturnType<typeof validators.getValidator>;
    try {
      validate = validators.getValidator(inputSchema as Parameters<typeof validators.getValidator>[0]);
    } catch (error) {
      throw new TypeError(`${where}: the input schema cannot be used: ${(error as Error).message}`, { cause: error });
    }
    const annotations = { ...tool.annotations };
    return {
      id: `${id}:${tool.name}`,
      source: id,
      name: tool.name,
      label: toolLabel(tool.name, tool.title, annotations.title),
      description: tool.description,
      inputSchema,
      annotations,
      async execute(args, context) {
        const checked = validate(args);
        if (!checked.valid) return { text: invalidArgumentsText(checked.errorMessage), isError: true };
        const result = await tool.execute(args, context);
        return typeof result === 'string' ? { text: result, isError: false } : result;
      },
    };
  });
  return {
    id,
    listTools: async () => defined,
    // Code in this process: ready whenever the server is.
    health: async (): Promise<ToolSourceHealth> => ({ ready: true }),
    close: async () => {},
  };
}
