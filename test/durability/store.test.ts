// The durability mechanics of the SQLite store, on a real database file: the SQLite settings, turn leases
// (which process runs a RUNNING turn, and when another may take it over), and the database-level rule that a
// tool call has at most one TOOL message.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TurnLeases } from '../../src/agent/lease.js';
import { openDatabase, SqliteStore } from '../../src/db/sqlite/sqlite-store.js';
import type { TurnLease } from '../../src/domain/store.js';
import { agent } from '../support/definitions.js';

let dir: string;
let store: SqliteStore;
let now: Date;
const clock = () => now;

/** The agent the turns here belong to: a turn starts only for an agent that exists. */
const AGENT = agent();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  store = new SqliteStore(openDatabase({ path: join(dir, 'toolgate.db') }));
  now = new Date('2026-01-01T00:00:00.000Z');
  await store.syncAgent(AGENT, now.toISOString());
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runningTurn(id: string, lease?: TurnLease): Promise<string> {
  const result = await store.startTurn({
    turnId: id,
    newThreadId: `thr_${id}`,
    threadId: null,
    agentId: 'a',
    ownerId: 'u',
    message: 'hi',
    now: now.toISOString(),
    lease,
  });
  if (!result.ok) throw new Error(result.code);
  return id;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

const inSeconds = (seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

describe('SQLite settings', () => {
  it('opens the database in WAL mode, commits without an fsync each (the store syncs the WAL), with a busy timeout, automatic checkpoints and the batch journal in memory', () => {
    const pragma = (name: string) => store.sqlite.pragma(name, { simple: true });
    expect(pragma('journal_mode')).toBe('wal');
    expect(pragma('synchronous')).toBe(1); // NORMAL: durability comes from WalSync (test/db/wal-sync.test.ts)
    expect(pragma('busy_timeout')).toBe(5000);
    expect(pragma('wal_autocheckpoint')).toBe(1000);
    expect(pragma('journal_size_limit')).toBe(67_108_864);
    // 2 = MEMORY: a write batch's savepoint journal never spills into a temp file (two system calls per page).
    expect(pragma('temp_store')).toBe(2);
  });
});

describe('what is synced to disk, and when', () => {
  function recordingStore(synchronous?: 'FULL' | 'NORMAL') {
    const synced: string[] = [];
    const recorded = new SqliteStore(openDatabase({ path: join(dir, `${synchronous ?? 'default'}.db`) }), {
      synchronous,
      syncFile: async (path) => {
        synced.push(path);
      },
    });
    return { store: recorded, synced };
  }

  /** Turn t1, RUNNING, in a recording store (its writes are not synced until something asks). */
  async function withTurn(recorded: SqliteStore): Promise<void> {
    await recorded.syncAgent(AGENT, now.toISOString());
    const started = await recorded.startTurn({
      turnId: 't1',
      newThreadId: 'thr_t1',
      threadId: null,
      agentId: 'a',
      ownerId: 'u',
      message: 'hi',
      now: now.toISOString(),
    });
    expect(started.ok).toBe(true);
  }

  it('FULL (default): flush() fsyncs the WAL file (and its directory, once) after a commit, and not again without one', async () => {
    const { store: full, synced } = recordingStore();
    await withTurn(full);
    await full.unleasedTurnWriter('t1').markToolStarted({ toolCallId: 'c1', now: now.toISOString() });
    expect(synced).toEqual([join(dir, 'default.db-wal'), dir]);
    await full.flush();
    expect(synced).toHaveLength(2);
    await full.unleasedTurnWriter('t1').setIterations({ iterations: 1, now: now.toISOString() });
    await full.flush();
    expect(synced).toEqual([join(dir, 'default.db-wal'), dir, join(dir, 'default.db-wal')]);
    full.close();
  });

  it('NORMAL: flush() syncs nothing, but markToolStarted still returns only after the WAL fsync', async () => {
    const { store: relaxed, synced } = recordingStore('NORMAL');
    await withTurn(relaxed);
    await relaxed.unleasedTurnWriter('t1').setIterations({ iterations: 1, now: now.toISOString() });
    await relaxed.flush();
    expect(synced).toEqual([]);
    expect(await relaxed.unleasedTurnWriter('t1').markToolStarted({ toolCallId: 'c1', now: now.toISOString() })).toBe(
      true,
    );
    expect(synced[0]).toBe(join(dir, 'NORMAL.db-wal'));
    expect(await relaxed.listUnfinishedToolCalls('t1')).toEqual(['c1']);
    expect(await relaxed.unleasedTurnWriter('t1').markToolStarted({ toolCallId: 'c1', now: now.toISOString() })).toBe(
      false,
    ); // at most once
    relaxed.close();
  });
});

describe('turn leases', () => {
  it("a turn whose holder renews its lease is nobody else's to take; once the lease lapses it is", async () => {
    const holder = new TurnLeases(store, clock, { leaseSeconds: 30, owner: 'otherhost:1:aaaa' });
    const other = new TurnLeases(store, clock, { leaseSeconds: 30, owner: 'thishost:2:bbbb' });
    await runningTurn('t1', holder.next());

    now = new Date(now.getTime() + 29_000);
    expect(await other.orphans()).toEqual([]);
    expect(await store.renewLeases(holder.owner, holder.next().until, now.toISOString())).toBe(1);
    now = new Date(now.getTime() + 29_000);
    expect(await other.orphans()).toEqual([]);

    now = new Date(now.getTime() + 2_000); // 31 s after the last renewal
    expect(await other.orphans()).toEqual([
      { turnId: 't1', owner: holder.owner, expiresAt: expect.any(String), recoveries: 0 },
    ]);
  });

  it('a turn held by a process of this host that has died is taken over at once, without waiting for the lease', async () => {
    const owner = `${hostname()}:${deadPid()}:cccc`;
    await runningTurn('t1', { owner, until: inSeconds(30) });
    await runningTurn('t2', { owner: `${hostname()}:${process.pid}:dddd`, until: inSeconds(30) }); // our pid, another nonce: a past life of ours
    await runningTurn('t3', { owner: `${hostname()}:${process.ppid}:eeee`, until: inSeconds(30) }); // alive
    const leases = new TurnLeases(store, clock);
    expect((await leases.orphans()).map((o) => o.turnId).sort()).toEqual(['t1', 't2']);
  });

  it('a turn without a lease (written before leases existed) is an orphan', async () => {
    await runningTurn('t1');
    expect((await new TurnLeases(store, clock).orphans()).map((o) => o.turnId)).toEqual(['t1']);
  });

  it('taking a turn over is compare-and-swap: of two processes, one gets it; each takeover is counted', async () => {
    const dead = `${hostname()}:${deadPid()}:ffff`;
    await runningTurn('t1', { owner: dead, until: inSeconds(30) });
    const a = await store.claimTurn('t1', dead, { owner: 'h:1:a', until: inSeconds(30) }, now.toISOString());
    const b = await store.claimTurn('t1', dead, { owner: 'h:2:b', until: inSeconds(30) }, now.toISOString());
    expect(a?.recoveries).toBe(1);
    expect(b).toBeNull();
    expect(await store.holdsLease('t1', 'h:1:a')).toBe(true);
    expect(await store.holdsLease('t1', 'h:2:b')).toBe(false);
  });
});

describe('one TOOL message per call, enforced by the database', () => {
  it('a second TOOL message for the same call (two processes racing) is dropped, not appended', async () => {
    await runningTurn('t1', { owner: 'h:1:a', until: inSeconds(30) });
    await store.unleasedTurnWriter('t1').appendAssistantMessage({
      message: {
        role: 'ASSISTANT',
        text: null,
        toolCalls: [{ id: 'c1', name: 'x', toolId: 's:x', arguments: {} }],
        toolCallId: null,
      },
      iterations: 1,
      now: now.toISOString(),
    });
    expect(await store.unleasedTurnWriter('t1').markToolStarted({ toolCallId: 'c1', now: now.toISOString() })).toBe(
      true,
    );
    expect(await store.unleasedTurnWriter('t1').markToolStarted({ toolCallId: 'c1', now: now.toISOString() })).toBe(
      false,
    );
    await store.unleasedTurnWriter('t1').finishTool({
      message: { toolCallId: 'c1', text: 'Execution of x was interrupted; its outcome is unknown.' },
      now: now.toISOString(),
    });
    await store
      .unleasedTurnWriter('t1')
      .finishTool({ message: { toolCallId: 'c1', text: 'late result' }, now: now.toISOString() });
    const tool = (await store.listTurnMessages('t1')).filter((m) => m.role === 'TOOL');
    expect(tool.map((m) => m.text)).toEqual(['Execution of x was interrupted; its outcome is unknown.']);
    expect((await store.loadTurn('t1'))!.iterations).toBe(1);
  });
});

describe('closing a paused turn', () => {
  it('on expiry: the turn is EXPIRED with no step left to run, its request EXPIRED, its call answered once', async () => {
    await runningTurn('t1');
    const call = { id: 'c1', name: 'wipe', toolId: 's:wipe', arguments: {} };
    await store.unleasedTurnWriter('t1').appendAssistantMessage({
      message: { role: 'ASSISTANT', text: null, toolCalls: [call], toolCallId: null },
      iterations: 1,
      now: now.toISOString(),
    });
    await store.unleasedTurnWriter('t1').pauseTurn({
      step: { version: 1, calls: [{ toolCall: call, outcome: { kind: 'confirm', elicitationId: 'e1' } }] },
      elicitations: [
        {
          id: 'e1',
          toolCallId: 'c1',
          request: { message: 'Run wipe?', requestedSchema: { type: 'object', properties: {} }, _meta: {} },
          toolCall: { ...call, annotations: {} },
        },
      ],
      text: 'Waiting',
      expiresAt: inSeconds(60),
      now: now.toISOString(),
    });
    expect((await store.loadTurn('t1'))!.step).not.toBeNull();

    const [expired] = await store.expireDueTurns(inSeconds(61), 10);
    expect(expired).toMatchObject({ id: 't1', status: 'EXPIRED', step: null });
    expect(await store.loadTurn('t1')).toMatchObject({ status: 'EXPIRED', step: null });
    expect((await store.listTurnElicitations('t1')).map((e) => [e.id, e.status])).toEqual([['e1', 'EXPIRED']]);
    expect((await store.listTurnMessages('t1')).filter((m) => m.role === 'TOOL').map((m) => m.toolCallId)).toEqual([
      'c1',
    ]);
    expect(await store.expireDueTurns(inSeconds(3600), 10)).toEqual([]);
  });
});
