// The gateway to an MCP 2026-07-28 client (the SDK's v2 Client, pinned to the revision) on the same /mcp as 2025
// clients: tools/list, a read-only call, a gated call answered by the client through input_required, and one answered
// in GraphQL while the client cannot elicit.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { memoryLog } from '../support/log.js';
import type { CountingToolSource } from '../support/tools.js';
import {
  ALICE_TOKEN,
  answerAsAlice,
  bearer,
  BOB_TOKEN,
  connectClient,
  countingTools,
  elicitation,
  gatewayConfig,
  INITIALIZE,
  MCP_HEADERS,
  mcpUrl,
  messagesOf,
  onlyPending,
  pendingElicitations,
  send,
} from './support.js';
import { connectModernClient } from './modern-support.js';

const KEY_META = 'dev.toolgate/idempotency-key';
/** How long one request waits on someone else's answer here: a client that cannot elicit comes back in rounds. */
const WAIT_SECONDS = 0.4;

let h: Harness;
let tools: CountingToolSource;
/** The server's log: a refused state is one warn line with its reason, never the state. */
const log = memoryLog('info');

beforeAll(async () => {
  tools = countingTools();
  const config = gatewayConfig();
  config.server = { mcpRequestState: { waitSeconds: WAIT_SECONDS } };
  h = await startHarness({ config, toolSources: [tools], mcpProgressIntervalMs: 100, logger: log.logger });
});
afterAll(async () => {
  await h?.close();
});

describe('a 2026-07-28 client at /mcp', { timeout: 60_000 }, () => {
  it('negotiates 2026-07-28 and lists the tools', async () => {
    const client = await connectModernClient(mcpUrl(h), { token: ALICE_TOKEN });
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name).sort()).toEqual(['drop', 'look']);
    await client.close();
  });

  it('a read-only call runs at once', async () => {
    const client = await connectModernClient(mcpUrl(h), { token: ALICE_TOKEN });
    const before = tools.count('look');
    const result = await client.callTool({ name: 'look', arguments: {} });
    expect(result.isError).toBe(false);
    expect(tools.count('look')).toBe(before + 1);
    await client.close();
  });

  it('a gated call is answered input_required; the client accepts on the retry; the tool runs once', async () => {
    const asked: unknown[] = [];
    const client = await connectModernClient(mcpUrl(h), {
      token: ALICE_TOKEN,
      elicit: async (request) => {
        asked.push(request.params);
        return { action: 'accept' };
      },
    });
    const before = tools.count('drop');
    const result = await client.callTool({ name: 'drop', arguments: { ids: [7] } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [7]' }], isError: false });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: 'form' });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it('a client that cannot elicit: the call answered in GraphQL while it waits; its rounds of requestState get the result', async () => {
    const client = await connectModernClient(mcpUrl(h), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const progress: unknown[] = [];
    const call = client.callTool(
      { name: 'drop', arguments: { ids: [8] } },
      { onprogress: (update) => progress.push(update) },
    );
    const pending = await onlyPending(h);
    // Longer than one request's wait: the client is answered input_required with a state only, and comes back.
    await new Promise((resolve) => setTimeout(resolve, WAIT_SECONDS * 2500));
    expect(await elicitation(h, ALICE_TOKEN, pending.id)).toMatchObject({ status: 'PENDING' });
    expect(tools.count('drop')).toBe(before);
    expect((await answerAsAlice(h, pending.id, 'ACCEPT')).userErrors).toEqual([]);
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'dropped [8]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    // While it waited, progress on each round's stream.
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatchObject({ message: expect.stringMatching(/^Waiting for confirmation/) });
    await client.close();
  });

  it('what such a client gets while it waits: input_required with a requestState only, the result once decided', async () => {
    const client = await connectModernClient(mcpUrl(h), { token: ALICE_TOKEN, autoFulfill: false });
    const before = tools.count('drop');
    const params = { name: 'drop', arguments: { ids: [12] } };
    const waited = (await client.callTool(params, { allowInputRequired: true })) as unknown as InputRequired;
    expect(waited).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    // Nothing it could answer: the confirmation is the inbox's (the SDK reads no inputRequests as none).
    expect(Object.keys(waited.inputRequests ?? {})).toEqual([]);
    const pending = await onlyPending(h);
    // Coming back with the state before anyone answered: the same, a state to come back with.
    const retry = { ...params, requestState: waited.requestState };
    expect(await client.callTool(retry as never, { allowInputRequired: true })).toMatchObject({
      resultType: 'input_required',
    });
    expect((await answerAsAlice(h, pending.id, 'ACCEPT')).userErrors).toEqual([]);
    expect(await client.callTool(retry as never, { allowInputRequired: true })).toMatchObject({
      content: [{ type: 'text', text: 'dropped [12]' }],
      isError: false,
    });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it("answered in GraphQL first: the client's later answer is refused by the ledger, and the client gets the result", async () => {
    let answered: Promise<unknown> | null = null;
    const client = await connectModernClient(mcpUrl(h), {
      token: ALICE_TOKEN,
      elicit: async () => {
        const [pending] = await pendingElicitations(h, ALICE_TOKEN);
        answered = answerAsAlice(h, pending.id, 'ACCEPT');
        await answered;
        return { action: 'decline' };
      },
    });
    const before = tools.count('drop');
    const result = await client.callTool({ name: 'drop', arguments: { ids: [9] } });
    expect(answered).not.toBeNull();
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [9]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it("another user's requestState is refused, and runs nothing", async () => {
    const alice = await manualClient(ALICE_TOKEN);
    const bob = await manualClient(BOB_TOKEN);
    const before = tools.count('drop');
    const asked = await firstRound(alice, [10]);
    const [elicitationId] = Object.keys(asked.inputRequests ?? {});
    const retry = {
      name: 'drop',
      arguments: { ids: [10] },
      inputResponses: { [elicitationId!]: { action: 'accept' } },
      requestState: asked.requestState,
    };
    await expect(bob.callTool(retry as never, { allowInputRequired: true })).rejects.toThrow(
      /Invalid or expired requestState/,
    );
    expect(tools.count('drop')).toBe(before);
    expect(await elicitation(h, ALICE_TOKEN, elicitationId!)).toMatchObject({ status: 'PENDING' });
    // A state for another tool: refused as well.
    await expect(alice.callTool({ ...retry, name: 'look' } as never, { allowInputRequired: true })).rejects.toThrow(
      /Invalid or expired requestState/,
    );
    expect(log.find('MCP requestState refused').map((line) => line.reason)).toEqual(['another user', 'another call']);
    expect(log.text()).not.toContain(asked.requestState);
    expect(await alice.callTool(retry as never, { allowInputRequired: true })).toMatchObject({ isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    await Promise.all([alice.close(), bob.close()]);
  });

  it('a retry with the idempotency key instead of the state finds the same call; it runs once', async () => {
    const client = await manualClient(ALICE_TOKEN);
    const before = tools.count('drop');
    const params = { name: 'drop', arguments: { ids: [11] }, _meta: { [KEY_META]: 'modern-key-1' } };
    const first = await firstRound(client, [11], params);
    const again = await firstRound(client, [11], params);
    expect(Object.keys(again.inputRequests ?? {})).toEqual(Object.keys(first.inputRequests ?? {}));
    const [elicitationId] = Object.keys(again.inputRequests ?? {});
    const retry = {
      ...params,
      inputResponses: { [elicitationId!]: { action: 'accept' } },
      requestState: again.requestState,
    };
    const result = await client.callTool(retry as never, { allowInputRequired: true });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [11]' }] });
    // Later, by the key alone: the kept result.
    expect(await client.callTool(params, { allowInputRequired: true })).toEqual(result);
    // And by the first round's state, answered since: the same result, nothing runs.
    const late = { ...retry, requestState: first.requestState };
    expect(await client.callTool(late as never, { allowInputRequired: true })).toEqual(result);
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it('a 2025-06-18 initialize still opens a session, at that revision', async () => {
    const initialize = { ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: '2025-06-18' } };
    const response = await send(mcpUrl(h), {
      headers: { ...MCP_HEADERS, ...bearer(ALICE_TOKEN) },
      body: initialize,
    });
    expect(response.status).toBe(200);
    expect(response.headers['mcp-session-id']).toEqual(expect.any(String));
    expect(messagesOf(response)[0].result.protocolVersion).toBe('2025-06-18');
    const ended = await send(mcpUrl(h), {
      method: 'DELETE',
      headers: { ...bearer(ALICE_TOKEN), 'mcp-session-id': String(response.headers['mcp-session-id']) },
    });
    expect(ended.status).toBe(200);
  });

  it('a 2025 client still gets its session on the same endpoint', async () => {
    const { client } = await connectClient(mcpUrl(h), { token: ALICE_TOKEN });
    const result = await client.callTool({ name: 'look', arguments: {} });
    expect(result.isError).toBe(false);
    await client.close();
  });
});

interface InputRequired {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState?: string;
}

/** A client that declares elicitation and hands input_required back to the test. */
const manualClient = (token: string) => connectModernClient(mcpUrl(h), { token, canElicit: true, autoFulfill: false });

async function firstRound(
  client: Client,
  ids: number[],
  params: Parameters<Client['callTool']>[0] = { name: 'drop', arguments: { ids } },
): Promise<InputRequired> {
  const answer = (await client.callTool(params, { allowInputRequired: true })) as unknown as InputRequired;
  expect(answer).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
  expect(Object.values(answer.inputRequests ?? {})).toMatchObject([
    { method: 'elicitation/create', params: { mode: 'form' } },
  ]);
  return answer;
}

describe('a requestState past its time', { timeout: 60_000 }, () => {
  it('is refused and runs nothing; the idempotency key finds the call, with a new state', async () => {
    const expiring = countingTools();
    const config = gatewayConfig();
    config.server = { mcpRequestState: { ttlSeconds: 2 } };
    const expiringLog = memoryLog('info');
    const server = await startHarness({ config, toolSources: [expiring], logger: expiringLog.logger });
    try {
      const client = await connectModernClient(mcpUrl(server), {
        token: ALICE_TOKEN,
        canElicit: true,
        autoFulfill: false,
      });
      const params = { name: 'drop', arguments: { ids: [31] }, _meta: { [KEY_META]: 'modern-expiring' } };
      const asked = (await client.callTool(params, { allowInputRequired: true })) as unknown as InputRequired;
      const inputResponses = Object.fromEntries(
        Object.keys(asked.inputRequests ?? {}).map((id) => [id, { action: 'accept' }]),
      );
      await new Promise((resolve) => setTimeout(resolve, 3_100));
      const late = { ...params, inputResponses, requestState: asked.requestState } as never;
      await expect(client.callTool(late, { allowInputRequired: true })).rejects.toThrow(
        /Invalid or expired requestState/,
      );
      expect(expiring.count('drop')).toBe(0);
      expect(expiringLog.find('MCP requestState refused').map((line) => line.reason)).toEqual(['expired']);
      const again = (await client.callTool(params, { allowInputRequired: true })) as unknown as InputRequired;
      expect(Object.keys(again.inputRequests ?? {})).toEqual(Object.keys(inputResponses));
      const retry = { ...params, inputResponses, requestState: again.requestState } as never;
      expect(await client.callTool(retry, { allowInputRequired: true })).toMatchObject({ isError: false });
      expect(expiring.count('drop')).toBe(1);
      await client.close();
    } finally {
      await server.close();
    }
  });
});

describe('a server that closes while a 2026-07-28 client waits', { timeout: 60_000 }, () => {
  it('stops the waiting request, reads nothing from the closed store, and the call stays pending for the retry', async () => {
    const closingTools = countingTools();
    const config = gatewayConfig();
    config.server = { mcpRequestState: { waitSeconds: 20 } };
    const closingLog = memoryLog('info');
    const server = await startHarness({ config, toolSources: [closingTools], logger: closingLog.logger });
    const client = await connectModernClient(mcpUrl(server), { token: ALICE_TOKEN });
    const call = client.callTool({ name: 'drop', arguments: { ids: [41] } }, { onprogress: () => {} });
    call.catch(() => {});
    const pending = await onlyPending(server);
    const database = server.database;
    await server.close();
    await expect(call).rejects.toThrow();
    // Past the wait's next tick: a request still waiting would read the closed store and log a fault.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(closingLog.find('unexpected fault')).toEqual([]);
    expect(closingTools.count('drop')).toBe(0);
    const again = await startHarness({ config, toolSources: [closingTools], database });
    try {
      expect(await elicitation(again, ALICE_TOKEN, pending.id)).toMatchObject({ status: 'PENDING' });
    } finally {
      await client.close().catch(() => {});
      await again.close();
    }
  });
});
