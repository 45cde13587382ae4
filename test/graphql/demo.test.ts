import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, RESOLVE, START_TURN, startHarness, type Harness } from '../support/harness.js';

describe('the built-in demo over HTTP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('pauses before deleting, and deletes once after ACCEPT', async () => {
    const started = dataOf(
      await h.gql(START_TURN, { input: { agentId: 'demo', message: 'delete entities 1, 2 and 3' } }),
    ).startTurn;
    expect(started.userErrors).toEqual([]);
    expect(started.turn.status).toBe('PAUSED');
    const [elicitation] = started.turn.pendingElicitations;
    expect(elicitation.toolCall).toMatchObject({
      name: 'delete_entities',
      toolId: 'demo:delete_entities',
      arguments: { ids: [1, 2, 3] },
    });
    expect(elicitation.message).not.toContain('1, 2');

    const resolved = dataOf(
      await h.gql(RESOLVE, { input: { elicitationId: elicitation.id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(resolved.userErrors).toEqual([]);
    expect(resolved.turn.status).toBe('COMPLETED');
    expect(resolved.turn.text).toContain('Deleted 3 entities (1, 2, 3)');

    const listed = dataOf(
      await h.gql(START_TURN, { input: { agentId: 'demo', message: 'list entities', threadId: started.thread.id } }),
    ).startTurn;
    expect(listed.turn.status).toBe('COMPLETED');
    expect(listed.turn.text).toBe('Done. Entities: 4 delta, 5 echo.');
  });

  it('serves a gateway at /mcp: an MCP client calls a demo tool, which waits for a person and runs once', async () => {
    const client = new Client({ name: 'demo-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', h.url)));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('delete_entities');
    const call = client.callTool({ name: 'delete_entities', arguments: { ids: [4] } });
    let pending: any[] = [];
    while (pending.length === 0) {
      const data = dataOf(await h.gql('{ pendingElicitations(first: 5) { edges { node { id } } } }'));
      pending = data.pendingElicitations.edges;
      await new Promise((settle) => setTimeout(settle, 25));
    }
    const answered = dataOf(
      await h.gql(RESOLVE, { input: { elicitationId: pending[0].node.id, action: 'ACCEPT' } }),
    ).resolveElicitation;
    expect(answered.userErrors).toEqual([]);
    expect(await call).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: expect.stringContaining('4') }],
    });
    await client.close();
  });

  it('answers /healthz', async () => {
    const response = await fetch(h.url.replace('/graphql', '/healthz'));
    expect(response.status).toBe(200);
  });
});
