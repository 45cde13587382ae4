// The decision records on both backends: each gate outcome appends a signed, hash-chained record in the transaction
// of its change; an export verifies offline, and each tampering is named (docs/receipts.md).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  argumentsDigest,
  policyDigest,
  publicJwk,
  sealRecord,
  verifyRecords,
  type DecisionDraft,
  type DecisionRecord,
  type ReceiptSigner,
} from '../../src/domain/decision-records.js';
import type { AnswerIdentity, ElicitationAnswer, ElicitationApproval, JsonObject } from '../../src/domain/records.js';
import { AcceptanceUnverifiedError, type Store } from '../../src/domain/store.js';
import { PostgresStore } from '../../src/db/postgres/postgres-store.js';
import { SqlStore } from '../../src/db/sql-store.js';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import { freshPostgresDatabase } from '../support/postgres.js';
import {
  ACCEPT,
  acceptRemembering,
  AGENT,
  agentConfig,
  answer,
  ANN,
  at,
  CANCEL,
  DECLINE,
  pausedTurn,
  rememberablePause,
  rejection,
} from './spec/fixtures.js';

const signer = (keyId: string): ReceiptSigner => ({
  keyId,
  privateKey: generateKeyPairSync('ed25519').privateKey,
});
const DEPLOYMENT = signer('deployment-1');
const KEYS = [publicJwk(DEPLOYMENT)];

interface Backend {
  name: string;
  /** Two stores on one new database (as two instances would have), signing with `receipts`; `sql` runs a statement. */
  open(
    receipts: ReceiptSigner,
  ): Promise<{ stores: [SqlStore, SqlStore]; sql(statement: string): Promise<void>; cleanup(): Promise<void> }>;
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
        async sql(statement) {
          const db = new Database(path);
          try {
            db.exec(statement);
          } finally {
            db.close();
          }
        },
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
        async sql(statement) {
          const client = new pg.Client({ connectionString: database.url });
          await client.connect();
          try {
            await client.query(statement);
          } finally {
            await client.end();
          }
        },
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

// ---- quorum, the further outcomes, and the start that checks its accept -------------------------------------------

const QUORUM: ElicitationApproval = { roles: ['reviewer'], required: 2, requester: 'EXCLUDED', escalation: null };
const reviewer = (name: string): AnswerIdentity => ({
  name,
  issuer: 'https://idp.test',
  subject: name,
  roles: ['reviewer'],
});

/** An approver's answer as the answer use case sends it: unscoped, with who they are now. */
const approve = (store: Store, elicitationId: string, who: string, response: ElicitationAnswer, now = at(10)) =>
  store.resolveElicitation({
    elicitationId,
    ownerId: null,
    answeredBy: who,
    answeredAs: reviewer(who),
    answer: response,
    now,
  });

/**
 * Two of three reviewers under a four-eyes quorum: alice accepts the model's arguments, bob edits (which restarts the
 * count), carol accepts bob's arguments and completes it; the call runs with them and returns.
 */
async function quorumRun(store: SqlStore) {
  await store.syncAgent(agentConfig(AGENT), at(0));
  const paused = await pausedTurn(store, { approval: QUORUM });
  const request = paused.elicitations[0]!;
  const edited = { note: 'as bob wrote it' };
  expect((await approve(store, request.id, 'alice', ACCEPT)).ok).toBe(true);
  expect((await approve(store, request.id, 'bob', { ...ACCEPT, arguments: edited }, at(11))).ok).toBe(true);
  expect(await approve(store, request.id, 'carol', { ...ACCEPT, arguments: edited }, at(12))).toMatchObject({
    kind: 'resume',
  });
  const writer = store.unleasedTurnWriter(paused.turn.id);
  const running = { toolId: request.toolCall.toolId, arguments: edited, toolDefinitionDigest: 'd'.repeat(64) };
  expect(await writer.markToolStarted({ toolCallId: request.toolCallId, now: at(13), running })).toBe(true);
  await writer.finishTool({ message: { toolCallId: request.toolCallId, text: 'done' }, now: at(14) });
  return { records: await store.decisionRecords(null, null), edited, request };
}

/** `records` with `change` applied, every record re-hashed and re-signed with the deployment's key. */
function resealed(
  records: readonly DecisionRecord[],
  change: (records: DecisionRecord[]) => (DecisionDraft & Partial<DecisionRecord>)[],
): DecisionRecord[] {
  const out: DecisionRecord[] = [];
  for (const draft of change([...records])) {
    const last = out.at(-1);
    out.push(sealRecord(draft, last ? { seq: last.seq, hash: last.hash } : null, DEPLOYMENT));
  }
  return out;
}

describe.each(backends)('quorum, outcomes and the checked start on $name', (backend) => {
  it('records each approval of a quorum and the policy itself, and the export verifies', async () => {
    const opened = await backend.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    const { records, edited } = await quorumRun(opened.stores[0]);
    expect(records.map((r) => r.kind)).toEqual([
      'ASKED',
      'APPROVED',
      'APPROVED',
      'APPROVED',
      'ACCEPTED',
      'RAN',
      'RESULT',
    ]);
    const [asked, , , carol, accepted, ran, result] = records;
    expect(asked!.policy).toEqual(QUORUM);
    expect(asked!.policyDigest).toBe(policyDigest(QUORUM));
    expect(records.slice(1, 4).map((r) => [r.actor!.id, r.actor!.identity!.roles])).toEqual([
      ['alice', ['reviewer']],
      ['bob', ['reviewer']],
      ['carol', ['reviewer']],
    ]);
    expect([carol!.argsDigest, accepted!.argsDigest, ran!.argsDigest]).toEqual(Array(3).fill(argumentsDigest(edited)));
    expect(accepted!.actor!.id).toBe('carol');
    expect(ran!.toolDefinitionDigest).toBe('d'.repeat(64));
    expect(result).toMatchObject({
      argsDigest: ran!.argsDigest,
      resultDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(verifyRecords(records, KEYS)).toBeNull();
  });

  it('refuses to start a call whose ACCEPTED record was altered in the database, and writes nothing', async () => {
    const opened = await backend.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    const store = opened.stores[0];
    await store.syncAgent(agentConfig(AGENT), at(0));
    const paused = await pausedTurn(store, { elicitations: 2 });
    const [first, second] = paused.elicitations;
    await answer(store, first!.id, ACCEPT);
    await answer(store, second!.id, ACCEPT);
    await opened.sql(
      `UPDATE decision_records SET record = replace(record, '"argsDigest":"', '"argsDigest":"00')
       WHERE kind = 'ACCEPTED' AND tool_call_id = '${first!.toolCallId}'`,
    );
    const writer = store.unleasedTurnWriter(paused.turn.id);
    const running = (args: JsonObject) => ({
      toolId: first!.toolCall.toolId,
      arguments: args,
      toolDefinitionDigest: null,
    });
    const altered = await rejection(
      writer.markToolStarted({
        toolCallId: first!.toolCallId,
        now: at(11),
        running: running(first!.toolCall.arguments),
      }),
    );
    expect(altered).toBeInstanceOf(AcceptanceUnverifiedError);
    expect((altered as Error).message).toContain('the record was altered');
    // Accepted as asked, then run with other arguments: refused too.
    const other = await rejection(
      writer.markToolStarted({ toolCallId: second!.toolCallId, now: at(11), running: running({ note: 'other' }) }),
    );
    expect((other as Error).message).toContain('accepted other arguments than those about to run');
    expect(await store.listUnfinishedToolCalls(paused.turn.id)).toEqual([]);
    expect((await store.decisionRecords(null, null)).map((r) => r.kind)).not.toContain('RAN');
    // The arguments it accepted still start it.
    const asAccepted = running(second!.toolCall.arguments);
    expect(await writer.markToolStarted({ toolCallId: second!.toolCallId, now: at(12), running: asAccepted })).toBe(
      true,
    );
  });

  it('refuses to start a call whose ACCEPTED record is gone, or whose quorum records were thinned', async () => {
    const opened = await backend.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    const store = opened.stores[0];
    await store.syncAgent(agentConfig(AGENT), at(0));
    const paused = await pausedTurn(store, { approval: QUORUM, elicitations: 2 });
    const [first, second] = paused.elicitations;
    for (const e of [first!, second!]) {
      await approve(store, e.id, 'alice', ACCEPT);
      await approve(store, e.id, 'bob', ACCEPT);
    }
    await opened.sql(`DELETE FROM decision_records WHERE kind = 'ACCEPTED' AND tool_call_id = '${first!.toolCallId}'`);
    await opened.sql(
      `DELETE FROM decision_records WHERE kind = 'APPROVED' AND tool_call_id = '${second!.toolCallId}'
       AND record LIKE '%"alice"%'`,
    );
    const writer = store.unleasedTurnWriter(paused.turn.id);
    const start = (e: typeof first) =>
      rejection(
        writer.markToolStarted({
          toolCallId: e!.toolCallId,
          now: at(11),
          running: { toolId: e!.toolCall.toolId, arguments: e!.toolCall.arguments, toolDefinitionDigest: null },
        }),
      );
    expect(((await start(first)) as Error).message).toContain('0 ACCEPTED records');
    expect(((await start(second)) as Error).message).toContain('1 distinct approvals of its arguments');
  });

  it('records vetoes, refusals, results, interruptions and the use of a remembered approval', async () => {
    const opened = await backend.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    const store = opened.stores[0];
    await store.syncAgent(agentConfig(AGENT), at(0));
    const remembered = await rememberablePause(store);
    await answer(store, remembered.elicitations[0]!.id, acceptRemembering('AGENT', 3600), { grantId: 'grant-1' });
    const later = await pausedTurn(store, { now: at(20), mixed: true });
    const writer = store.unleasedTurnWriter(later.turn.id);
    const [lookup, wipe] = later.step.calls.map((c) => c.toolCall);
    await writer.appendToolMessages({
      messages: [
        {
          toolCallId: wipe!.id,
          text: 'Execution of wipe was denied: policy says no',
          decision: {
            kind: 'REFUSED',
            toolId: wipe!.toolId,
            arguments: wipe!.arguments,
            elicitationId: null,
            toolDefinitionDigest: 'e'.repeat(64),
            reason: 'policy says no',
          },
        },
      ],
      now: at(21),
    });
    const running = { toolId: lookup!.toolId, arguments: lookup!.arguments, toolDefinitionDigest: 'f'.repeat(64) };
    expect(await writer.markToolStarted({ toolCallId: lookup!.id, grantId: 'grant-1', now: at(22), running })).toBe(
      true,
    );
    // A crash after the start: the call is found unfinished and reported interrupted.
    await writer.finishTool({
      message: { toolCallId: lookup!.id, text: 'interrupted' },
      interrupted: true,
      now: at(23),
    });
    // Edited arguments vetoed once accepted, under a quorum: the veto names the request and its policy.
    const quorum = await pausedTurn(store, { now: at(30), approval: QUORUM });
    const request = quorum.elicitations[0]!;
    await approve(store, request.id, 'alice', ACCEPT, at(31));
    await approve(store, request.id, 'bob', ACCEPT, at(31));
    await store.unleasedTurnWriter(quorum.turn.id).appendToolMessages({
      messages: [
        {
          toolCallId: request.toolCallId,
          text: 'denied',
          decision: {
            kind: 'VETOED',
            toolId: request.toolCall.toolId,
            arguments: { note: 'vetoed' },
            elicitationId: request.id,
            toolDefinitionDigest: null,
            reason: 'no',
          },
        },
      ],
      now: at(32),
    });
    // A started call a failed turn answers as interrupted.
    const failing = await pausedTurn(store, { now: at(40), mixed: true, elicitations: 0 });
    const failingWriter = store.unleasedTurnWriter(failing.turn.id);
    const failingCall = failing.step.calls[0]!.toolCall;
    await failingWriter.markToolStarted({ toolCallId: failingCall.id, now: at(41) });
    await failingWriter.appendToolMessages({
      messages: [{ toolCallId: failingCall.id, text: 'interrupted', decision: { kind: 'INTERRUPTED' } }],
      now: at(42),
    });
    const records = await store.decisionRecords(null, null);
    expect(records.map((r) => r.kind)).toEqual([
      ...['ASKED', 'ACCEPTED', 'ASKED', 'REFUSED', 'RAN', 'INTERRUPTED'],
      ...['ASKED', 'APPROVED', 'APPROVED', 'ACCEPTED', 'VETOED'],
      ...['RAN', 'INTERRUPTED'],
    ]);
    expect(records[10]).toMatchObject({ elicitationId: request.id, policyDigest: policyDigest(QUORUM) });
    const [, accepted, , refused, ran, interrupted] = records;
    expect(accepted!.grantId).toBe('grant-1');
    expect(refused).toMatchObject({ reason: 'policy says no', toolDefinitionDigest: 'e'.repeat(64) });
    expect(ran).toMatchObject({
      grantId: 'grant-1',
      elicitationId: null,
      argsDigest: argumentsDigest(lookup!.arguments),
    });
    expect(interrupted).toMatchObject({ grantId: 'grant-1', argsDigest: ran!.argsDigest });
    expect(verifyRecords(records, KEYS)).toBeNull();
    // A run under a grant no ACCEPTED record recorded is named.
    const stray = resealed(records, (r) => r.map((x) => (x.kind === 'RAN' ? { ...x, grantId: 'grant-2' } : x)));
    expect(verifyRecords(stray, KEYS)).toMatchObject({ seq: 5, problem: expect.stringContaining('grant-2') });
  });
});

describe('verifying a quorum names the record that breaks its policy', () => {
  let exported: DecisionRecord[] = [];
  const seqOf = (kind: string, actor?: string) =>
    exported.find((r) => r.kind === kind && (actor === undefined || r.actor?.id === actor))!.seq;

  it('on a quorum run recorded by the SQLite store', async () => {
    const opened = await backends[0]!.open(DEPLOYMENT);
    cleanups.push(opened.cleanup);
    exported = (await quorumRun(opened.stores[0])).records;
    expect(verifyRecords(exported, KEYS)).toBeNull();
  });

  it('too few approvers of the accepted arguments (an approval deleted, the chain re-signed)', () => {
    const thinned = resealed(exported, (r) => r.filter((x) => !(x.kind === 'APPROVED' && x.actor?.id === 'bob')));
    expect(verifyRecords(thinned, KEYS)).toMatchObject({
      seq: seqOf('ACCEPTED') - 1,
      problem: 'accepted with 1 distinct approvals of its arguments; the policy requires 2',
    });
  });

  it('an approval by the requester under four eyes, or by someone without the role', () => {
    const byRequester = resealed(exported, (r) =>
      r.map((x) => (x.actor?.id === 'bob' ? { ...x, actor: { id: ANN, identity: reviewer(ANN) } } : x)),
    );
    expect(verifyRecords(byRequester, KEYS)).toMatchObject({
      seq: seqOf('APPROVED', 'bob'),
      problem: expect.stringContaining('FOUR_EYES'),
    });
    const noRole = resealed(exported, (r) =>
      r.map((x) =>
        x.actor?.id === 'carol' ? { ...x, actor: { id: 'carol', identity: { ...reviewer('carol'), roles: [] } } } : x,
      ),
    );
    expect(verifyRecords(noRole, KEYS)).toMatchObject({
      seq: seqOf('APPROVED', 'carol'),
      problem: expect.stringContaining('whom the policy does not allow'),
    });
  });

  it('a policy that is not the one its digest names, or an answer under another policy', () => {
    const weaker = resealed(exported, (r) =>
      r.map((x) => (x.kind === 'ASKED' ? { ...x, policy: { ...QUORUM, required: 1 } } : x)),
    );
    expect(verifyRecords(weaker, KEYS)).toMatchObject({
      seq: 1,
      problem: 'policyDigest is not the digest of its policy',
    });
    const swapped = resealed(exported, (r) =>
      r.map((x) =>
        x.kind === 'ASKED'
          ? { ...x, policy: { ...QUORUM, required: 1 }, policyDigest: policyDigest({ ...QUORUM, required: 1 }) }
          : x,
      ),
    );
    expect(verifyRecords(swapped, KEYS)).toMatchObject({
      seq: 2,
      problem: expect.stringContaining('policyDigest differs'),
    });
  });

  it('a replayed accept, a second run of one accept, and a run of other arguments', () => {
    const accepted = exported.find((r) => r.kind === 'ACCEPTED')!;
    const ran = exported.find((r) => r.kind === 'RAN')!;
    const replayed = resealed(exported, (r) => [...r, accepted]);
    expect(verifyRecords(replayed, KEYS)).toMatchObject({
      seq: exported.length + 1,
      problem: expect.stringContaining('a replayed accept'),
    });
    const twice = resealed(exported, (r) => [...r, ran]);
    expect(verifyRecords(twice, KEYS)).toMatchObject({
      seq: exported.length + 1,
      problem: expect.stringContaining('ran twice'),
    });
    const other = resealed(exported, (r) =>
      r.map((x) => (x.kind === 'RAN' ? { ...x, argsDigest: exported[0]!.argsDigest } : x)),
    );
    expect(verifyRecords(other, KEYS)).toMatchObject({
      seq: ran.seq,
      problem: expect.stringContaining(`record ${accepted.seq} accepted other arguments`),
    });
  });
});
