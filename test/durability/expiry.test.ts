// Expiry on time without a request, and retention: the background sweeper (src/agent/sweeper.ts) on a real
// server, driven by an injectable clock, plus one test on the real clock that watches a live subscription.
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/models/model.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { dataOf } from '../support/harness.js';
import { subscribeFetch } from '../support/live.js';
import {
  call,
  callStep,
  manualClock,
  startScenario,
  textStep,
  toolTexts,
  type Scenario,
  type ScenarioOptions,
} from '../support/scenario.js';

const EXPIRED_TEXT = 'Execution of wipe was not confirmed before the request expired.';
const TURN_UPDATED = `subscription($id: ID!) { turnUpdated(turnId: $id) { id status elicitations { status } messages { role text } } }`;
const ELICITATION = `query($id: ID!) { elicitation(id: $id) { id status resolvedBy } }`;
const PENDING = `query { pendingElicitations { totalCount } }`;

/** Calls `wipe` on every user message; says "Wiped." after its result. */
const wipeOnEveryMessage = (request: ModelRequest) =>
  request.messages.at(-1)!.role === 'USER' ? callStep(call('wipe')) : textStep('Wiped.');

let s: Scenario | undefined;

/** A server whose model calls `wipe` on every message (which asks), its pauses lasting `pauseTtlSeconds`. */
const startWiping = (pauseTtlSeconds: number, options: ScenarioOptions = {}) =>
  startScenario({ tools: [{ name: 'wipe' }], script: [wipeOnEveryMessage], agent: { pauseTtlSeconds }, ...options });
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe('the background sweeper', () => {
  it('expires a paused turn on time, with no request, and pushes the change to a live subscriber', async () => {
    const clock = manualClock();
    s = await startWiping(60, { clock: clock.now, sweepIntervalSeconds: 0.05 });
    const { turn } = await s.start('wipe everything');
    expect(turn.status).toBe('PAUSED');
    const live = await subscribeFetch(s.h.url, TURN_UPDATED, { id: turn.id });
    await live.waitFor((e) => e.data?.turnUpdated.status === 'PAUSED', 'the current state');

    clock.advance(59);
    expect((await s.h.server.sweep()).expiredTurns).toBe(0);
    expect((await s.turn(turn.id)).status).toBe('PAUSED');

    clock.advance(2);
    // Nobody asks: the sweeper's timer finds the turn, expires it and publishes it.
    const pushed = await live.waitFor(
      (e) => e.data?.turnUpdated.status === 'EXPIRED',
      'EXPIRED pushed by the sweeper',
      10_000,
    );
    live.stop();
    expect(pushed.data.turnUpdated.elicitations).toEqual([{ status: 'EXPIRED' }]);
    expect(toolTexts(pushed.data.turnUpdated.messages)).toEqual([EXPIRED_TEXT]);
    expect(dataOf(await s.h.gql(PENDING)).pendingElicitations.totalCount).toBe(0);
    expect(s.tools.count('wipe')).toBe(0);
  });

  it('on the real clock: pauseTtlSeconds 1, a sweep every 0.2 s; the subscriber and a poller both see EXPIRED', async () => {
    s = await startWiping(1, { sweepIntervalSeconds: 0.2 });
    const { turn } = await s.start('wipe everything');
    expect(turn.status).toBe('PAUSED');
    const live = await subscribeFetch(s.h.url, TURN_UPDATED, { id: turn.id });
    await live.waitFor((e) => e.data?.turnUpdated.status === 'EXPIRED', 'EXPIRED pushed by the sweeper', 15_000);
    live.stop();
    const polled = await s.turn(turn.id);
    expect(polled.status).toBe('EXPIRED');
    expect(polled.elicitations.map((e: any) => e.status)).toEqual(['EXPIRED']);
    expect(toolTexts(polled.messages)).toEqual([EXPIRED_TEXT]);
    const answer = await s.resolve(turn.pendingElicitations[0].id, 'ACCEPT');
    expect(answer.userErrors.map((e: any) => e.code)).toEqual(['EXPIRED']);
    expect(s.tools.count('wipe')).toBe(0);
  });

  it('deletes expired, never-answered requests retentionDays after they expired, in batches; turns, messages and answered requests stay', async () => {
    const clock = manualClock();
    s = await startWiping(60, { clock: clock.now, retentionDays: 1, sweepBatchSize: 2 });
    const expiring = [];
    for (let i = 0; i < 5; i++) expiring.push((await s.start(`wipe ${i}`)).turn);
    const answered = (await s.start('wipe and confirm')).turn;
    const accepted = await s.resolve(answered.pendingElicitations[0].id, 'ACCEPT');
    expect(accepted.turn.status).toBe('COMPLETED');

    clock.advance(61);
    expect(await s.h.server.sweep()).toMatchObject({ expiredTurns: 5, deletedElicitations: 0 });
    const waiting = (await s.start('wipe later')).turn; // paused now, not expired
    const before = await s.turn(expiring[0].id);

    clock.advance(86_400 - 10); // one day after the pause, but not yet one day after the expiry
    expect((await s.h.server.sweep()).deletedElicitations).toBe(0);

    clock.advance(20);
    const report = await s.h.server.sweep();
    expect(report.deletedElicitations).toBe(5);
    expect(report.batches).toBeGreaterThanOrEqual(1 + 3); // one expiry batch, then deletions 2 + 2 + 1

    for (const turn of expiring) {
      expect(dataOf(await s.h.gql(ELICITATION, { id: turn.pendingElicitations[0].id })).elicitation).toBeNull();
    }
    const after = await s.turn(expiring[0].id);
    expect(after.status).toBe('EXPIRED');
    expect(after.elicitations).toEqual([]);
    expect(after.messages).toEqual(before.messages);
    expect(toolTexts(after.messages)).toEqual([EXPIRED_TEXT]);
    // An answered request is the audit of who allowed what: it stays.
    expect(dataOf(await s.h.gql(ELICITATION, { id: answered.pendingElicitations[0].id })).elicitation).toMatchObject({
      status: 'ACCEPTED',
      resolvedBy: 'local',
    });
    // A paused turn is not expired state: it is swept only once its own time has passed.
    expect((await s.turn(waiting.id)).status).toBe('EXPIRED');
    expect(dataOf(await s.h.gql(ELICITATION, { id: waiting.pendingElicitations[0].id })).elicitation.status).toBe(
      'EXPIRED',
    );
  });

  it('yields to other work between batches, so a long sweep does not hold requests up', async () => {
    const clock = manualClock();
    s = await startWiping(60, { clock: clock.now, sweepBatchSize: 2 });
    for (let i = 0; i < 7; i++) await s.start(`wipe ${i}`);
    clock.advance(61);

    let turnsOfOtherWork = 0;
    let sweeping = true;
    const otherWork = () => {
      turnsOfOtherWork++;
      if (sweeping) setImmediate(otherWork);
    };
    setImmediate(otherWork);
    const report = await s.h.server.sweep();
    sweeping = false;
    expect(report.expiredTurns).toBe(7);
    // 4 expiry batches (2 + 2 + 2 + 1), one escalation batch, and one retention batch each for elicitations, webhook
    // deliveries, approval grants, idempotency keys and chat cards: other work ran between every two of them.
    expect(report.batches).toBe(10);
    expect(turnsOfOtherWork).toBeGreaterThanOrEqual(report.batches - 1);
  });
});

/** Runs one statement on the scenario's database (SQLite file or PostgreSQL URL); `?` placeholders. */
async function execSql(database: string, sql: string, params: unknown[]): Promise<unknown[]> {
  if (!/^postgres(ql)?:/.test(database)) {
    const db = new Database(database);
    try {
      const statement = db.prepare(sql);
      return statement.reader ? statement.all(...params) : (statement.run(...params), []);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    let n = 0;
    return (
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      )
    ).rows;
  } finally {
    await client.end();
  }
}

describe('retention of the chat cards', () => {
  it('deletes a posted card of a decided request retentionDays after its last change; a waiting request keeps its card', async () => {
    const clock = manualClock();
    s = await startWiping(60, { clock: clock.now, retentionDays: 1 });
    const { database } = s.h;
    const decided = (await s.start('wipe 1')).turn.pendingElicitations[0].id;
    expect((await s.resolve(decided, 'DECLINE')).userErrors).toEqual([]);
    const waiting = (await s.start('wipe 2')).turn.pendingElicitations[0].id;
    const card = (elicitationId: string, target: string, state: string) =>
      execSql(
        database,
        `INSERT INTO notifier_cards (notifier, elicitation_id, target, state, message_ref, created_at, updated_at)
          VALUES ('slack', ?, ?, ?, ?, ?, ?)`,
        [
          elicitationId,
          target,
          state,
          state === 'POSTED' ? '1.0001' : null,
          clock.now().toISOString(),
          clock.now().toISOString(),
        ],
      );
    await card(decided, 'C1', 'POSTED');
    await card(decided, 'C2', 'POSTING'); // a post under way is never deleted here
    await card(waiting, 'C1', 'POSTED');

    clock.advance(86_400 - 10);
    expect((await s.h.server.sweep()).deletedCards).toBe(0);
    clock.advance(20);
    // The waiting request is past its own expiry by now: keep it waiting with a later expiry, as a live one would be.
    await execSql(database, 'UPDATE elicitations SET status = ? WHERE id = ?', ['PENDING', waiting]);
    expect((await s.h.server.sweep()).deletedCards).toBe(1);
    const left = await execSql(
      database,
      'SELECT elicitation_id, target FROM notifier_cards ORDER BY target, elicitation_id',
      [],
    );
    expect(left).toEqual(
      expect.arrayContaining([
        { elicitation_id: decided, target: 'C2' },
        { elicitation_id: waiting, target: 'C1' },
      ]),
    );
    expect(left).toHaveLength(2);
  });
});

describe('the sweeper settings in the config file', () => {
  const minimal = { models: { m: { provider: 'scripted' } }, agents: [{ id: 'a', name: 'A', model: 'm' }] };

  it('accepts "sweeper" with intervalSeconds, batchSize and retentionDays', () => {
    const config = parseConfig(
      { ...minimal, sweeper: { intervalSeconds: 10, batchSize: 500, retentionDays: 7 } },
      'toolgate.json',
    );
    expect(config.sweeper).toEqual({ intervalSeconds: 10, batchSize: 500, retentionDays: 7 });
  });

  it('refuses a bad value with one line naming the file, the path and the problem', () => {
    expect(() => parseConfig({ ...minimal, sweeper: { retentionDays: -1 } }, 'toolgate.json')).toThrow(ConfigError);
    expect(() => parseConfig({ ...minimal, sweeper: { retentionDays: -1 } }, 'toolgate.json')).toThrow(
      /^toolgate\.json: sweeper\.retentionDays: /,
    );
    expect(() => parseConfig({ ...minimal, sweeper: { batchSize: 0.5 } }, 'toolgate.json')).toThrow(
      /^toolgate\.json: sweeper\.batchSize: /,
    );
  });
});
