// The receipt in a gateway call's result (docs/mcp-gateway.md, docs/receipts.md): real MCP clients of both revisions
// (the v1 SDK's Client at 2025-11-25, the v2 Client pinned to 2026-07-28) over real HTTP. A gated call that was
// accepted and ran gets, in `_meta["dev.toolgate/receipt"]`, the signed ACCEPTED record: it verifies against the keys
// the server publishes and binds the arguments that ran (edited ones too). A call that ran unasked gets none.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlStore } from '../../src/db/sql-store.js';
import {
  argumentsDigest,
  verifyRecords,
  type DecisionRecord,
  type PublicJwk,
} from '../../src/domain/decision-records.js';
import { dataOf, RESOLVE, startHarness, type Harness } from '../support/harness.js';
import type { CountingToolSource } from '../support/tools.js';
import { ALICE_TOKEN, bearer, connectClient, countingTools, gatewayConfig, mcpUrl, onlyPending } from './support.js';
import { connectModernClient } from './modern-support.js';

const RECEIPT_META = 'dev.toolgate/receipt';

let h: Harness;
let tools: CountingToolSource;
let keys: PublicJwk[];

beforeAll(async () => {
  tools = countingTools();
  const config = gatewayConfig();
  config.server = { mcpRequestState: { waitSeconds: 0.4 } };
  h = await startHarness({ config, toolSources: [tools], mcpProgressIntervalMs: 100 });
  const response = await fetch(new URL('/.well-known/toolgate-receipt-keys.json', h.url));
  keys = ((await response.json()) as { keys: PublicJwk[] }).keys;
});
afterAll(async () => {
  await h?.close();
});

const receiptOf = (result: unknown) => (result as CallToolResult)._meta?.[RECEIPT_META] as DecisionRecord | undefined;

/** Accepts Alice's one pending confirmation in GraphQL, with these arguments instead of the call's. */
async function acceptEdited(args: Record<string, unknown>): Promise<void> {
  const pending = await onlyPending(h);
  const input = { elicitationId: pending.id, action: 'ACCEPT', arguments: args };
  expect(dataOf(await h.gql(RESOLVE, { input }, bearer(ALICE_TOKEN))).resolveElicitation.userErrors).toEqual([]);
}

/**
 * The receipt verifies on its own against the published keys, is the ACCEPTED record the chain holds, and the call's
 * RAN record there has the same argument digest: the arguments accepted are those that ran.
 */
async function expectBinding(receipt: DecisionRecord | undefined, ran: Record<string, unknown>): Promise<void> {
  expect(receipt).toMatchObject({ kind: 'ACCEPTED', toolId: 't:drop', argsDigest: argumentsDigest(ran) });
  expect(verifyRecords([receipt!], keys, { startsChain: false })).toBeNull();
  const chain = await (h.server.services.store as SqlStore).decisionRecords(null, null);
  expect(chain.find((r) => r.seq === receipt!.seq)).toEqual(receipt);
  const runs = chain.filter((r) => r.kind === 'RAN' && r.turnId === receipt!.turnId);
  expect(runs.map((r) => r.argsDigest)).toEqual([receipt!.argsDigest]);
}

describe('a 2025-11-25 client (SDK v1)', () => {
  it("accepted through the client's elicitation handler: the result's _meta carries the verifying receipt", async () => {
    const { client } = await connectClient(mcpUrl(h), { token: ALICE_TOKEN, elicit: () => ({ action: 'accept' }) });
    const result = await client.callTool({ name: 'drop', arguments: { ids: [3] } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [3]' }], isError: false });
    await expectBinding(receiptOf(result), { ids: [3] });
    expect(receiptOf(result)!.actor).toMatchObject({ id: 'alice' });
    await client.close();
  });

  it('edited, then accepted in GraphQL: the receipt binds the edited arguments, which are those that ran', async () => {
    const { client } = await connectClient(mcpUrl(h), { token: ALICE_TOKEN });
    const call = client.callTool({ name: 'drop', arguments: { ids: [1, 2] } });
    await acceptEdited({ ids: [2] });
    const result = await call;
    expect(result.content).toContainEqual({ type: 'text', text: 'dropped [2]' });
    await expectBinding(receiptOf(result), { ids: [2] });
    // A receipt altered to claim the original arguments no longer verifies.
    const forged = { ...receiptOf(result)!, argsDigest: argumentsDigest({ ids: [1, 2] }) };
    expect(verifyRecords([forged], keys, { startsChain: false })?.problem).toMatch(/altered/);
    await client.close();
  });

  it('a call that runs unasked (read-only) or is declined: no receipt', async () => {
    const { client } = await connectClient(mcpUrl(h), { token: ALICE_TOKEN, elicit: () => ({ action: 'decline' }) });
    const looked = await client.callTool({ name: 'look', arguments: {} });
    expect(looked.isError).toBe(false);
    expect(receiptOf(looked)).toBeUndefined();
    const before = tools.count('drop');
    const declined = await client.callTool({ name: 'drop', arguments: { ids: [4] } });
    expect(declined.isError).toBe(true);
    expect(tools.count('drop')).toBe(before);
    expect(receiptOf(declined)).toBeUndefined();
    await client.close();
  });
});

describe('a 2026-07-28 client (SDK v2)', { timeout: 60_000 }, () => {
  it('accepted on the input_required retry: the result carries the verifying receipt', async () => {
    const client = await connectModernClient(mcpUrl(h), {
      token: ALICE_TOKEN,
      elicit: async () => ({ action: 'accept' }),
    });
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const result = await client.callTool({ name: 'drop', arguments: { ids: [7] } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'dropped [7]' }], isError: false });
    await expectBinding(receiptOf(result), { ids: [7] });
    await client.close();
  });

  it('a client that cannot elicit, its call edited and accepted in GraphQL: the receipt binds the edited arguments', async () => {
    const client = await connectModernClient(mcpUrl(h), { token: ALICE_TOKEN });
    const call = client.callTool({ name: 'drop', arguments: { ids: [8, 9] } });
    await acceptEdited({ ids: [9] });
    const result = await call;
    expect(result.content).toContainEqual({ type: 'text', text: 'dropped [9]' });
    await expectBinding(receiptOf(result), { ids: [9] });
    await client.close();
  });

  it('a read-only call: no receipt', async () => {
    const client = await connectModernClient(mcpUrl(h), { token: ALICE_TOKEN });
    const result = await client.callTool({ name: 'look', arguments: {} });
    expect(result.isError).toBe(false);
    expect(receiptOf(result)).toBeUndefined();
    await client.close();
  });
});
