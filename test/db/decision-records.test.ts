// The decision records on both backends: each gate outcome appends a signed, hash-chained record in the transaction
// of its change; an export verifies offline, and each tampering is named (docs/receipts.md).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  argumentsDigest,
  publicJwk,
  sealRecord,
  verifyRecords,
  type DecisionRecord,
  type ReceiptSigner,
} from '../../src/domain/decision-records.js';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { SqlStore } from '../../src/db/sql-store.js';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import { freshPostgresDatabase } from '../support/postgres.js';
import { ACCEPT, AGENT, agentConfig, answer, at, CANCEL, DECLINE, pausedTurn } from './spec/fixtures.js';

const signer = (keyId: string): ReceiptSigner => ({
  keyId,
  privateKey: generateKeyPairSync('ed25519').privateKey,
});
const DEPLOYMENT = signer('deployment-1');
const KEYS = [publicJwk(DEPLOYMENT)];

interface Backend {
  name: string;
  /** Two stores on one new database (as two instances would have), signing with `receipts`. */
  open(receipts: ReceiptSigner): Promise<{ stores: [SqlStore, SqlStore]; cleanup(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'SQLite',
    async open(receipts) {
      const dir = mkdtempSync(join(tmpdir(), 'toolgate-receipts-'));
      const path = join(dir, 'toolgate.db');
      const stores: [SqlStore, SqlStore] = [
        new SqliteStore(openDatabase({ path }), { receipts }),
        new SqliteStore(openDatabase({ path }), { receipts }),
      ];
      return {
        stores,
        async cleanup() {
          for (const store of stores) await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open(receipts) {
      const database = await freshPostgresDatabase();
      const stores: [SqlStore, SqlStore] = [
        await PostgresStore.open(database.url, { receipts }),
        await PostgresStore.open(database.url, { receipts }),
      ];
      return {
        stores,
        async cleanup() {
          for (const store of stores) await store.close();
          await database.drop();
        },
      };
    },
  },
];

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** A run with an edited accept, a decline, a cancel, an expiry and two calls that ran; its exported records. */
async function recordedRun(store: SqlStore): Promise<{ records: DecisionRecord[]; edited: Record<string, string> }> {
  await store.syncAgent(agentConfig(AGENT), at(0));
  const paused = await pausedTurn(store, { elicitations: 3 });
  const [first, second, third] = paused.elicitations;
  const edited = { note: 'n1, as the reviewer wrote it' };
  await answer(store, first!.id, { ...ACCEPT, arguments: edited });
  await answer(store, second!.id, DECLINE);
  await answer(store, third!.id, ACCEPT);
  const writer = store.unleasedTurnWriter(paused.turn.id);
  expect(await writer.markToolStarted({ toolCallId: first!.toolCallId, now: at(11) })).toBe(true);
  expect(await writer.markToolStarted({ toolCallId: third!.toolCallId, now: at(11) })).toBe(true);
  const cancelled = await pausedTurn(store, { now: at(20) });
  await answer(store, cancelled.elicitations[0]!.id, CANCEL, { now: at(21) });
  await pausedTurn(store, { now: at(30), expiresAt: at(40) });
  await store.expireDueTurns(at(50), 10);
  return { records: await store.decisionRecords(null, null), edited: { digest: argumentsDigest(edited) } };
}

describe.each(backends)('decision records on $name', (backend) => {
  it('records every outcome, bound to the arguments that ran, in one chain that verifies', async () => {
    const opened = await backend.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    const { records, edited } = await recordedRun(opened.stores[0]);
    expect(records.map((r) => r.kind)).toEqual([
      ...['ASKED', 'ASKED', 'ASKED', 'ACCEPTED', 'DECLINED', 'ACCEPTED', 'RAN', 'RAN'],
      ...['ASKED', 'CANCELLED', 'ASKED', 'EXPIRED'],
    ]);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
    const [accepted, ran] = [records[3]!, records[6]!];
    expect(accepted.argsDigest).toBe(edited.digest);
    expect(accepted.actor).toEqual({ id: 'user-ann', identity: null });
    expect(ran.argsDigest).toBe(edited.digest);
    expect(ran.argsDigest).not.toBe(records[0]!.argsDigest);
    expect(verifyRecords(records, KEYS)).toBeNull();
    expect(await opened.stores[0].decisionRecords(at(11), at(21))).toHaveLength(4);
  });

  it('keeps one linear chain when two instances answer at once', async () => {
    const opened = await backend.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    const [one, two] = opened.stores;
    await one.syncAgent(agentConfig(AGENT), at(0));
    const turns = await Promise.all(Array.from({ length: 6 }, () => pausedTurn(one)));
    await Promise.all(turns.map((t, i) => answer(i % 2 ? one : two, t.elicitations[0]!.id, i % 3 ? ACCEPT : DECLINE)));
    const records = await two.decisionRecords(null, null);
    expect(records).toHaveLength(12);
    expect(verifyRecords(records, KEYS)).toBeNull();
  });
});

describe('verifying an export names the first bad record', () => {
  let exported: DecisionRecord[] = [];
  it('on a run recorded by the SQLite store', async () => {
    const opened = await backends[0]!.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    exported = (await recordedRun(opened.stores[0])).records;
    expect(verifyRecords(exported, KEYS)).toBeNull();
  });

  it('a row whose argument digest was changed', () => {
    const tampered = exported.map((r) => (r.seq === 7 ? { ...r, argsDigest: '0'.repeat(64) } : r));
    expect(verifyRecords(tampered, KEYS)).toMatchObject({ seq: 7, problem: expect.stringContaining('altered') });
  });

  it('a deleted record', () => {
    const deleted = exported.filter((r) => r.seq !== 5);
    expect(verifyRecords(deleted, KEYS)).toMatchObject({ seq: 6, problem: expect.stringContaining('missing') });
  });

  it('two records reordered', () => {
    const reordered = [...exported];
    [reordered[4], reordered[5]] = [reordered[5]!, reordered[4]!];
    expect(verifyRecords(reordered, KEYS)).toMatchObject({ seq: 6, problem: expect.stringContaining('out of order') });
  });

  it('a record signed with an unknown key', () => {
    const stranger = signer('stranger');
    const [head, prev] = [exported[0]!, null];
    const forged = [sealRecord(head, prev, stranger), ...exported.slice(1)];
    expect(verifyRecords(forged, KEYS)).toMatchObject({ seq: 1, problem: expect.stringContaining('unknown key') });
  });

  it('a call that ran with arguments no accepting decision was bound to, even re-signed with the real key', () => {
    const resealed: DecisionRecord[] = [];
    for (const r of exported) {
      const draft = r.seq === 7 ? { ...r, argsDigest: exported[0]!.argsDigest } : r;
      const last = resealed.at(-1);
      resealed.push(sealRecord(draft, last ? { seq: last.seq, hash: last.hash } : null, DEPLOYMENT));
    }
    expect(verifyRecords(resealed, KEYS)).toMatchObject({
      seq: 7,
      problem: expect.stringContaining('0 accepting decisions'),
    });
  });
});
