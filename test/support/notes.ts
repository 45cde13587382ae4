// A notes agent's parts the answer tests share, through the API and through the use cases: edit_note's schema, a
// model that calls the tool its message names by a verb, and listeners that veto protected notes or ask about some
// calls for reasons of their own.
import type { ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import type { AgentConfig } from '../../src/config/schema.js';
import type { JsonObject, ToolCall } from '../../src/domain/records.js';
import type { ModelRequest, ModelResponse } from '../../src/models/model.js';
import { call, callStep, textStep } from './scenario.js';
import type { CountingTool } from './tools.js';

/** An id (required), optional text, priority and tag (a pattern V8's backtracking engine takes minutes on). */
export const NOTE_SCHEMA: JsonObject = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1 },
    text: { type: 'string' },
    priority: { type: 'integer' },
    tag: { type: 'string', pattern: '^(a+)+$' },
  },
  required: ['id'],
  additionalProperties: false,
};

/**
 * The tools notesModel calls: edit_note, always_note (set to ALWAYS by NOTES_GATING), ask_read, and slow_read,
 * read-only, which answers once `slowRead` resolves.
 */
export function notesTools(slowRead: () => Promise<void>): CountingTool[] {
  return [
    { name: 'edit_note' },
    { name: 'always_note' },
    { name: 'ask_read' },
    {
      name: 'slow_read',
      annotations: { readOnlyHint: true },
      run: async () => {
        await slowRead();
        return 'read';
      },
    },
  ];
}

/** The notes agent's gating: always_note asks every time. */
export const NOTES_GATING: Partial<AgentConfig> = { toolConfirmation: { 't:always_note': 'ALWAYS' } };

/**
 * The model: "edit <id>" calls edit_note {id}; "always <id>" always_note {id}; "ask <id>" ask_read (which asks), then
 * edit_note {id}, in one step; "both <id>" slow_read (read-only: runs unasked), then edit_note {id}. After the tools
 * answer, it is done. Call ids are unique per thread.
 */
export function notesModel(request: ModelRequest): ModelResponse {
  const last = request.messages.at(-1)!;
  if (last.role !== 'USER') return textStep('Done.');
  const [verb, id = 'n1'] = (last.text ?? '').split(' ');
  const n = request.messages.length;
  if (verb === 'always') return callStep(call('always_note', { id }, `call_always_${n}`));
  const edit = call('edit_note', { id }, `call_edit_${n}`);
  if (verb === 'ask') return callStep(call('ask_read', {}, `call_ask_${n}`), edit);
  if (verb === 'both') return callStep(call('slow_read', {}, `call_read_${n}`), edit);
  return callStep(edit);
}

/** Vetoes every call of a note with the id "protected"; `seen`, if given, records each call it sees by call id. */
export function protectNotes(seen?: Map<string, JsonObject[]>): ToolPreExecuteListener {
  return {
    priority: 100,
    onToolPreExecute(event) {
      seen?.set(event.toolCall.id, [...(seen.get(event.toolCall.id) ?? []), structuredClone(event.toolCall.arguments)]);
      if (event.toolCall.arguments.id === 'protected') event.setVeto('protected notes are read-only');
    },
  };
}

/**
 * Asks about the calls `about` picks with a request of its own (not grantable), whatever the gating says: a policy of
 * its own, as a strict plugin's, which no remembered approval stands in for.
 */
export function askingListener(about: (call: ToolCall) => boolean, message: string): ToolPreExecuteListener {
  return {
    priority: 50,
    onToolPreExecute(event) {
      if (!about(event.toolCall)) return;
      event.setElicitationRequest({ message, requestedSchema: { type: 'object', properties: {} }, _meta: {} });
    },
  };
}

/** Asks about every note with the id "big". */
export const bigNotes = askingListener((call) => call.arguments.id === 'big', 'Big notes need a look every time.');
