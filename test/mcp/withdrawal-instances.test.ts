// A caller that stops waiting, seen from another instance: two toolgate instances, A and B, sharing one fresh
// PostgreSQL database and Redis pub/sub. B's GraphQL reads whether the client waiting on A is connected (a record,
// not A's memory), and a call withdrawn on A reads as withdrawn on B, where an ACCEPT runs nothing.
//
// PostgreSQL and Redis only, as test/mcp/instances.test.ts. Fails when PostgreSQL or Redis is down.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPubSub } from '../../src/events/redis-pubsub.js';
import { dataOf, RESOLVE, startHarness, type Harness } from '../support/harness.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';
import { REDIS_URL } from '../support/redis.js';
import type { CountingToolSource } from '../support/tools.js';
import {
  ALICE_TOKEN,
  bearer,
  connectClient,
  countingTools,
  GATEWAY_ID,
  gatewayConfig,
  mcpUrl,
  pendingElicitations,
} from './support.js';

const PREFIX = `toolgate-test:${randomUUID()}:`;
const KEY_META = 'dev.toolgate/idempotency-key';
const PATH = `/mcp/${GATEWAY_ID}`;

const REQUEST = `query E($id: ID!) { node(id: $id) { ... on Elicitation { id status withdrawn callerConnected } } }`;

interface Instance {
  h: Harness;
  tools: CountingToolSource;
}

async function startInstance(database: string): Promise<Instance> {
  const tools = countingTools();
  const pubsub = await createRedisPubSub({ url: REDIS_URL, prefix: PREFIX });
  const h = await startHarness({ config: gatewayConfig(), toolSources: [tools], database, pubsub });
  return { h, tools };
}

describe('a caller that stops waiting, on two instances', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    database = await freshPostgresDatabase();
    a = await startInstance(database.url);
    b = await startInstance(database.url);
  });
  afterAll(async () => {
    await Promise.all([a?.h.close(), b?.h.close()]);
    await database?.drop();
  });

  const request = async (on: Instance, id: string) => dataOf(await on.h.gql(REQUEST, { id }, bearer(ALICE_TOKEN))).node;

  /** The request as `on` reads it, once `done` says so (or after about five seconds). */
  async function readUntil(on: Instance, id: string, done: (node: any) => boolean): Promise<any> {
    for (let tries = 0; ; tries++) {
      const node = await request(on, id);
      if (done(node) || tries > 200) return node;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('B reads whether the client waiting on A is connected; the retry on B with the key finds the call', async () => {
    const params = { name: 'drop', arguments: { ids: [1] }, _meta: { [KEY_META]: 'two-instances-1' } };
    const onA = await connectClient(mcpUrl(a.h, PATH), { token: ALICE_TOKEN });
    onA.client.callTool(params).catch(() => {});
    const [pending] = await pendingElicitations(b.h, ALICE_TOKEN);
    expect(await readUntil(b, pending.id, (n) => n.callerConnected === true)).toMatchObject({ callerConnected: true });

    await onA.client.close();
    expect(await readUntil(b, pending.id, (n) => n.callerConnected === false)).toEqual({
      id: pending.id,
      status: 'PENDING',
      withdrawn: null,
      callerConnected: false,
    });

    const onB = await connectClient(mcpUrl(b.h, PATH), { token: ALICE_TOKEN });
    const retry = onB.client.callTool(params);
    expect(await readUntil(a, pending.id, (n) => n.callerConnected === true)).toMatchObject({ callerConnected: true });
    const answered = dataOf(
      await a.h.gql(RESOLVE, { input: { elicitationId: pending.id, action: 'ACCEPT' } }, bearer(ALICE_TOKEN)),
    ).resolveElicitation;
    expect(answered.userErrors).toEqual([]);
    expect(await retry).toMatchObject({ content: [{ type: 'text', text: 'dropped [1]' }], isError: false });
    expect(a.tools.count('drop') + b.tools.count('drop')).toBe(1);
    await onB.client.close();
  });

  it('a call withdrawn on A reads as withdrawn on B, and an ACCEPT there runs nothing', async () => {
    const onA = await connectClient(mcpUrl(a.h, PATH), { token: ALICE_TOKEN });
    const before = a.tools.count('drop') + b.tools.count('drop');
    const cancel = new AbortController();
    const call = onA.client.callTool({ name: 'drop', arguments: { ids: [2] } }, undefined, { signal: cancel.signal });
    call.catch(() => {});
    const [pending] = await pendingElicitations(b.h, ALICE_TOKEN);
    cancel.abort('gave up');

    expect(await readUntil(b, pending.id, (n) => n.status !== 'PENDING')).toEqual({
      id: pending.id,
      status: 'CANCELLED',
      withdrawn: 'CANCELLED',
      callerConnected: null,
    });
    const answered = dataOf(
      await b.h.gql(RESOLVE, { input: { elicitationId: pending.id, action: 'ACCEPT' } }, bearer(ALICE_TOKEN)),
    ).resolveElicitation;
    expect(answered.userErrors).toEqual([expect.objectContaining({ code: 'ALREADY_RESOLVED' })]);
    expect(a.tools.count('drop') + b.tools.count('drop')).toBe(before);
    await onA.client.close();
  });
});
