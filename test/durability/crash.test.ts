// Crash tests: a real server process is SIGKILLed at the worst moments, and another one is started on the same
// database file. The journal tool of test/fixtures/durability-server.ts writes a line to a file each time it
// starts and ends, so these tests count runs across processes: at most once, and exactly once where the
// outcome is known. docs/durability.md has the table these tests back.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FixtureOptions } from '../fixtures/durability-server.js';
import { dataOf, RESOLVE, START_TURN, TEST_BACKEND, TURN_FIELDS } from '../support/harness.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import {
  killAll,
  readRuns,
  runsOf,
  runUntilCrash,
  startCli,
  startFixture,
  waitFor,
  type ServerProcess,
} from './processes.js';

const TURN = `query Turn($id: ID!) { turn(id: $id) { ${TURN_FIELDS} } }`;
const PENDING = `query { pendingElicitations { totalCount edges { node { id status toolCall { arguments } } } } }`;
const INTERRUPTED = 'Execution of append was interrupted; its outcome is unknown.';

let dir: string;
let base: FixtureOptions;

/** The database of one test: an SQLite file, or with TOOLGATE_TEST_BACKEND=postgres a fresh PostgreSQL database. */
async function testDatabase(file: string): Promise<string> {
  return TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : join(dir, file);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-crash-'));
  base = { database: await testDatabase('toolgate.db'), runsFile: join(dir, 'runs.log') };
});

afterEach(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function startTurn(server: ServerProcess, agentId: string, message: string, extra: Record<string, unknown> = {}) {
  const payload = dataOf(await server.gql(START_TURN, { input: { agentId, message, ...extra } })).startTurn;
  expect(payload.userErrors).toEqual([]);
  return payload as { turn: any; thread: { id: string } };
}

async function turnOf(server: ServerProcess, id: string) {
  return dataOf(await server.gql(TURN, { id })).turn;
}

/** Polls the turn on `server` until it is no longer RUNNING. */
function settled(server: ServerProcess, id: string) {
  return waitFor(`turn ${id} to stop running`, async () => {
    const turn = await turnOf(server, id);
    return turn.status === 'RUNNING' ? null : turn;
  });
}

function toolMessages(turn: any): string[] {
  return turn.messages.filter((m: any) => m.role === 'TOOL').map((m: any) => m.text);
}

/**
 * A background startTurn whose process may die before it answers (the checkpoint can come first): the turn is
 * then found on the next server, as the only turn of the only thread in this test's database.
 */
async function startBackgroundDuringCrash(server: ServerProcess, message: string): Promise<void> {
  await server.gql(START_TURN, { input: { agentId: 'direct', message, background: true } }).catch(() => null);
}

async function onlyTurn(server: ServerProcess): Promise<{ turnId: string; threadId: string }> {
  const threads = dataOf(await server.gql('query { threads { edges { node { id turns { id } } } } }')).threads.edges;
  expect(threads).toHaveLength(1);
  expect(threads[0].node.turns).toHaveLength(1);
  return { turnId: threads[0].node.turns[0].id, threadId: threads[0].node.id };
}

/** An answer whose HTTP request dies with the process: the caller cannot know what happened, only the next server can. */
function answerDuringCrash(server: ServerProcess, elicitationId: string) {
  return server.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }).then(
    () => 'answered' as const,
    () => 'connection lost' as const,
  );
}

describe('SIGKILL while a turn is paused', { timeout: 180_000 }, () => {
  it('keeps the paused turn unchanged across the restart; the answer after it runs the tool once', async () => {
    const first = await startFixture(base);
    const { turn } = await startTurn(first, 'confirm', 'append alpha');
    expect(turn.status).toBe('PAUSED');
    const before = await turnOf(first, turn.id);
    await first.kill();

    const second = await startFixture(base);
    expect(await turnOf(second, turn.id)).toEqual(before);
    const pending = dataOf(await second.gql(PENDING)).pendingElicitations;
    expect(pending.edges.map((e: any) => e.node)).toEqual([
      { id: turn.pendingElicitations[0].id, status: 'PENDING', toolCall: { arguments: { line: 'alpha' } } },
    ]);
    expect(runsOf(base.runsFile, 'alpha')).toBe(0);

    const answer = { input: { elicitationId: turn.pendingElicitations[0].id, action: 'ACCEPT' } };
    const resolved = dataOf(await second.gql(RESOLVE, answer)).resolveElicitation;
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toBe('Done. Appended alpha.');
    // The same answer again returns the recorded result and runs nothing.
    const again = dataOf(await second.gql(RESOLVE, answer)).resolveElicitation;
    expect(again.userErrors).toEqual([]);
    expect(again.turn.status).toBe('COMPLETED');
    expect(runsOf(base.runsFile, 'alpha')).toBe(1);
  });

  it('the real entry point (src/cli.ts, built-in demo): delete entities paused, killed, restarted, accepted: deleted once', async () => {
    const database = await testDatabase('demo.db');
    const first = await startCli(database);
    const { turn, thread } = await startTurn(first, 'demo', 'delete entities 1, 2 and 3');
    expect(turn.status).toBe('PAUSED');
    await first.kill();

    const second = await startCli(database);
    const answer = { input: { elicitationId: turn.pendingElicitations[0].id, action: 'ACCEPT' } };
    const resolved = dataOf(await second.gql(RESOLVE, answer)).resolveElicitation;
    expect(resolved.turn.text).toContain('Deleted 3 entities (1, 2, 3)');
    expect(dataOf(await second.gql(RESOLVE, answer)).resolveElicitation.turn.text).toContain(
      'Deleted 3 entities (1, 2, 3)',
    );
    const listed = await startTurn(second, 'demo', 'list entities', { threadId: thread.id });
    expect(listed.turn.text).toBe('Done. Entities: 4 delta, 5 echo.');
  });
});

describe('SIGKILL while a slow tool runs', { timeout: 180_000 }, () => {
  it('does not run the call again: the model is told its outcome is unknown, and the turn goes on', async () => {
    const first = await startFixture({ ...base, releaseFile: join(dir, 'never') });
    const { turn } = await startTurn(first, 'confirm', 'append beta');
    const answered = answerDuringCrash(first, turn.pendingElicitations[0].id);
    await waitFor('the tool to start', () => runsOf(base.runsFile, 'beta') === 1);
    await first.kill();
    expect(await answered).toBe('connection lost');

    const second = await startFixture(base);
    const after = await settled(second, turn.id);
    expect(after.status).toBe('COMPLETED');
    expect(toolMessages(after)).toEqual([INTERRUPTED]);
    expect(after.text).toBe(`Done. ${INTERRUPTED}`);
    expect(after.elicitations.map((e: any) => e.status)).toEqual(['ACCEPTED']);
    // The client whose request died retries the same answer: it gets the recorded result, nothing runs again.
    const retried = dataOf(
      await second.gql(RESOLVE, { input: { elicitationId: turn.pendingElicitations[0].id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(retried.userErrors).toEqual([]);
    expect(retried.turn.status).toBe('COMPLETED');
    expect(
      readRuns(base.runsFile)
        .filter((r) => r.line === 'beta')
        .map((r) => `${r.kind} ${r.pid}`),
    ).toEqual([`start ${first.pid}`]);
  });

  it('after the tool returned but before its result was saved: the effect happened once, and is reported unknown', async () => {
    const first = await startFixture({ ...base, crashAt: { point: 'toolReturned' } });
    const { turn } = await startTurn(first, 'confirm', 'append delta');
    expect(await answerDuringCrash(first, turn.pendingElicitations[0].id)).toBe('connection lost');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startFixture(base);
    const after = await settled(second, turn.id);
    expect(after.status).toBe('COMPLETED');
    expect(toolMessages(after)).toEqual([INTERRUPTED]);
    expect(readRuns(base.runsFile).map((r) => r.kind)).toEqual(['start', 'end', 'crash']);
  });
});

describe("SIGKILL between the recorded answer and the tool's start", { timeout: 180_000 }, () => {
  it.each(['answerRecorded', 'toolStarting'] as const)(
    'at %s: the turn resumes after the restart and the accepted call runs exactly once',
    async (point) => {
      const first = await startFixture({ ...base, crashAt: { point } });
      const { turn } = await startTurn(first, 'confirm', 'append gamma');
      expect(await answerDuringCrash(first, turn.pendingElicitations[0].id)).toBe('connection lost');
      expect((await first.exited).signal).toBe('SIGKILL');
      expect(readRuns(base.runsFile)).toEqual([{ kind: 'crash', callId: '', line: point, pid: first.pid }]);

      const second = await startFixture(base);
      // The client retries its answer at once: the recorded one stands; it waits for (or sees) the resumed turn.
      const retried = dataOf(
        await second.gql(RESOLVE, { input: { elicitationId: turn.pendingElicitations[0].id, action: 'ACCEPT' } }),
      ).resolveElicitation;
      expect(retried.userErrors).toEqual([]);
      const after = await settled(second, turn.id);
      expect(after.status).toBe('COMPLETED');
      expect(after.text).toBe('Done. Appended gamma.');
      expect(toolMessages(after)).toEqual(['Appended gamma.']);
      expect(after.elicitations.map((e: any) => e.status)).toEqual(['ACCEPTED']);
      expect(
        readRuns(base.runsFile)
          .filter((r) => r.kind !== 'crash')
          .map((r) => `${r.kind} ${r.pid}`),
      ).toEqual([`start ${second.pid}`, `end ${second.pid}`]);
    },
  );

  // SQLite's WAL fsync (PostgreSQL's commit is durable when it returns: there is no such moment to crash in).
  it.skipIf(TEST_BACKEND === 'postgres')(
    "inside the fsync of the tool's start record: the call never runs; after the restart it is reported unknown, and the turn goes on",
    async () => {
      const first = await startFixture({ ...base, crashInToolStartSync: true });
      const { turn } = await startTurn(first, 'confirm', 'append delta');
      expect(await answerDuringCrash(first, turn.pendingElicitations[0].id)).toBe('connection lost');
      expect((await first.exited).signal).toBe('SIGKILL');
      expect(readRuns(base.runsFile)).toEqual([{ kind: 'crash', callId: '', line: 'sync', pid: first.pid }]);

      // The start record was committed (the page cache outlives the process), so the next server must not run the
      // call: it cannot know that the tool did not start. At most once.
      const second = await startFixture(base);
      const after = await settled(second, turn.id);
      expect(after.status).toBe('COMPLETED');
      expect(toolMessages(after)).toEqual([INTERRUPTED]);
      expect(after.elicitations.map((e: any) => e.status)).toEqual(['ACCEPTED']);
      expect(runsOf(base.runsFile, 'delta')).toBe(0);
    },
  );

  it('two accepted calls, killed before the second starts: the first is not run again, the second runs once', async () => {
    const first = await startFixture({ ...base, crashAt: { point: 'toolStarting', nth: 2 } });
    const { turn } = await startTurn(first, 'confirm', 'append one, two');
    const [one, two] = turn.pendingElicitations;
    const recorded = dataOf(
      await first.gql(RESOLVE, { input: { elicitationId: one.id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(recorded.turn.status).toBe('PAUSED');
    expect(await answerDuringCrash(first, two.id)).toBe('connection lost');

    const second = await startFixture(base);
    const after = await settled(second, turn.id);
    expect(after.text).toBe('Done. Appended one. | Appended two.');
    expect(runsOf(base.runsFile, 'one')).toBe(1);
    expect(runsOf(base.runsFile, 'two')).toBe(1);
    expect(
      readRuns(base.runsFile)
        .filter((r) => r.kind === 'start')
        .map((r) => `${r.line} ${r.pid}`),
    ).toEqual([`one ${first.pid}`, `two ${second.pid}`]);
  });
});

describe(
  'SIGKILL after the model asked for a tool that needs confirmation, before the pause was saved',
  { timeout: 180_000 },
  () => {
    it('the restarted server asks the model again and pauses: one answer saved, one request, nothing ran', async () => {
      // A step that asks is saved with its pause (one commit), so the crash leaves the turn as the model found it.
      const first = await startFixture({ ...base, crashAt: { point: 'modelAnswered' } });
      await first.gql(START_TURN, { input: { agentId: 'confirm', message: 'append lambda' } }).catch(() => null);
      expect((await first.exited).signal).toBe('SIGKILL');

      const second = await startFixture(base);
      const after = await settled(second, (await onlyTurn(second)).turnId);
      expect(after.status).toBe('PAUSED');
      expect(after.iterations).toBe(1);
      expect(after.messages.map((m: any) => m.role)).toEqual(['USER', 'ASSISTANT']);
      expect(after.pendingElicitations.map((e: any) => e.toolCall.arguments)).toEqual([{ line: 'lambda' }]);
      expect(runsOf(base.runsFile, 'lambda')).toBe(0);
      const resolved = dataOf(
        await second.gql(RESOLVE, { input: { elicitationId: after.pendingElicitations[0].id, action: 'ACCEPT' } }),
      ).resolveElicitation;
      expect(resolved.turn.text).toBe('Done. Appended lambda.');
      expect(runsOf(base.runsFile, 'lambda')).toBe(1);
    });
  },
);

describe('SIGKILL during a background turn', { timeout: 180_000 }, () => {
  it('killed after the model answered, before its answer was saved: the model is asked again, the tool runs once', async () => {
    const first = await startFixture({ ...base, crashAt: { point: 'modelAnswered' } });
    await startBackgroundDuringCrash(first, 'append eps');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startFixture(base);
    const after = await settled(second, (await onlyTurn(second)).turnId);
    expect(after.status).toBe('COMPLETED');
    expect(after.text).toBe('Done. Appended eps.');
    expect(after.messages.map((m: any) => m.role)).toEqual(['USER', 'ASSISTANT', 'TOOL', 'ASSISTANT']);
    expect(after.iterations).toBe(2);
    expect(runsOf(base.runsFile, 'eps')).toBe(1);
  });

  it('killed after the step was saved, before any call ran: each call runs once after the restart', async () => {
    const first = await startFixture({ ...base, crashAt: { point: 'stepSaved' } });
    await startBackgroundDuringCrash(first, 'append zeta, eta');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startFixture(base);
    const after = await settled(second, (await onlyTurn(second)).turnId);
    expect(after.text).toBe('Done. Appended zeta. | Appended eta.');
    expect(after.messages.filter((m: any) => m.role === 'ASSISTANT')).toHaveLength(2);
    expect([runsOf(base.runsFile, 'zeta'), runsOf(base.runsFile, 'eta')]).toEqual([1, 1]);
  });

  it('killed while its tool runs: the call is reported interrupted, never run twice, and the turn completes', async () => {
    const first = await startFixture({ ...base, releaseFile: join(dir, 'never') });
    const { turn } = await startTurn(first, 'direct', 'append theta', { background: true });
    await waitFor('the tool to start', () => runsOf(base.runsFile, 'theta') === 1);
    await first.kill();

    const second = await startFixture(base);
    const after = await settled(second, turn.id);
    expect(after.status).toBe('COMPLETED');
    expect(toolMessages(after)).toEqual([INTERRUPTED]);
    expect(runsOf(base.runsFile, 'theta')).toBe(1);
  });

  it("restarted with a config that no longer has the turn's model: FAILED with a clear error, every saved call answered", async () => {
    const first = await startFixture({ ...base, crashAt: { point: 'stepSaved' } });
    await startBackgroundDuringCrash(first, 'append mu, nu');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startFixture({ ...base, withoutModel: true });
    const after = await settled(second, (await onlyTurn(second)).turnId);
    expect(after.status).toBe('FAILED');
    expect(after.error).toBe("The agent's model fixture is not configured.");
    expect(toolMessages(after)).toEqual([
      'Execution of append failed: the turn stopped before it ran',
      'Execution of append failed: the turn stopped before it ran',
    ]);
    expect(runsOf(base.runsFile, 'mu') + runsOf(base.runsFile, 'nu')).toBe(0);
  });

  it('a turn that keeps killing its server is FAILED after maxRecoveries takeovers, and the thread stays usable', async () => {
    const crashing = { ...base, maxRecoveries: 2, crashAt: { point: 'modelAnswered' as const } };
    const first = await startFixture(crashing);
    await startBackgroundDuringCrash(first, 'append iota');
    expect((await first.exited).signal).toBe('SIGKILL');
    // Each restart takes the turn over and dies on it again (while recovering, before it even listens).
    expect((await runUntilCrash(crashing)).signal).toBe('SIGKILL');
    expect((await runUntilCrash(crashing)).signal).toBe('SIGKILL');

    const last = await startFixture({ ...base, maxRecoveries: 2 });
    const { turnId, threadId } = await onlyTurn(last);
    const after = await settled(last, turnId);
    expect(after.status).toBe('FAILED');
    expect(after.error).toBe(
      'The turn was stopped: the server running it stopped unexpectedly 3 times, so it was not resumed again (maxRecoveries is 2).',
    );
    expect(runsOf(base.runsFile, 'iota')).toBe(0);
    const next = await startTurn(last, 'direct', 'append kappa', { threadId });
    expect(next.turn.text).toBe('Done. Appended kappa.');
  });
});

describe('two server processes on one database file', { timeout: 180_000 }, () => {
  it('a second process does not take over a turn the first is still running', async () => {
    const release = join(dir, 'release');
    const first = await startFixture({ ...base, releaseFile: release, leaseSeconds: 1 });
    const { turn } = await startTurn(first, 'direct', 'append shared', { background: true });
    await waitFor('the tool to start', () => runsOf(base.runsFile, 'shared') === 1);

    // The second one recovers at start and sweeps (recovery included) every 0.2 s; the first renews its lease
    // every third of a second. Give the second several lease lengths to (wrongly) take the turn over.
    const second = await startFixture({ ...base, sweepIntervalSeconds: 0.2, leaseSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const meanwhile = await turnOf(second, turn.id);
    expect(meanwhile.status).toBe('RUNNING');
    expect(toolMessages(meanwhile)).toEqual([]);

    writeFileSync(release, '');
    const after = await settled(second, turn.id);
    expect(after.status).toBe('COMPLETED');
    expect(toolMessages(after)).toEqual(['Appended shared.']);
    expect(readRuns(base.runsFile).map((r) => `${r.kind} ${r.pid}`)).toEqual([
      `start ${first.pid}`,
      `end ${first.pid}`,
    ]);
  });

  it('when the first one dies, the second takes its turn over without a restart', async () => {
    const first = await startFixture({ ...base, releaseFile: join(dir, 'never'), leaseSeconds: 1 });
    const second = await startFixture({ ...base, sweepIntervalSeconds: 0.2, leaseSeconds: 1 });
    const { turn } = await startTurn(first, 'direct', 'append orphan', { background: true });
    await waitFor('the tool to start', () => runsOf(base.runsFile, 'orphan') === 1);
    await first.kill();

    const after = await settled(second, turn.id);
    expect(after.status).toBe('COMPLETED');
    expect(toolMessages(after)).toEqual([INTERRUPTED]);
    expect(runsOf(base.runsFile, 'orphan')).toBe(1);
  });
});
