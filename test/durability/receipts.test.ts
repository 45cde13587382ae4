// The decision records of a real server's run, checked offline as an auditor would: approvals, an edit, a quorum of
// two reviewers, an expiry and a SIGKILL between the quorum's last answer and the run; the export (`toolgate audit
// export`) verifies with `toolgate audit verify` against the JWKS the server publishes (docs/receipts.md).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../src/domain/decision-records.js';
import { authorizationOf, type ApproverUser } from '../support/approvers.js';
import { dataOf, RESOLVE, START_TURN, TEST_BACKEND, TURN_FIELDS } from '../support/harness.js';
import { nodeArgsFor } from '../support/entries.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { killAll, readRuns, runsOf, startFixture, waitFor, type ServerProcess } from './processes.js';

const TURN = `query Turn($id: ID!) { turn(id: $id) { ${TURN_FIELDS} } }`;

let dir: string;
let database: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-receipts-'));
  database = TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : join(dir, 'toolgate.db');
});

afterEach(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

/** A GraphQL request to `server` as `user`. */
async function gql(server: ServerProcess, user: ApproverUser, query: string, variables: Record<string, unknown>) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: authorizationOf(user) },
    body: JSON.stringify({ query, variables }),
  });
  return dataOf(await response.json()) as any;
}

async function start(server: ServerProcess, agentId: string, message: string) {
  const payload = (await gql(server, 'alice', START_TURN, { input: { agentId, message } })).startTurn;
  expect(payload.userErrors).toEqual([]);
  return payload.turn as { id: string; status: string; pendingElicitations: { id: string }[] };
}

function resolve(
  server: ServerProcess,
  user: ApproverUser,
  elicitationId: string,
  extra: Record<string, unknown> = {},
) {
  return gql(server, user, RESOLVE, { input: { elicitationId, action: 'ACCEPT', ...extra } });
}

function settled(server: ServerProcess, id: string) {
  return waitFor(`turn ${id} to stop running`, async () => {
    const turn = (await gql(server, 'alice', TURN, { id })).turn;
    return turn.status === 'RUNNING' ? null : turn;
  });
}

/** `toolgate <args>` (the run's bundle of src/cli.ts), on this test's database, as an auditor runs it. */
async function toolgate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...nodeArgsFor('src/cli.ts'), ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, TOOLGATE_DB: database, TOOLGATE_CONFIG: '' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return error as { code: number; stdout: string; stderr: string };
  }
}

describe('an export of a run with approvals, an edit, a quorum, an expiry and a SIGKILL', { timeout: 180_000 }, () => {
  it('verifies offline with the published keys', async () => {
    const runsFile = join(dir, 'runs.log');
    // Killed the second time an answer resumes a turn: the quorum's completing answer, before its call runs.
    const first = await startFixture({
      database,
      runsFile,
      approvers: true,
      crashAt: { point: 'answerRecorded', nth: 2 },
    });
    // The requester accepts with an edit.
    const edited = await start(first, 'confirm', 'append alpha');
    await resolve(first, 'alice', edited.pendingElicitations[0]!.id, { arguments: { line: 'alpha-edited' } });
    expect((await settled(first, edited.id)).status).toBe('COMPLETED');
    // Two reviewers: bob's answer counts, carol's completes the quorum, and the process dies before the run.
    const quorum = await start(first, 'quorum', 'append beta');
    const request = quorum.pendingElicitations[0]!.id;
    await resolve(first, 'bob', request);
    await resolve(first, 'carol', request).catch(() => null);
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startFixture({ database, runsFile, approvers: true });
    // Carol's client retries: her recorded answer stands, and the resumed turn runs the call once.
    await resolve(second, 'carol', request);
    expect((await settled(second, quorum.id)).status).toBe('COMPLETED');
    // Answered after a second: too late.
    const brief = await start(second, 'brief', 'append gamma');
    await new Promise((done) => setTimeout(done, 1_500));
    const late = (await resolve(second, 'alice', brief.pendingElicitations[0]!.id)).resolveElicitation;
    expect(late.userErrors[0].code).toBe('EXPIRED');
    expect(
      readRuns(runsFile)
        .filter((r) => r.kind === 'start')
        .map((r) => r.line),
    ).toEqual(['alpha-edited', 'beta']);

    const published = await fetch(new URL('/.well-known/toolgate-receipt-keys.json', second.url));
    const keys = join(dir, 'keys.json');
    writeFileSync(keys, await published.text());
    const exported = await toolgate(['audit', 'export']);
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    const file = join(dir, 'records.jsonl');
    writeFileSync(file, exported.stdout);
    const records = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as DecisionRecord);
    expect(records.map((r) => r.kind)).toEqual([
      ...['ASKED', 'ACCEPTED', 'RAN', 'RESULT'],
      ...['ASKED', 'APPROVED', 'APPROVED', 'ACCEPTED', 'RAN', 'RESULT'],
      ...['ASKED', 'EXPIRED'],
    ]);
    expect(records.filter((r) => r.kind === 'APPROVED').map((r) => r.actor?.id)).toEqual(['bob', 'carol']);
    expect(records.every((r) => typeof r.toolDefinitionDigest === 'string')).toBe(true);
    expect(await toolgate(['audit', 'verify', file, '--keys', keys])).toMatchObject({
      code: 0,
      stdout: `${file}: ${records.length} records verify\n`,
    });
    // The same export with the quorum's second approval taken out (the rest intact) is refused, naming the gap.
    const gap = readFileSync(file, 'utf8').split('\n');
    gap.splice(6, 1);
    writeFileSync(file, gap.join('\n'));
    const tampered = await toolgate(['audit', 'verify', file, '--keys', keys]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(`${file}:7: record 8: seq 8 follows 6`);
  });

  it('killed while its tool runs: the call is recorded INTERRUPTED after the restart, and the export verifies', async () => {
    const runsFile = join(dir, 'runs.log');
    const first = await startFixture({ database, runsFile, approvers: true, releaseFile: join(dir, 'never') });
    const turn = (
      await gql(first, 'alice', START_TURN, { input: { agentId: 'direct', message: 'append theta', background: true } })
    ).startTurn.turn;
    await waitFor('the tool to start', () => runsOf(runsFile, 'theta') === 1);
    await first.kill();

    const second = await startFixture({ database, runsFile, approvers: true });
    expect((await settled(second, turn.id)).status).toBe('COMPLETED');
    const keys = join(dir, 'keys.json');
    writeFileSync(keys, await (await fetch(new URL('/.well-known/toolgate-receipt-keys.json', second.url))).text());
    const exported = await toolgate(['audit', 'export']);
    const records = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as DecisionRecord);
    expect(records.map((r) => r.kind)).toEqual(['RAN', 'INTERRUPTED']);
    expect(records[1]).toMatchObject({
      argsDigest: records[0]!.argsDigest,
      toolDefinitionDigest: records[0]!.toolDefinitionDigest,
    });
    const file = join(dir, 'records.jsonl');
    writeFileSync(file, exported.stdout);
    expect(await toolgate(['audit', 'verify', file, '--keys', keys])).toMatchObject({ code: 0 });
  });
});
