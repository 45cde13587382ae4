import type { Model, ModelRequest, ModelResponse } from './model.js';

export type ScriptStep = ModelResponse | ((request: ModelRequest) => ModelResponse);

/**
 * A deterministic offline model. With a script it answers with each step in turn (the last step repeats);
 * without one it follows simple demo rules on the last message. It records every request, so a test can
 * show what reached the model.
 */
export class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  #next = 0;

  /**
   * `recordRequests: false` keeps no requests: the server's own demo model (src/models/index.ts), where the list
   * would grow with every model call for as long as the server runs (tests read `requests` of models they make).
   */
  constructor(
    private readonly script?: ScriptStep[],
    private readonly options: { recordRequests?: boolean } = {},
  ) {}

  async generate(request: ModelRequest): Promise<ModelResponse> {
    if (this.options.recordRequests !== false)
      this.requests.push(structuredClone({ ...request, signal: undefined, onTextDelta: undefined }));
    const response = this.#answer(request);
    // "Streams" its text as one piece, so that the demo shows streamed text (turnEvents) without a real model.
    if (response.text) {
      try {
        request.onTextDelta?.(response.text);
      } catch {
        // Best-effort, as for a real model.
      }
    }
    return response;
  }

  #answer(request: ModelRequest): ModelResponse {
    if (!this.script || this.script.length === 0) return demoRules(request);
    const step = this.script[Math.min(this.#next++, this.script.length - 1)]!;
    return typeof step === 'function' ? step(request) : structuredClone(step);
  }
}

/**
 * The demo rules: after tool results, summarise them; otherwise read the user's message for
 * "list", "create <name>" or "delete <ids>" and call the matching tool by its model-facing name.
 */
export function demoRules(request: ModelRequest): ModelResponse {
  const last = request.messages.at(-1);
  if (!last) return { text: 'Hello! Ask me to list, create or delete entities.', toolCalls: [] };
  if (last.role === 'TOOL') {
    const results: string[] = [];
    for (let i = request.messages.length - 1; i >= 0 && request.messages[i]!.role === 'TOOL'; i--) {
      results.unshift(request.messages[i]!.text ?? '');
    }
    // A decline with instructions is a new request: "only delete 3" after declining "delete 1, 2 and 3".
    for (const result of results) {
      const declined = /^User declined execution of (\S+?)(?:: (.+)|\.)$/s.exec(result);
      if (!declined) continue;
      const retry = declined[2] ? intent(declined[2], request, `call_${request.messages.length}`) : null;
      return retry ?? { text: `Understood: I did not run ${declined[1]}.`, toolCalls: [] };
    }
    return { text: `Done. ${results.join(' ')}`, toolCalls: [] };
  }
  return (
    intent(last.text ?? '', request, `call_${request.messages.length}`) ?? {
      text: request.tools.some((t) => t.name.endsWith('read_graph'))
        ? 'I can remember facts. Try "remember Ada wrote the first program", "what do you know about Ada?" or "forget Ada".'
        : 'I can list, create or delete entities. Try "delete entities 1, 2 and 3".',
      toolCalls: [],
    }
  );
}

/** The tool call a request in plain words asks for, if any. */
function intent(message: string, request: ModelRequest, id: string): ModelResponse | null {
  const text = message.toLowerCase();
  const tool = (suffix: string) => request.tools.find((t) => t.name === suffix || t.name.endsWith(`_${suffix}`))?.name;
  if (tool('read_graph')) return memoryIntent(message, tool, id);
  const deleteTool = tool('delete_entities');
  if (deleteTool && /\b(delete|remove)\b/.test(text)) {
    const ids = [...text.matchAll(/\d+/g)].map((m) => Number(m[0]));
    if (ids.length > 0) return { text: null, toolCalls: [{ id, name: deleteTool, arguments: { ids } }] };
  }
  const createTool = tool('create_entity');
  const create = /\b(?:create|add)\b(?: an?)?(?: entity)?(?: named| called)?\s+"?([^"]+?)"?\s*$/i.exec(message);
  if (createTool && create)
    return { text: null, toolCalls: [{ id, name: createTool, arguments: { name: create[1]!.trim() } }] };
  const listTool = tool('list_entities');
  if (listTool && /\b(list|show)\b/.test(text))
    return { text: null, toolCalls: [{ id, name: listTool, arguments: {} }] };
  return null;
}

/**
 * The knowledge-graph tools of @modelcontextprotocol/server-memory (examples/memory-agent.json):
 * "remember <name> <fact>", "forget <name>", "what do you know about <name>", "what do you know".
 */
function memoryIntent(message: string, tool: (suffix: string) => string | undefined, id: string): ModelResponse | null {
  const call = (name: string | undefined, args: Record<string, unknown>): ModelResponse | null =>
    name ? { text: null, toolCalls: [{ id, name, arguments: args }] } : null;
  const remember = /\bremember(?: that)?\s+(\S+)\s+(.+?)\.?\s*$/i.exec(message);
  const forget = /\bforget(?: about)?\s+(\S+?)\.?\s*$/i.exec(message);
  const about = /\b(?:know about|recall)\s+(\S+?)\??\s*$/i.exec(message);
  return (
    (remember &&
      call(tool('create_entities'), {
        entities: [{ name: remember[1], entityType: 'note', observations: [remember[2]] }],
      })) ??
    (forget && call(tool('delete_entities'), { entityNames: [forget[1]] })) ??
    (about && call(tool('open_nodes'), { names: [about[1]] })) ??
    (/\b(what do you know|show (?:the |your )?memory)\b/i.test(message) ? call(tool('read_graph'), {}) : null)
  );
}
