// `toolgate audit export` and `toolgate audit verify` in a process of their own, from the sources, on an SQLite
// database whose store recorded a run: the export verifies with the published key, each tampering is named with a
// non-zero exit, and an unknown key or a bad file is one line.
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicJwk, sealRecord, type DecisionRecord } from '../../src/domain/decision-records.js';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import { ACCEPT, AGENT, agentConfig, answer, at, pausedTurn } from '../db/spec/fixtures.js';
import { nodeArgsFor } from '../support/entries.js';
import { tempDir } from '../support/harness.js';

const temp = tempDir();
afterAll(() => temp.cleanup());
const database = join(temp.dir, 'toolgate.db');
const signer = { keyId: 'deployment-1', privateKey: generateKeyPairSync('ed25519').privateKey };
const jwks = join(temp.dir, 'keys.json');

async function toolgate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...nodeArgsFor('src/cli.ts'), ...args], {
      cwd: temp.dir,
      encoding: 'utf8',
      env: { ...process.env, TOOLGATE_DB: database, TOOLGATE_CONFIG: '' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Writes `records` as an export file named `name`; its path. */
function exportFile(name: string, records: readonly DecisionRecord[]): string {
  const path = join(temp.dir, name);
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return path;
}

let exported: DecisionRecord[] = [];
beforeAll(async () => {
  const store = new SqliteStore(openDatabase({ path: database }), { receipts: signer });
  await store.syncAgent(agentConfig(AGENT), at(0));
  const paused = await pausedTurn(store, { elicitations: 2 });
  await answer(store, paused.elicitations[0]!.id, { ...ACCEPT, arguments: { note: 'edited' } });
  await answer(store, paused.elicitations[1]!.id, ACCEPT);
  await store.unleasedTurnWriter(paused.turn.id).markToolStarted({
    toolCallId: paused.elicitations[0]!.toolCallId,
    now: at(11),
  });
  await store.close();
  writeFileSync(jwks, JSON.stringify({ keys: [publicJwk(signer)] }));
});

describe('toolgate audit', () => {
  it('exports the records as JSON Lines, which verify against the published keys', async () => {
    const result = await toolgate(['audit', 'export']);
    expect(result.code).toBe(0);
    exported = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as DecisionRecord);
    expect(exported.map((r) => r.kind)).toEqual(['ASKED', 'ASKED', 'ACCEPTED', 'ACCEPTED', 'RAN']);
    const file = exportFile('all.jsonl', exported);
    expect(await toolgate(['audit', 'verify', file, '--keys', jwks])).toMatchObject({
      code: 0,
      stdout: `${file}: 5 records verify\n`,
    });
  });

  it('exports a range (--from, --to), which verifies as a range', async () => {
    const result = await toolgate(['audit', 'export', '--from', at(10), '--to', at(11)]);
    expect(result.stdout.trim().split('\n')).toHaveLength(3);
    const file = join(temp.dir, 'range.jsonl');
    writeFileSync(file, result.stdout);
    const verified = await toolgate(['audit', 'verify', file, '--keys', jwks]);
    expect(verified).toMatchObject({ code: 0, stdout: expect.stringContaining('a range from record 3') });
  });

  it.each([
    [
      'a changed argument digest',
      (r: DecisionRecord[]) => r.map((x) => (x.seq === 5 ? { ...x, argsDigest: 'f'.repeat(64) } : x)),
      'record 5: hash does not match its contents',
    ],
    ['a deleted record', (r: DecisionRecord[]) => r.filter((x) => x.seq !== 3), 'record 4: seq 4 follows 2'],
    [
      'two records reordered',
      (r: DecisionRecord[]) => [r[0]!, r[2]!, r[1]!, ...r.slice(3)],
      'record 3: seq 3 follows 1',
    ],
    [
      'a record whose key id was changed',
      (r: DecisionRecord[]) => r.map((x) => (x.seq === 2 ? { ...x, keyId: 'stranger' } : x)),
      'record 2: hash does not match',
    ],
  ])('names the first bad record: %s', async (_, tamper, named) => {
    const file = exportFile('tampered.jsonl', tamper(exported));
    const result = await toolgate(['audit', 'verify', file, '--keys', jwks]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(named);
  });

  /** `records` with `change` applied, re-hashed and re-signed with the deployment's own key: only the bindings differ. */
  const resealed = (change: (r: DecisionRecord[]) => DecisionRecord[]) => (r: DecisionRecord[]) => {
    const out: DecisionRecord[] = [];
    for (const draft of change(r)) {
      const last = out.at(-1);
      out.push(sealRecord(draft, last ? { seq: last.seq, hash: last.hash } : null, signer));
    }
    return out;
  };

  it.each([
    [
      'a replayed accept (a copy of an ACCEPTED record, re-signed)',
      resealed((r) => [...r, r[2]!]),
      'all.jsonl:6: record 6: a second ACCEPTED of request',
    ],
    [
      'a second run of one accept (a copy of the RAN record, re-signed)',
      resealed((r) => [...r, r[4]!]),
      'all.jsonl:6: record 6: a second RAN of the same call',
    ],
    [
      'a run of other arguments than the accept was bound to (re-signed)',
      resealed((r) => r.map((x) => (x.kind === 'RAN' ? { ...x, argsDigest: r[0]!.argsDigest } : x))),
      'all.jsonl:5: record 5: ran with 0 accepting decisions bound to its argument digest',
    ],
  ])('names a broken binding even in a chain signed with the right key: %s', async (_, tamper, named) => {
    const file = exportFile('all.jsonl', tamper(exported));
    const result = await toolgate(['audit', 'verify', file, '--keys', jwks]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(named);
  });

  it('names the line of the file, blank lines counted', async () => {
    const file = join(temp.dir, 'spaced.jsonl');
    const deleted = exported.filter((x) => x.seq !== 3);
    writeFileSync(file, `\n${deleted.map((r) => JSON.stringify(r)).join('\n\n')}\n`);
    const result = await toolgate(['audit', 'verify', file, '--keys', jwks]);
    expect(result.stderr).toContain('spaced.jsonl:6: record 4: seq 4 follows 2');
  });

  it('refuses records signed with a key the JWKS does not hold', async () => {
    const other = { keyId: 'other', privateKey: generateKeyPairSync('ed25519').privateKey };
    const otherKeys = join(temp.dir, 'other-keys.json');
    writeFileSync(otherKeys, JSON.stringify({ keys: [publicJwk(other)] }));
    const result = await toolgate(['audit', 'verify', exportFile('good.jsonl', exported), '--keys', otherKeys]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('record 1: signed with an unknown key "deployment-1"');
  });

  it('a missing --keys or an unreadable file is one line and exit 2', async () => {
    expect(await toolgate(['audit', 'verify', 'x.jsonl'])).toMatchObject({ code: 2 });
    const missing = await toolgate(['audit', 'verify', 'nothing.jsonl', '--keys', jwks]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  });
});
