// Content validation against MCP's restricted requestedSchema beyond the confirmation form: enums (plain and
// titled), multi-select, string formats, required on ACCEPT only, hostile keys; and over HTTP, INVALID_CONTENT
// naming the field for a schema a listener asked with, while nothing changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentBytes, validateContent } from '../../src/domain/gate/content.js';
import { DbObserver } from '../support/db-snapshot.js';
import { callStep, call, startScenario, textStep, type Scenario } from '../support/scenario.js';

const SCHEMA = {
  type: 'object',
  properties: {
    color: { type: 'string', enum: ['red', 'green'] },
    size: {
      type: 'string',
      oneOf: [
        { const: 's', title: 'Small' },
        { const: 'l', title: 'Large' },
      ],
    },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2 },
    titled: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'x', title: 'X' },
          { const: 'y', title: 'Y' },
        ],
      },
    },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    level: { type: 'integer', enum: [1, 2, 3] },
    name: { type: 'string', maxLength: 3 },
  },
  required: ['color'],
};

describe("validateContent, the rest of MCP's restricted schema", () => {
  it.each([
    [{ color: 'red' }, null],
    [{ color: 'blue' }, ['color']],
    [{ color: 'red', size: 'l' }, null],
    [{ color: 'red', size: 'Large' }, ['size']],
    [{ color: 'red', tags: ['a', 'c'] }, null],
    [{ color: 'red', tags: [] }, ['tags']],
    [{ color: 'red', tags: ['a', 'b', 'c'] }, ['tags']],
    [{ color: 'red', tags: ['a', 'a'] }, ['tags']],
    [{ color: 'red', tags: ['d'] }, ['tags']],
    [{ color: 'red', tags: 'a' }, ['tags']],
    [{ color: 'red', titled: ['y'] }, null],
    [{ color: 'red', titled: ['Y'] }, ['titled']],
    [{ color: 'red', email: 'a@b.example' }, null],
    [{ color: 'red', email: 'not an email' }, ['email']],
    [{ color: 'red', site: 'https://example.com/x' }, null],
    [{ color: 'red', site: 'example.com' }, ['site']],
    [{ color: 'red', day: '2026-02-28' }, null],
    [{ color: 'red', day: '2026-02-30' }, ['day']],
    [{ color: 'red', at: '2026-02-28T10:00:00Z' }, null],
    [{ color: 'red', at: '2026-02-28 10:00' }, ['at']],
    [{ color: 'red', level: 2 }, null],
    [{ color: 'red', level: 4 }, ['level']],
    [{ color: 'red', name: '😀😀😀' }, null],
    [{ color: 'red', name: 'abcd' }, ['name']],
    [{ color: null }, ['color']],
    [JSON.parse('{"color":"red","__proto__":{"admin":true}}'), ['__proto__']],
    [{ color: 'red', constructor: 'x' }, ['constructor']],
  ])('%j → %j', (content, path) => {
    const problem = validateContent(SCHEMA, 'ACCEPT', content);
    expect(problem?.path ?? null).toEqual(path);
    if (problem) expect(problem.message).toContain(path![0]);
  });

  it('checks an email in linear time: 100,000 dots between two "@" are refused at once', () => {
    const started = performance.now();
    // V8's backtracking takes seconds on this (quadratic), and the server would answer nobody meanwhile.
    expect(validateContent(SCHEMA, 'ACCEPT', { color: 'red', email: `a@${'.'.repeat(100_000)}@` })?.path).toEqual([
      'email',
    ]);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('required applies to ACCEPT (with or without content), not to DECLINE', () => {
    expect(validateContent(SCHEMA, 'ACCEPT', null)).toEqual({ path: ['color'], message: 'color is required.' });
    expect(validateContent(SCHEMA, 'ACCEPT', {})).toEqual({ path: ['color'], message: 'color is required.' });
    expect(validateContent(SCHEMA, 'DECLINE', null)).toBeNull();
    expect(validateContent(SCHEMA, 'DECLINE', { size: 's' })).toBeNull();
    expect(validateContent(SCHEMA, 'DECLINE', { size: 'm' })?.path).toEqual(['size']);
  });

  it('keeps a hostile key out of the message, but names it in the path', () => {
    const key = 'k'.repeat(10_000);
    const problem = validateContent(SCHEMA, 'ACCEPT', { color: 'red', [key]: 1 });
    expect(problem?.path).toEqual([key]);
    expect(problem!.message.length).toBeLessThan(300);
  });

  it('measures content in bytes of UTF-8 JSON, and a value too deep to serialise as unbounded', () => {
    expect(contentBytes(null)).toBe(0);
    expect(contentBytes({ a: '€' })).toBe(Buffer.byteLength('{"a":"€"}'));
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(contentBytes({ a: deep })).toBe(Infinity);
  });
});

describe("INVALID_CONTENT over HTTP for a listener's own form", () => {
  let s: Scenario;
  let db: DbObserver;
  beforeAll(async () => {
    s = await startScenario({
      tools: [{ name: 'ship', annotations: { destructiveHint: true } }],
      listeners: [
        {
          priority: 10,
          onToolPreExecute(event) {
            event.setElicitationRequest({ message: 'Ship it? Choose a carrier.', requestedSchema: SCHEMA, _meta: {} });
          },
        },
      ],
      script: [callStep(call('ship', {})), textStep('shipped')],
    });
    db = new DbObserver(s.h.database);
  });
  afterAll(async () => {
    await db.close();
    await s.close();
  });

  it('names the field at fault, changes nothing, and takes the right answer afterwards', async () => {
    const { turn } = await s.start('ship it');
    const id = turn.pendingElicitations[0].id;
    const before = await db.snapshot();
    for (const [content, field] of [
      [{ color: 'blue' }, ['input', 'content', 'color']],
      [{ color: 'red', tags: ['z'] }, ['input', 'content', 'tags']],
      [{ color: 'red', email: 'nope' }, ['input', 'content', 'email']],
      [{ size: 's' }, ['input', 'content', 'color']],
      [null, ['input', 'content', 'color']],
      [{ color: 'red', extra: true }, ['input', 'content', 'extra']],
      [['red'], ['input', 'content']],
    ] as const) {
      const result = await s.resolve(id, 'ACCEPT', content);
      expect(result.userErrors).toHaveLength(1);
      expect(result.userErrors[0]).toMatchObject({ code: 'INVALID_CONTENT', field });
      expect(result.elicitation).toBeNull();
    }
    expect(await db.snapshot()).toEqual(before);
    expect(s.tools.count('ship')).toBe(0);
    const accepted = await s.resolve(id, 'ACCEPT', { color: 'green', tags: ['a'], day: '2026-12-24' });
    expect(accepted.userErrors).toEqual([]);
    expect(accepted.turn.status).toBe('COMPLETED');
    expect(s.tools.count('ship')).toBe(1);
  });
});
