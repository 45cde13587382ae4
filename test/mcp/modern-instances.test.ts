// MCP 2026-07-28 on two toolgate instances, A and B, sharing one fresh PostgreSQL database, Redis pub/sub and the
// requestState key: the state A issued with input_required is accepted on B, the tool runs once (on B), and a replay
// of the retry on A gets the kept result and runs nothing. An instance with another key refuses the state.
//
// PostgreSQL and Redis only (docs/multi-instance.md). Fails when PostgreSQL or Redis is down.
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPubSub } from '../../src/events/redis-pubsub.js';
import { startHarness, type Harness } from '../support/harness.js';
import { memoryLog, type MemoryLog } from '../support/log.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/postgres.js';
import { REDIS_URL } from '../support/redis.js';
import type { CountingToolSource } from '../support/tools.js';
import { connectModernClient } from './modern-support.js';
import { ALICE_TOKEN, countingTools, GATEWAY_ID, gatewayConfig, mcpUrl } from './support.js';

const PREFIX = `toolgate-test:${randomUUID()}:`;
const PATH = `/mcp/${GATEWAY_ID}`;
const SHARED = { id: 'shared', secret: 'a-shared-key-of-at-least-32-characters-9' };
const OTHER = { id: 'shared', secret: 'another-key-of-at-least-32-characters-77' };

interface Instance {
  h: Harness;
  tools: CountingToolSource;
  log: MemoryLog;
}

async function startInstance(database: string, key: typeof SHARED): Promise<Instance> {
  const tools = countingTools();
  const config = gatewayConfig();
  config.server = { mcpRequestState: { keys: [key] } };
  const pubsub = await createRedisPubSub({ url: REDIS_URL, prefix: PREFIX });
  const log = memoryLog('info');
  const h = await startHarness({ config, toolSources: [tools], database, pubsub, logger: log.logger });
  return { h, tools, log };
}

interface InputRequired {
  resultType: 'input_required';
  inputRequests?: Record<string, unknown>;
  requestState?: string;
}

const manualClient = (instance: Instance) =>
  connectModernClient(mcpUrl(instance.h, PATH), { token: ALICE_TOKEN, canElicit: true, autoFulfill: false });

describe('MCP 2026-07-28 on two instances, one PostgreSQL database, one Redis', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  let c: Instance;
  const clients: Client[] = [];
  beforeAll(async () => {
    database = await freshPostgresDatabase();
    a = await startInstance(database.url, SHARED);
    b = await startInstance(database.url, SHARED);
    c = await startInstance(database.url, OTHER);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await Promise.all([a?.h.close(), b?.h.close(), c?.h.close()]);
    await database?.drop();
  });

  it('the state issued by A, the retry on B: the tool runs once, on B; a replay on A runs nothing; a key not shared refuses it', async () => {
    const onA = await manualClient(a);
    const onB = await manualClient(b);
    const onC = await manualClient(c);
    clients.push(onA, onB, onC);
    const params = { name: 'drop', arguments: { ids: [21] } };
    const asked = (await onA.callTool(params, { allowInputRequired: true })) as unknown as InputRequired;
    expect(asked.resultType).toBe('input_required');
    const inputResponses = Object.fromEntries(
      Object.keys(asked.inputRequests ?? {}).map((id) => [id, { action: 'accept' }]),
    );
    expect(Object.keys(inputResponses)).toHaveLength(1);
    const retry = { ...params, inputResponses, requestState: asked.requestState } as never;

    await expect(onC.callTool(retry, { allowInputRequired: true })).rejects.toThrow(/Invalid or expired requestState/);
    expect(c.log.find('MCP requestState refused').map((line) => line.reason)).toEqual(['signature']);
    const result = await onB.callTool(retry, { allowInputRequired: true });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [21]' }], isError: false });
    expect(await onA.callTool(retry, { allowInputRequired: true })).toEqual(result);
    expect([a.tools.count('drop'), b.tools.count('drop'), c.tools.count('drop')]).toEqual([0, 1, 0]);
  });
});
