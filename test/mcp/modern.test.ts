// The gateway to an MCP 2026-07-28 client (the SDK's v2 Client, pinned to the revision) on the same /mcp as 2025
// clients: tools/list, a read-only call, a gated call answered by the client through input_required, and one answered
// in GraphQL while the client cannot elicit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import type { CountingToolSource } from '../support/tools.js';
import { ALICE_TOKEN, connectClient, mcpUrl, startGateway } from './support.js';
import { connectModernClient } from './modern-support.js';

let h: Harness;
let tools: CountingToolSource;

beforeAll(async () => {
  ({ h, tools } = await startGateway());
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

  it('a 2025 client still gets its session on the same endpoint', async () => {
    const { client } = await connectClient(mcpUrl(h), { token: ALICE_TOKEN });
    const result = await client.callTool({ name: 'look', arguments: {} });
    expect(result.isError).toBe(false);
    await client.close();
  });
});
