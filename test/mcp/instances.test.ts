// The MCP gateway on two toolgate instances, A and B, sharing one fresh PostgreSQL database and Redis pub/sub (real
// Redis at 127.0.0.1:6379, REDIS_URL overrides; one channel prefix for this file): a call waiting on A is answered on
// B, a retry on B with the call's idempotency key gets the kept result, and two clients, one per instance, answering
// the same confirmation at once run the tool once. Each instance has a tool source of its own, so the test reads
// which instance ran a tool, and that it ran once in all.
//
// PostgreSQL and Redis only: that is how several instances share their state (docs/multi-instance.md).
// An SQLite file is one process's database: instances in several processes on one file are not a deployment.
// Fails when PostgreSQL or Redis is down.
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPubSub } from '../../src/events/redis-pubsub.js';
import { dataOf, RESOLVE, startHarness, type Harness } from '../support/harness.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';
import type { CountingToolSource } from '../support/tools.js';
import { REDIS_URL } from '../support/redis.js';
import {
  ALICE_TOKEN,
  bearer,
  connectClient,
  countingTools,
  elicitation,
  GATEWAY_ID,
  gatewayConfig,
  mcpUrl,
  pendingElicitations,
} from './support.js';

const PREFIX = `toolgate-test:${randomUUID()}:`;
const KEY_META = 'dev.toolgate/idempotency-key';
const PATH = `/mcp/${GATEWAY_ID}`;
/**
 * A waiting call also reads its turn again at each progress tick. A tick longer than any wait here means a result
 * can only have come through Redis, as the `turn` event of the instance that ran the tool.
 */
const TICK_MS = 120_000;

interface Instance {
  h: Harness;
  tools: CountingToolSource;
}

/** An instance on `database`: the gateway config, a counting tool source of its own, and the given pub/sub. */
async function startInstance(database: string, redis: boolean, tickMs: number): Promise<Instance> {
  const tools = countingTools();
  const pubsub = redis ? await createRedisPubSub({ url: REDIS_URL, prefix: PREFIX }) : undefined;
  const h = await startHarness({
    config: gatewayConfig(),
    toolSources: [tools],
    database,
    mcpProgressIntervalMs: tickMs,
    ...(pubsub && { pubsub }),
  });
  return { h, tools };
}

/** A counter of the runs of `drop` on each instance from now on. */
function dropsFromNow(a: Instance, b: Instance): () => { A: number; B: number } {
  const [startA, startB] = [a.tools.count('drop'), b.tools.count('drop')];
  return () => ({ A: a.tools.count('drop') - startA, B: b.tools.count('drop') - startB });
}

const resolveOn = async (instance: Instance, elicitationId: string) =>
  dataOf(await instance.h.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }, bearer(ALICE_TOKEN)))
    .resolveElicitation;

/** What a gated call's result carries besides: the signed record of the accept that let it run (docs/receipts.md). */
const RECEIPT = { 'dev.toolgate/receipt': expect.objectContaining({ kind: 'ACCEPTED' }) };

describe('the MCP gateway on two instances, one PostgreSQL database, one Redis', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    database = await freshPostgresDatabase();
    // One after the other: the second finds the migrations applied.
    a = await startInstance(database.url, true, TICK_MS);
    b = await startInstance(database.url, true, TICK_MS);
  });
  afterAll(async () => {
    await Promise.all([a?.h.close(), b?.h.close()]);
    await database?.drop();
  });

  it('a call waiting on A, answered through GraphQL on B: the client on A gets the result; the tool ran once, on B', async () => {
    const onA = await connectClient(mcpUrl(a.h, PATH), { token: ALICE_TOKEN });
    const params = { name: 'drop', arguments: { ids: [1, 2] }, _meta: { [KEY_META]: 'instances-1' } };
    const drops = dropsFromNow(a, b);
    const call = onA.client.callTool(params);
    // B sees the pause A made: one database.
    const [pending] = await pendingElicitations(b.h, ALICE_TOKEN);
    expect(pending.toolCall).toEqual({ name: 'drop', arguments: { ids: [1, 2] } });
    expect(drops()).toEqual({ A: 0, B: 0 });

    const resolved = await resolveOn(b, pending.id);
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.turn.status).toBe('COMPLETED');
    const result = (await call) as CallToolResult;
    expect(result).toEqual({ content: [{ type: 'text', text: 'dropped [1,2]' }], isError: false, _meta: RECEIPT });
    expect(drops()).toEqual({ A: 0, B: 1 });
    await onA.client.close();

    // The same call retried on B with its key, in a session of its own: the kept result, and nothing runs.
    const onB = await connectClient(mcpUrl(b.h, PATH), { token: ALICE_TOKEN });
    expect(await onB.client.callTool(params)).toEqual(result);
    await onB.client.close();
    // And on A again.
    const againOnA = await connectClient(mcpUrl(a.h, PATH), { token: ALICE_TOKEN });
    expect(await againOnA.client.callTool(params)).toEqual(result);
    await againOnA.client.close();
    expect(drops()).toEqual({ A: 0, B: 1 });
    expect(await pendingElicitations(a.h, ALICE_TOKEN, 0)).toEqual([]);
  });

  it('a client on A and one on B (a retry with the key) both accept through elicitation at once: the tool runs once, both get its result', async () => {
    const asked: string[] = [];
    let bothAsked!: () => void;
    const allAsked = new Promise<void>((done) => (bothAsked = done));
    /** Each client's handler answers only once both were asked: the two answers leave together. */
    const acceptWhenBothAsked = (instance: string) => async () => {
      asked.push(instance);
      if (asked.length === 2) bothAsked();
      await allAsked;
      return { action: 'accept' as const };
    };
    const onA = await connectClient(mcpUrl(a.h, PATH), { token: ALICE_TOKEN, elicit: acceptWhenBothAsked('A') });
    const onB = await connectClient(mcpUrl(b.h, PATH), { token: ALICE_TOKEN, elicit: acceptWhenBothAsked('B') });
    const params = { name: 'drop', arguments: { ids: [3] }, _meta: { [KEY_META]: 'instances-2' } };
    const drops = dropsFromNow(a, b);

    const callOnA = onA.client.callTool(params);
    const [pending] = await pendingElicitations(b.h, ALICE_TOKEN);
    // The retry on B finds the call by its key, still waiting, and asks its own client too.
    const callOnB = onB.client.callTool(params);
    const [resultOnA, resultOnB] = await Promise.all([callOnA, callOnB]);

    expect(asked.sort()).toEqual(['A', 'B']);
    expect(resultOnA).toEqual({ content: [{ type: 'text', text: 'dropped [3]' }], isError: false, _meta: RECEIPT });
    expect(resultOnB).toEqual(resultOnA);
    const runs = drops();
    expect(runs.A + runs.B).toBe(1);
    expect(await elicitation(a.h, ALICE_TOKEN, pending.id)).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'alice' });
    expect(await pendingElicitations(a.h, ALICE_TOKEN, 0)).toEqual([]);
    await Promise.all([onA.client.close(), onB.client.close()]);
    // The losing answer changed nothing later either.
    expect(drops()).toEqual(runs);
  });
});

describe('two instances whose pub/sub does not reach each other', { timeout: 90_000 }, () => {
  it("the client waiting on A still gets the result answered on B, at A's next progress tick", async () => {
    const database = await freshPostgresDatabase();
    // In-process pub/sub each: B's events never reach A, as when A's Redis connection drops an event.
    const a = await startInstance(database.url, false, 200);
    const b = await startInstance(database.url, false, 200);
    const drops = dropsFromNow(a, b);
    try {
      const onA = await connectClient(mcpUrl(a.h, PATH), { token: ALICE_TOKEN });
      const call = onA.client.callTool({ name: 'drop', arguments: { ids: [4] } });
      const [pending] = await pendingElicitations(b.h, ALICE_TOKEN);
      expect((await resolveOn(b, pending.id)).userErrors).toEqual([]);
      expect(await call).toEqual({ content: [{ type: 'text', text: 'dropped [4]' }], isError: false, _meta: RECEIPT });
      expect(drops()).toEqual({ A: 0, B: 1 });
      await onA.client.close();
    } finally {
      await Promise.all([a.h.close(), b.h.close()]);
      await database.drop();
    }
  });
});
