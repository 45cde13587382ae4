// An MCP client's tools through a gateway agent, over real HTTP: the list, a read-only call that runs at once, a
// destructive one that waits for a person (answered through GraphQL, through the client's own elicitation handler,
// or both at once) and runs once, progress while it waits, a client that stops waiting, and a server that closes.
import { CancelledNotificationSchema, ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import type { CountingToolSource } from '../support/tools.js';
import {
  ALICE_TOKEN,
  connectClient,
  elicitation,
  GATEWAY_ID,
  gatewayConfig,
  mcpUrl,
  pendingElicitations,
  startGateway,
  answerAsAlice,
  onlyPending,
} from './support.js';

const KEY_META = 'dev.toolgate/idempotency-key';

describe('the MCP gateway', () => {
  let h: Harness;
  let tools: CountingToolSource;
  beforeAll(async () => {
    ({ h, tools } = await startGateway({ mcpProgressIntervalMs: 50 }));
  });
  afterAll(() => h?.close());

  const gateway = () => mcpUrl(h, `/mcp/${GATEWAY_ID}`);
  const resolve = (elicitationId: string, action: 'ACCEPT' | 'DECLINE') => answerAsAlice(h, elicitationId, action);

  it("lists the gateway's tools as MCP tools, at /mcp (the first gateway) and /mcp/<id>", async () => {
    for (const url of [mcpUrl(h), gateway()]) {
      const { client } = await connectClient(url, { token: ALICE_TOKEN });
      const { tools: listed } = await client.listTools();
      expect(listed.map((tool) => tool.name).sort()).toEqual(['drop', 'look']);
      const drop = listed.find((tool) => tool.name === 'drop')!;
      expect(drop).toMatchObject({
        title: 'Drop',
        description: 'Drops the given ids.',
        inputSchema: { type: 'object', required: ['ids'] },
        annotations: { destructiveHint: true },
      });
      await client.close();
    }
  });

  it('a read-only call runs at once and returns its result', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('look');
    const result = await client.callTool({ name: 'look', arguments: {} });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'look ran with {}' }], isError: false });
    expect(tools.count('look')).toBe(before + 1);
    await client.close();
  });

  it('an unknown tool: InvalidParams "Unknown tool: <name>"', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const error = await client.callTool({ name: 'nope', arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toBe('MCP error -32602: Unknown tool: nope');
    await client.close();
  });

  it('a destructive call waits; answered through GraphQL, the waiting client gets the result', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const call = client.callTool({ name: 'drop', arguments: { ids: [1, 2] } });
    const pending = await onlyPending(h);
    expect(pending.toolCall).toEqual({ name: 'drop', arguments: { ids: [1, 2] } });
    expect(tools.count('drop')).toBe(before);
    expect((await resolve(pending.id, 'ACCEPT')).userErrors).toEqual([]);
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'dropped [1,2]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it("answered through the client's elicitation handler: the form it was asked, and the tool runs once", async () => {
    const asked: { params: any; pending: any }[] = [];
    const { client } = await connectClient(gateway(), {
      token: ALICE_TOKEN,
      elicit: async (params) => {
        asked.push({ params, pending: await onlyPending(h) });
        return { action: 'accept' };
      },
    });
    // In place of the SDK's own handler: what the server says to cancel (it must not name a question answered).
    const cancelled: unknown[] = [];
    client.setNotificationHandler(CancelledNotificationSchema, (notification) => void cancelled.push(notification));
    const before = tools.count('drop');
    const result = await client.callTool({ name: 'drop', arguments: { ids: [3] } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [3]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    expect(cancelled).toEqual([]);
    expect(asked).toHaveLength(1);
    const [{ params, pending }] = asked as [{ params: any; pending: any }];
    expect(params).toMatchObject({
      mode: 'form',
      message: pending.message,
      requestedSchema: { type: 'object' },
      _meta: { 'toolgate.dev/tool_call': { name: 'drop', arguments: { ids: [3] } } },
    });
    expect(await elicitation(h, ALICE_TOKEN, pending.id)).toMatchObject({ status: 'ACCEPTED', resolvedBy: 'alice' });
    expect(await pendingElicitations(h, ALICE_TOKEN, 0)).toEqual([]);
    await client.close();
  });

  it("declined through the client's elicitation handler: the tool does not run, the client reads why", async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN, elicit: () => ({ action: 'decline' }) });
    const before = tools.count('drop');
    const result = await client.callTool({ name: 'drop', arguments: { ids: [4] } });
    expect(result).toEqual({ content: [{ type: 'text', text: 'User declined execution of drop.' }], isError: true });
    expect(tools.count('drop')).toBe(before);
    await client.close();
  });

  it('answered elsewhere while the client is asked: the question is cancelled, and the client gets the result', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN, elicit: () => ({ action: 'decline' }) });
    // In place of that handler: this client asks its user, who does not answer.
    let asked!: (requestId: string | number) => void;
    const question = new Promise<string | number>((resolveAsked) => (asked = resolveAsked));
    client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
      asked(extra.requestId);
      return new Promise(() => {});
    });
    // Recorded in place of the SDK's own handler (which ignores a cancellation of request id 0).
    const cancelled: { requestId?: string | number }[] = [];
    client.setNotificationHandler(CancelledNotificationSchema, ({ params }) => void cancelled.push(params));
    const call = client.callTool({ name: 'drop', arguments: { ids: [6] } });
    const requestId = await question;
    await resolve((await onlyPending(h)).id, 'ACCEPT');
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'dropped [6]' }], isError: false });
    expect(cancelled).toEqual([expect.objectContaining({ requestId })]);
    await client.close();
  });

  it('answered in both places at once: the tool runs once', async () => {
    let answeredInGraphQL: Promise<unknown> = Promise.resolve();
    const { client } = await connectClient(gateway(), {
      token: ALICE_TOKEN,
      elicit: async () => {
        // The inbox answers while the client's own answer is on its way.
        const pending = await pendingElicitations(h, ALICE_TOKEN);
        answeredInGraphQL = resolve(pending[0].id, 'ACCEPT');
        return { action: 'accept' };
      },
    });
    const before = tools.count('drop');
    const result = await client.callTool({ name: 'drop', arguments: { ids: [5] } });
    await answeredInGraphQL;
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [5]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    expect(await pendingElicitations(h, ALICE_TOKEN, 0)).toEqual([]);
    await client.close();
  });

  it('sends progress notifications while the call waits, when the request carries a progressToken', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const progress: number[] = [];
    let sawTwo: () => void;
    const twoSeen = new Promise<void>((done) => (sawTwo = done));
    const call = client.callTool({ name: 'drop', arguments: { ids: [6] } }, undefined, {
      onprogress: ({ progress: value }) => {
        progress.push(value);
        if (progress.length === 2) sawTwo();
      },
      resetTimeoutOnProgress: true,
    });
    await twoSeen;
    const pending = await onlyPending(h);
    await resolve(pending.id, 'ACCEPT');
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'dropped [6]' }] });
    expect(progress[1]!).toBeGreaterThan(progress[0]!);
    await client.close();
  });

  it('a client that cancels stops waiting: the confirmation stays pending, and its key gets the same call back', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const params = { name: 'drop', arguments: { ids: [8] }, _meta: { [KEY_META]: 'drop-8' } };
    const cancel = new AbortController();
    const first = client.callTool(params, undefined, { signal: cancel.signal });
    const pending = await onlyPending(h);
    cancel.abort();
    await expect(first).rejects.toThrow();
    await new Promise((settle) => setTimeout(settle, 100));
    expect(await elicitation(h, ALICE_TOKEN, pending.id)).toMatchObject({ status: 'PENDING' });

    const again = client.callTool(params);
    expect((await onlyPending(h)).id).toBe(pending.id);
    await resolve(pending.id, 'ACCEPT');
    expect(await again).toMatchObject({ content: [{ type: 'text', text: 'dropped [8]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it('a key that is empty or not a string: InvalidParams naming the _meta key, and nothing waits or runs', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    for (const [key, problem] of [
      ['', 'is empty'],
      [42, 'is not a string'],
      [true, 'is not a string'],
      [{ id: 'drop-10' }, 'is not a string'],
      [['drop-10'], 'is not a string'],
    ] as const) {
      const error = await client
        .callTool({ name: 'drop', arguments: { ids: [10] }, _meta: { [KEY_META]: key } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32602);
      expect((error as McpError).message).toBe(`MCP error -32602: _meta "${KEY_META}" ${problem}`);
    }
    expect(await pendingElicitations(h, ALICE_TOKEN, 0)).toEqual([]);
    expect(tools.count('drop')).toBe(before);
    await client.close();
  });

  it('a key used before for another call: InvalidParams naming the _meta key', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    await client.callTool({ name: 'look', arguments: {}, _meta: { [KEY_META]: 'used-once' } });
    const error = await client
      .callTool({ name: 'drop', arguments: { ids: [9] }, _meta: { [KEY_META]: 'used-once' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toContain(`_meta "${KEY_META}"`);
    await client.close();
  });
});

describe('the MCP gateway when the server closes', () => {
  it('ends the sessions at once: a waiting call stops waiting, and its confirmation stays pending', async () => {
    const { h, tools } = await startGateway({ shutdownGraceMs: 10_000 });
    const { client } = await connectClient(mcpUrl(h, `/mcp/${GATEWAY_ID}`), { token: ALICE_TOKEN });
    const call = client.callTool({ name: 'drop', arguments: { ids: [1] } });
    call.catch(() => {});
    const [pending] = await pendingElicitations(h, ALICE_TOKEN);
    const closing = Date.now();
    await h.close();
    // An open response stream would hold its connection until the grace period ends.
    expect(Date.now() - closing).toBeLessThan(5_000);
    await client.close();

    const again = await startHarness({ config: gatewayConfig(), toolSources: [tools], database: h.database });
    try {
      expect(await elicitation(again, ALICE_TOKEN, pending.id)).toMatchObject({ status: 'PENDING' });
      expect(tools.count('drop')).toBe(0);
    } finally {
      await again.close();
    }
  });
});
