import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/postgres/statements.js';
import { TEST_POSTGRES } from '../support/postgres.js';

// What jsonb is given: the same JSON when it can hold it, the value with U+FFFD where it cannot (NUL characters and
// unpaired surrogates, in strings and keys), and a text's own backslashes kept exactly.
describe('JSON for a jsonb parameter', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: TEST_POSTGRES });
    await client.connect();
  });
  afterAll(() => client.end());

  const roundTrip = async (value: unknown) =>
    (await client.query<{ value: unknown }>('SELECT $1::jsonb AS value', [json(value)])).rows[0]!.value;

  it.each([
    ['storable text and emoji', { a: ['héllo 👋', 1, null, true], b: { c: '世界' } }],
    ["a text's own backslash before u0000", { path: 'C:\\u0000\\ud800', k: '\\\\u0000' }],
    ['control characters jsonb takes', { bell: '\u0007', tab: '\t' }],
  ])('keeps %s exactly', async (_label, value) => {
    expect(JSON.parse(json(value))).toEqual(value);
    expect(await roundTrip(value)).toEqual(value);
  });

  it.each([
    ['a NUL character', { s: 'a\u0000b' }, { s: 'a\uFFFDb' }],
    ['a lone high surrogate', ['x\uD83D'], ['x\uFFFD']],
    ['a lone low surrogate in a key', { '\uDC4Bk': 1 }, { '\uFFFDk': 1 }],
    ['the last high surrogate, among storable text', { a: 'ok', b: ['\uDBFF', 'x'] }, { a: 'ok', b: ['\uFFFD', 'x'] }],
  ])('replaces %s with U+FFFD, which jsonb takes', async (_label, value, stored) => {
    expect(JSON.parse(json(value))).toEqual(stored);
    expect(await roundTrip(value)).toEqual(stored);
  });
});
