import { describe, expect, it } from 'vitest';
import { normaliseToolCalls, type ToolCallContext } from '../../../src/domain/gate/tool-calls.js';
import { ToolNames } from '../../../src/domain/gate/tool-names.js';
import type { ToolDefinition } from '../../../src/domain/records.js';
import type { ModelToolCall } from '../../../src/models/model.js';
import { tool } from '../../support/definitions.js';

const from = (source: string, name: string) => tool(name, {}, { id: `${source}:${name}`, source });

/** A context over `tools`, with ids of ours numbered in order (call_ours_1, …). */
function context(tools: ToolDefinition[], overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  let next = 0;
  return {
    names: new ToolNames(tools),
    tools: new Map(tools.map((t) => [t.id, t])),
    usedIds: [],
    maxArgumentsBytes: 1000,
    maxArgumentsDepth: 8,
    newCallId: () => `call_ours_${++next}`,
    ...overrides,
  };
}

const call = (id: string, name: string, args: ModelToolCall['arguments'] = {}): ModelToolCall => ({
  id,
  name,
  arguments: args,
});

describe('normaliseToolCalls', () => {
  it("keeps the model's ids and arguments, and names each call by its tool's id and own name", () => {
    const calls = normaliseToolCalls(
      [call('c1', 'list_notes', { limit: 3 }), call('c2', 'edit_note', { id: 'n1' })],
      context([from('demo', 'list_notes'), from('demo', 'edit_note')]),
    );
    expect(calls).toEqual([
      { id: 'c1', name: 'list_notes', toolId: 'demo:list_notes', arguments: { limit: 3 } },
      { id: 'c2', name: 'edit_note', toolId: 'demo:edit_note', arguments: { id: 'n1' } },
    ]);
  });

  it('gives a call an id of ours when its own is empty, already in the thread, or taken by an earlier call', () => {
    const calls = normaliseToolCalls(
      [call('', 'x'), call('call_0', 'x'), call('c1', 'x'), call('c1', 'x')],
      context([from('s', 'x')], { usedIds: ['call_0'] }),
    );
    expect(calls.map((c) => c.id)).toEqual(['call_ours_1', 'call_ours_2', 'c1', 'call_ours_3']);
  });

  it('does not change the ids it is given as used', () => {
    const used = new Set(['call_0']);
    normaliseToolCalls([call('c1', 'x')], context([from('s', 'x')], { usedIds: used }));
    expect([...used]).toEqual(['call_0']);
  });

  it('maps a prefixed model-facing name back to its tool, and keeps the name the model used', () => {
    const calls = normaliseToolCalls([call('c1', 'b_search')], context([from('a', 'search'), from('b', 'search')]));
    expect(calls).toEqual([{ id: 'c1', name: 'search', toolId: 'b:search', modelName: 'b_search', arguments: {} }]);
  });

  it('names a call of a tool the agent does not have as the model did, under an unknown: id', () => {
    const calls = normaliseToolCalls([call('c1', 'made_up')], context([from('s', 'x')]));
    expect(calls).toEqual([{ id: 'c1', name: 'made_up', toolId: 'unknown:made_up', arguments: {} }]);
  });

  it('keeps arguments up to the size limit, and refuses a call over it with its arguments dropped', () => {
    const within = { text: 'a'.repeat(40) }; // {"text":"…"}: 51 bytes
    const over = { text: 'a'.repeat(41) };
    const calls = normaliseToolCalls(
      [call('c1', 'x', within), call('c2', 'x', over)],
      context([from('s', 'x')], { maxArgumentsBytes: 51 }),
    );
    expect(calls[0]).toEqual({ id: 'c1', name: 'x', toolId: 's:x', arguments: within });
    expect(calls[1]).toEqual({
      id: 'c2',
      name: 'x',
      toolId: 's:x',
      arguments: {},
      refusal: 'Execution of x was refused: its arguments are 52 bytes, over the limit of 51 bytes.',
    });
  });

  it('keeps arguments up to the depth limit, and refuses a deeper call, however deep, with its arguments dropped', () => {
    /** The arguments object, then `levels - 1` levels of arrays and objects in turn. */
    const nested = (levels: number) => {
      let value: unknown = 'leaf';
      for (let level = levels; level > 1; level--) value = level % 2 ? { k: value } : [value];
      return { v: value, flat: [1, 2] } as ModelToolCall['arguments'];
    };
    const refused = 'Execution of x was refused: its arguments are nested more than 8 levels deep.';
    // Far deeper than the stack holds for a recursive walk: refused all the same, and nothing throws.
    const calls = normaliseToolCalls(
      [call('c1', 'x', nested(8)), call('c2', 'x', nested(9)), call('c3', 'x', nested(200_000))],
      context([from('s', 'x')], { maxArgumentsBytes: 10_000_000 }),
    );
    expect(calls[0]).toEqual({ id: 'c1', name: 'x', toolId: 's:x', arguments: nested(8) });
    expect(calls[1]).toEqual({ id: 'c2', name: 'x', toolId: 's:x', arguments: {}, refusal: refused });
    expect(calls[2]).toEqual({ id: 'c3', name: 'x', toolId: 's:x', arguments: {}, refusal: refused });
  });

  it('makes what the model wrote storable: NUL characters and unpaired surrogates become U+FFFD', () => {
    const calls = normaliseToolCalls(
      [call('c\u00001', 'gh\uD800ost', { 'k\u0000': 'v\uDC00' })],
      context([from('s', 'x')]),
    );
    expect(calls).toEqual([
      {
        id: 'c\uFFFD1',
        name: 'gh\uFFFDost',
        toolId: 'unknown:gh\uFFFDost',
        arguments: { 'k\uFFFD': 'v\uFFFD' },
      },
    ]);
  });

  it('returns no calls for an answer without any', () => {
    expect(normaliseToolCalls([], context([from('s', 'x')]))).toEqual([]);
  });
});
