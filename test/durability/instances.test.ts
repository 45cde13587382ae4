// Several instances, proven with real processes: two fixture servers (test/fixtures/durability-server.ts) on one
// fresh PostgreSQL database, with Redis pub/sub (one channel prefix per test), talked to over real HTTP and a real
// graphql-ws client. The journal tool logs each run to a file, so runs are counted across both processes; with
// `logLifecycle` the fixture also logs expiries, interrupted calls and each sweep of its timer there.
// Needs PostgreSQL (TOOLGATE_TEST_POSTGRES) and Redis (REDIS_URL, default 127.0.0.1:6379).
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { FixtureOptions } from '../fixtures/durability-server.js';
import { dataOf, RESOLVE, START_TURN, TURN_FIELDS, type GraphQLResponse } from '../support/harness.js';
import { connectWs, subscribeWs } from '../support/live.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';
import { REDIS_URL } from '../support/redis.js';
import { killAll, readLog, readRuns, runsOf, startFixture, waitFor, type ServerProcess } from './processes.js';

const TURN = `query Turn($id: ID!) { turn(id: $id) { ${TURN_FIELDS} } }`;
const ELICITATION_REQUESTED = `subscription {
  elicitationRequested { id status toolCall { toolId arguments } turn { id status } }
}`;
const TURN_UPDATED = `subscription($turnId: ID!) { turnUpdated(turnId: $turnId) { id status text } }`;
const INTERRUPTED = 'Execution of append was interrupted; its outcome is unknown.';
const EXPIRED_TEXT = 'Execution of append was not confirmed before the request expired.';

let redis: Redis;
let dir: string;
let database: TestDatabase;
let prefix: string;
let base: FixtureOptions;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, connectTimeout: 3_000 });
  redis.on('error', () => {});
  await redis.connect().catch(() => {
    throw new Error(`These tests need Redis at ${REDIS_URL} (set REDIS_URL to use another); it cannot be reached.`);
  });
});

afterAll(async () => {
  await redis?.quit();
});

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-instances-'));
  database = await freshPostgresDatabase();
  prefix = `toolgate-test:${randomUUID()}:`;
  base = { database: database.url, runsFile: join(dir, 'runs.log'), redis: { url: REDIS_URL, prefix } };
});

afterEach(async () => {
  await killAll();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Two fixture processes on this test's database and Redis prefix, started at the same time. If the test fails, the
 * runs file and both processes' stderr are printed: what happened where.
 */
async function startTwo(extra: Partial<FixtureOptions> = {}): Promise<[ServerProcess, ServerProcess]> {
  const [a, b] = await Promise.all([startFixture({ ...base, ...extra }), startFixture({ ...base, ...extra })]);
  const { runsFile } = base;
  onTestFailed(() => {
    const runs = readLog(runsFile).map((words) => words.join(' '));
    const stderr = [a, b].map((server) => `stderr of ${server.pid} (${server.url}):\n${server.stderr()}`);
    console.error([`runs file:`, ...runs, ...stderr].join('\n'));
  });
  return [a, b];
}

async function startTurn(server: ServerProcess, agentId: string, message: string) {
  const payload = dataOf(await server.gql(START_TURN, { input: { agentId, message } })).startTurn;
  expect(payload.userErrors).toEqual([]);
  return payload.turn;
}

async function turnOf(server: ServerProcess, id: string) {
  return dataOf(await server.gql(TURN, { id })).turn;
}

/** Polls the turn on `server` until its status is not one of `passing`. */
function settled(server: ServerProcess, id: string, passing = ['RUNNING'], timeoutMs = 60_000) {
  return waitFor(
    `turn ${id} to leave ${passing.join('/')}`,
    async () => {
      const turn = await turnOf(server, id);
      return passing.includes(turn.status) ? null : turn;
    },
    timeoutMs,
  );
}

function toolMessages(turn: any): string[] {
  return turn.messages.filter((m: any) => m.role === 'TOOL').map((m: any) => m.text);
}

/** Redis subscriptions (of every process) of one channel of this test. */
async function subscribers(channel: string): Promise<number> {
  const [, count] = (await redis.pubsub('NUMSUB', `${prefix}${channel}`)) as [string, number];
  return count;
}

/** An ACCEPT over HTTP: the response, or 'connection lost' when the process died before it answered. */
function accept(server: ServerProcess, elicitationId: string) {
  return server.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }).catch(() => 'connection lost' as const);
}

/** The journal's lines for one `append` line, as "<kind> <pid>". */
function journal(line: string): string[] {
  return readRuns(base.runsFile)
    .filter((run) => run.line === line && (run.kind === 'start' || run.kind === 'end'))
    .map((run) => `${run.kind} ${run.pid}`);
}

describe('two toolgate processes on one PostgreSQL database and one Redis', { timeout: 180_000 }, () => {
  it('a graphql-ws subscriber on A receives the pause of a turn started on B', async () => {
    const [a, b] = await startTwo();
    const ws = connectWs(a.url);
    try {
      const requested = subscribeWs(ws, ELICITATION_REQUESTED);
      // No acknowledgement over graphql-ws: A listens once its Redis SUBSCRIBE of the owner's channel is confirmed.
      // B has no subscriber, so the one subscription of the channel is A's.
      await waitFor("A's Redis subscription of the local user's requests", async () => {
        return (await subscribers('elicitations:local')) === 1;
      });

      const turn = await startTurn(b, 'confirm', 'append one');
      expect(turn.status).toBe('PAUSED');
      const pause = turn.pendingElicitations[0];

      const received = await requested.waitFor(() => true, 'the pause made on B, on A', 30_000);
      expect(received.errors).toBeUndefined();
      expect(received.data!.elicitationRequested).toEqual({
        id: pause.id,
        status: 'PENDING',
        toolCall: { toolId: 'journal:append', arguments: { line: 'one' } },
        turn: { id: turn.id, status: 'PAUSED' },
      });
      expect(requested.events).toHaveLength(1);
      expect(runsOf(base.runsFile, 'one')).toBe(0);
    } finally {
      await ws.dispose();
    }
  });

  it('a turn started on A is answered on B and completes; the tool ran once, on B; A follows it live', async () => {
    const [a, b] = await startTwo();
    const turn = await startTurn(a, 'confirm', 'append two');
    expect(turn.status).toBe('PAUSED');

    const ws = connectWs(a.url);
    try {
      const updates = subscribeWs(ws, TURN_UPDATED, { turnId: turn.id });
      // The first event (the current state) comes after A's Redis SUBSCRIBE of the turn's channel was confirmed.
      expect((await updates.waitFor(() => true, 'the current state on A', 30_000)).data!.turnUpdated.status).toBe(
        'PAUSED',
      );

      const resolved = dataOf(
        await b.gql(RESOLVE, { input: { elicitationId: turn.pendingElicitations[0].id, action: 'ACCEPT' } }),
      ).resolveElicitation;
      expect(resolved.userErrors).toEqual([]);
      expect(resolved.elicitation.status).toBe('ACCEPTED');
      expect(resolved.turn.status).toBe('COMPLETED');
      expect(resolved.turn.text).toBe('Done. Appended two.');

      const completed = await updates.waitFor(
        (event) => event.data?.turnUpdated.status === 'COMPLETED',
        'COMPLETED, made on B, on A',
        30_000,
      );
      expect(completed.data!.turnUpdated.text).toBe('Done. Appended two.');
    } finally {
      await ws.dispose();
    }
    const onA = await turnOf(a, turn.id);
    expect(onA.status).toBe('COMPLETED');
    expect(toolMessages(onA)).toEqual(['Appended two.']);
    expect(journal('two')).toEqual([`start ${b.pid}`, `end ${b.pid}`]);
  });

  it('25 concurrent ACCEPTs of one elicitation, spread over both, run the tool exactly once', async () => {
    const [a, b] = await startTwo();
    const turn = await startTurn(a, 'confirm', 'append three');
    const elicitationId = turn.pendingElicitations[0].id;

    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        (i % 2 === 0 ? a : b).gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }),
      ),
    );
    for (const response of responses) {
      const resolved = dataOf(response).resolveElicitation;
      expect(resolved.userErrors).toEqual([]);
      expect(resolved.elicitation).toMatchObject({ id: elicitationId, status: 'ACCEPTED' });
      expect(['RUNNING', 'COMPLETED']).toContain(resolved.turn.status);
    }

    const after = await settled(a, turn.id);
    expect(after.status).toBe('COMPLETED');
    expect(after.text).toBe('Done. Appended three.');
    expect(after.elicitations.map((e: any) => e.status)).toEqual(['ACCEPTED']);
    const call = after.messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length > 0).toolCalls[0];
    expect(after.messages.filter((m: any) => m.role === 'TOOL' && m.toolCallId === call.id)).toHaveLength(1);
    expect(toolMessages(after)).toEqual(['Appended three.']);
    const runs = journal('three');
    expect(runs).toHaveLength(2);
    expect([`start ${a.pid}`, `start ${b.pid}`]).toContain(runs[0]);
    expect(runs[1]).toBe(runs[0]!.replace('start', 'end'));
  });

  it('SIGKILL of the instance running a slow tool: the other takes the turn over within one sweep, reports the call interrupted, never runs it again', async () => {
    const [a, b] = await startTwo({
      releaseFile: join(dir, 'never'),
      leaseSeconds: 1,
      sweepIntervalSeconds: 0.5,
      logLifecycle: true,
    });
    const turn = await startTurn(a, 'confirm', 'append four');
    const elicitationId = turn.pendingElicitations[0].id;
    // One ACCEPT on each: whichever records it first runs the tool (and blocks in it); the other is a duplicate.
    const answers = [accept(a, elicitationId), accept(b, elicitationId)];
    const [started] = await waitFor('the tool to start', () => {
      const starts = readRuns(base.runsFile).filter((run) => run.kind === 'start' && run.line === 'four');
      return starts.length > 0 && starts;
    });
    const [victim, survivor] = started!.pid === a.pid ? [a, b] : [b, a];
    const [victimAnswer, survivorAnswer] = started!.pid === a.pid ? answers : answers.reverse();

    await victim.kill();
    appendFileSync(base.runsFile, `killed ${victim.pid}\n`);
    expect(await victimAnswer).toBe('connection lost');
    // The duplicate answered with the recorded answer, while the turn ran on the other process.
    const survivorResponse = await survivorAnswer;
    expect(survivorResponse).not.toBe('connection lost');
    const duplicate = dataOf<any>(survivorResponse as GraphQLResponse).resolveElicitation;
    expect(duplicate.userErrors).toEqual([]);
    expect(duplicate.elicitation.status).toBe('ACCEPTED');

    const after = await settled(survivor, turn.id, ['RUNNING'], 30_000);
    expect(after.status).toBe('COMPLETED');
    expect(toolMessages(after)).toEqual([INTERRUPTED]);
    expect(after.text).toBe(`Done. ${INTERRUPTED}`);
    expect(after.elicitations.map((e: any) => e.status)).toEqual(['ACCEPTED']);

    // Never run again: one start ever, in the killed process, which never ended it.
    expect(journal('four')).toEqual([`start ${victim.pid}`]);
    // The survivor reported the call interrupted, once.
    const call = after.messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length > 0).toolCalls[0];
    expect(readLog(base.runsFile).filter(([kind]) => kind === 'interrupted')).toEqual([
      ['interrupted', call.id, turn.id, String(survivor.pid)],
    ]);
    // Within one sweep: the sweep of the survivor that took it over is its first one that started after the kill,
    // or one already running then (the marker is written once the kill is done, so a sweep that started just
    // before it may already see the dead process, and the turn can finish before the next sweep starts).
    const log = readLog(base.runsFile);
    const killedAt = log.findIndex(([kind]) => kind === 'killed');
    const mine = (kind: string) => (words: string[], index: number) =>
      words[0] === kind && words.at(-1) === String(survivor.pid) ? index : -1;
    const takeovers = log.flatMap((words, index) => (words[0] === 'swept' && words[2] !== '0' ? [index] : []));
    expect(takeovers.map((index) => `recovered ${log[index]![2]} by ${log[index]![3]}`)).toEqual([
      `recovered 1 by ${survivor.pid}`,
    ]);
    const sweepStarts = log.map(mine('sweep')).filter((index) => index >= 0);
    const recoveringSweep = sweepStarts.filter((index) => index < takeovers[0]!).at(-1)!;
    const firstSweepAfterKill = sweepStarts.find((index) => index > killedAt);
    expect(recoveringSweep).toBeDefined();
    if (firstSweepAfterKill !== undefined) expect(recoveringSweep).toBeLessThanOrEqual(firstSweepAfterKill);
    // And no sweep, before or after, took it over a second time.
    expect(log.filter((words) => words[0] === 'swept' && words[2] !== '0')).toHaveLength(1);

    // The client whose request died retries on the survivor: the recorded result, nothing runs.
    const retried = dataOf(
      await survivor.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(retried.userErrors).toEqual([]);
    expect(retried.turn.status).toBe('COMPLETED');
    expect(journal('four')).toEqual([`start ${victim.pid}`]);
  });

  it('expiry is processed once when both sweep', async () => {
    const [a, b] = await startTwo({ pauseTtlSeconds: 2, sweepIntervalSeconds: 0.2, logLifecycle: true });
    // Eight paused turns, started one after the other on A and B in turn: due one after the other over a moment
    // in which both sweepers run every 0.2 s, so either may find any of them due, or both at once.
    const turns: any[] = [];
    for (let i = 0; i < 8; i++) turns.push(await startTurn(i % 2 === 0 ? a : b, 'confirm', `append e${i}`));
    expect(turns.map((turn) => turn.status)).toEqual(Array(8).fill('PAUSED'));

    // Past its expiry a paused turn already reads EXPIRED (the API says so before the sweeper records it): what
    // is waited for is the recorded expiry, which the fixture logs once committed ("expired <turnId> <pid>").
    const lastExpiry = await waitFor(
      'a recorded expiry of each turn',
      () => {
        const log = readLog(base.runsFile);
        const lines = log.filter(([kind]) => kind === 'expired');
        return lines.length >= turns.length && log.lastIndexOf(lines.at(-1)!);
      },
      60_000,
    );
    // Both processes swept again after the last expiry (a sweep that started after it and ended): had either
    // been able to expire a turn a second time, it would have by then.
    await waitFor('a full sweep of each process after the last expiry', () => {
      const log = readLog(base.runsFile).slice(lastExpiry + 1);
      return [a, b].every((server) => {
        const start = log.findIndex((words) => words[0] === 'sweep' && words[1] === String(server.pid));
        return start >= 0 && log.slice(start).some((words) => words[0] === 'swept' && words[3] === String(server.pid));
      });
    });

    const log = readLog(base.runsFile);
    const expiries = log.filter(([kind]) => kind === 'expired');
    for (const turn of turns) {
      expect(expiries.filter(([, turnId]) => turnId === turn.id)).toHaveLength(1);
    }
    expect(expiries).toHaveLength(turns.length);
    for (const turn of turns) {
      const after = await turnOf(a, turn.id);
      expect(after.status).toBe('EXPIRED');
      const call = after.messages.find((m: any) => m.role === 'ASSISTANT' && m.toolCalls.length > 0).toolCalls[0];
      expect(after.messages.filter((m: any) => m.role === 'TOOL' && m.toolCallId === call.id)).toHaveLength(1);
      expect(toolMessages(after)).toEqual([EXPIRED_TEXT]);
      expect(after.elicitations.map((e: any) => e.status)).toEqual(['EXPIRED']);
      expect(await turnOf(b, turn.id)).toEqual(after);
    }
    // The sweepers' own reports agree: each turn expired once in all.
    const reported = log.filter(([kind]) => kind === 'swept').reduce((sum, words) => sum + Number(words[1]), 0);
    expect(reported).toBe(turns.length);
    expect(readRuns(base.runsFile).filter((run) => run.kind === 'start')).toEqual([]);
  });
});
