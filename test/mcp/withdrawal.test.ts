// A gateway caller that stops waiting, with the SDK's client over real HTTP: one that cancels its request (an
// AbortSignal: notifications/cancelled), one that goes away (its connection closes) and one that ends its session
// (DELETE). Without an idempotency key the call is withdrawn: an ACCEPT afterwards runs nothing, and the request says
// why. With a key it stays pending, shown as its caller not connected, and a retry with the key finds it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, type Harness } from '../support/harness.js';
import type { CountingToolSource } from '../support/tools.js';
import { ALICE_TOKEN, bearer, connectClient, GATEWAY_ID, mcpUrl, onlyPending, startGateway } from './support.js';

const KEY_META = 'dev.toolgate/idempotency-key';

const REQUEST = `query E($id: ID!) {
  node(id: $id) {
    ... on Elicitation { id status withdrawn callerConnected resolvedBy resolution response { action } }
  }
}`;

describe('a gateway caller that stops waiting', () => {
  let h: Harness;
  let tools: CountingToolSource;
  beforeAll(async () => {
    ({ h, tools } = await startGateway({ mcpProgressIntervalMs: 50 }));
  });
  afterAll(() => h?.close());

  const gateway = () => mcpUrl(h, `/mcp/${GATEWAY_ID}`);
  const request = async (id: string) => dataOf(await h.gql(REQUEST, { id }, bearer(ALICE_TOKEN))).node;
  const accept = async (elicitationId: string) =>
    dataOf(await h.gql(RESOLVE, { input: { elicitationId, action: 'ACCEPT' } }, bearer(ALICE_TOKEN)))
      .resolveElicitation;

  /** The request once it stopped being PENDING (the withdrawal is written after the client's request ended). */
  async function settled(id: string): Promise<any> {
    for (let tries = 0; ; tries++) {
      const node = await request(id);
      if (node.status !== 'PENDING' || tries > 200) return node;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** The request's callerConnected, waited for until it reads `expected` (it is written as the wait starts or ends). */
  async function connected(id: string, expected: boolean): Promise<boolean | null> {
    for (let tries = 0; ; tries++) {
      const { callerConnected } = await request(id);
      if (callerConnected === expected || tries > 200) return callerConnected;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** After the withdrawal: an ACCEPT is refused, and the tool never ran. */
  async function acceptRunsNothing(id: string, before: number): Promise<void> {
    const answered = await accept(id);
    expect(answered.userErrors).toEqual([expect.objectContaining({ code: 'ALREADY_RESOLVED' })]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(tools.count('drop')).toBe(before);
  }

  it('a cancelled request without a key: the call is withdrawn, and accepting it runs nothing', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const cancel = new AbortController();
    const call = client.callTool({ name: 'drop', arguments: { ids: [1] } }, undefined, { signal: cancel.signal });
    const pending = await onlyPending(h);
    cancel.abort('gave up');
    await expect(call).rejects.toThrow();

    expect(await settled(pending.id)).toEqual({
      id: pending.id,
      status: 'CANCELLED',
      withdrawn: 'CANCELLED',
      callerConnected: null,
      resolvedBy: 'alice',
      resolution: 'ANSWERED',
      response: { action: 'CANCEL' },
    });
    await acceptRunsNothing(pending.id, before);
    await client.close();
  });

  it('a client whose request times out (the SDK cancels it): withdrawn; a retry without a key makes one card', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const params = { name: 'drop', arguments: { ids: [5] } };
    // Long enough for the call to pause first on a busy machine.
    const call = client.callTool(params, undefined, { timeout: 2_000 });
    const pending = await onlyPending(h);
    await expect(call).rejects.toThrow(/timed out/i);
    expect(await settled(pending.id)).toMatchObject({ status: 'CANCELLED', withdrawn: 'CANCELLED' });

    // The retry is the one card left to answer, and the call runs once.
    const retry = client.callTool(params);
    const second = await onlyPending(h);
    expect(second.id).not.toBe(pending.id);
    expect((await accept(second.id)).userErrors).toEqual([]);
    expect(await retry).toMatchObject({ content: [{ type: 'text', text: 'dropped [5]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });

  it("progress keeps a call alive past the client's timeout when the client resets it on progress", async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const call = client.callTool({ name: 'drop', arguments: { ids: [6] } }, undefined, {
      timeout: 800,
      resetTimeoutOnProgress: true,
      onprogress: () => {},
    });
    const pending = await onlyPending(h);
    // Well past the client's timeout: progress (every 50 ms here) reset it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await request(pending.id)).toMatchObject({ status: 'PENDING', callerConnected: true });
    expect((await accept(pending.id)).userErrors).toEqual([]);
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'dropped [6]' }], isError: false });
    await client.close();
  });

  it('a client that goes away without a key: the call is withdrawn as DISCONNECTED', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const call = client.callTool({ name: 'drop', arguments: { ids: [2] } });
    call.catch(() => {});
    const pending = await onlyPending(h);
    // close() drops the connections and sends no DELETE: the client vanished.
    await client.close();

    expect(await settled(pending.id)).toMatchObject({ status: 'CANCELLED', withdrawn: 'DISCONNECTED' });
    await acceptRunsNothing(pending.id, before);
  });

  it('a client that ends its session (DELETE) while its call waits: withdrawn as DISCONNECTED', async () => {
    const { client, transport } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const before = tools.count('drop');
    const call = client.callTool({ name: 'drop', arguments: { ids: [3] } });
    call.catch(() => {});
    const pending = await onlyPending(h);
    await transport.terminateSession();

    expect(await settled(pending.id)).toMatchObject({ status: 'CANCELLED', withdrawn: 'DISCONNECTED' });
    await acceptRunsNothing(pending.id, before);
    await client.close();
  });

  it('a client with a key that goes away: the call stays pending, and a retry with the key finds it', async () => {
    const params = { name: 'drop', arguments: { ids: [4] }, _meta: { [KEY_META]: 'withdrawal-drop-4' } };
    const before = tools.count('drop');
    const gone = await connectClient(gateway(), { token: ALICE_TOKEN });
    gone.client.callTool(params).catch(() => {});
    const pending = await onlyPending(h);
    expect(await connected(pending.id, true)).toBe(true);
    await gone.client.close();
    expect(await connected(pending.id, false)).toBe(false);
    expect(await request(pending.id)).toMatchObject({ status: 'PENDING', withdrawn: null });

    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    const again = client.callTool(params);
    expect((await onlyPending(h)).id).toBe(pending.id);
    expect(await connected(pending.id, true)).toBe(true);
    expect((await accept(pending.id)).userErrors).toEqual([]);
    expect(await again).toMatchObject({ content: [{ type: 'text', text: 'dropped [4]' }], isError: false });
    expect(tools.count('drop')).toBe(before + 1);
    await client.close();
  });
});
