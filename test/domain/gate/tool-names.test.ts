import { describe, expect, it } from 'vitest';
import { ToolNames } from '../../../src/domain/gate/tool-names.js';
import { tool } from '../../support/definitions.js';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;
const from = (source: string, name: string) => tool(name, {}, { id: `${source}:${name}`, source });

describe('ToolNames', () => {
  it("uses a tool's own name where it is valid and unique, and maps it back", () => {
    const names = new ToolNames([from('demo', 'list_entities'), from('fs', 'read_file')]);
    expect(names.modelName('demo:list_entities')).toBe('list_entities');
    expect(names.toolId('read_file')).toBe('fs:read_file');
  });

  it('prefixes names that two sources share, and keeps them apart', () => {
    const names = new ToolNames([from('a', 'search'), from('b', 'search')]);
    expect(names.modelName('a:search')).toBe('a_search');
    expect(names.modelName('b:search')).toBe('b_search');
    expect(names.toolId('a_search')).toBe('a:search');
    expect(names.toolId('b_search')).toBe('b:search');
    expect(names.toolId('search')).toBeUndefined();
  });

  it("never gives a tool's own valid, unique name to another tool's prefixed name, whatever the order", () => {
    for (const tools of [
      [from('a', 'search'), from('b', 'search'), from('x', 'a_search')],
      [from('x', 'a_search'), from('a', 'search'), from('b', 'search')],
    ]) {
      const names = new ToolNames(tools);
      expect(names.modelName('x:a_search')).toBe('a_search');
      expect(names.toolId('a_search')).toBe('x:a_search');
      expect(names.modelName('a:search')).toMatch(/^a_search_[0-9a-f]{8}$/);
      expect(names.toolId(names.modelName('a:search'))).toBe('a:search');
      expect(names.modelName('b:search')).toBe('b_search');
    }
  });

  it('makes API-invalid names valid', () => {
    const names = new ToolNames([from('fs', 'read.file'), from('x', 'ü'.repeat(70))]);
    expect(names.modelName('fs:read.file')).toBe('fs_read_file');
    expect(names.toolId('fs_read_file')).toBe('fs:read.file');
    const long = names.modelName(`x:${'ü'.repeat(70)}`);
    expect(long).toMatch(VALID);
    expect(names.toolId(long)).toBe(`x:${'ü'.repeat(70)}`);
  });

  it('gives every tool a distinct valid name even when prefixed names collide', () => {
    const tools = [from('a', 'b_c'), from('a_b', 'c'), from('z', 'a_b_c'), from('a', 'x.y'), from('a', 'x_y')];
    const names = new ToolNames(tools);
    const modelNames = tools.map((t) => names.modelName(t.id));
    expect(new Set(modelNames).size).toBe(tools.length);
    for (const [i, name] of modelNames.entries()) {
      expect(name).toMatch(VALID);
      expect(names.toolId(name)).toBe(tools[i]!.id);
    }
  });

  it('does not map an unknown name', () => {
    expect(new ToolNames([from('a', 'x')]).toolId('y')).toBeUndefined();
  });
});
