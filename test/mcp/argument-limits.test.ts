// An MCP client's tools/call with arguments nested deeper than maxToolArgumentsDepth, over real HTTP: refused as a
// model's call would be, with the reason as the call's result, before anything recursive walks the arguments; nothing
// runs, nothing asks, and nothing is logged as a fault, however deep (a client must not be able to fill the log).
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { LEVEL, memoryLog } from '../support/log.js';
import type { CountingToolSource } from '../support/tools.js';
import {
  ALICE_TOKEN,
  bearer,
  connectClient,
  GATEWAY_ID,
  INITIALIZE,
  MCP_HEADERS,
  mcpUrl,
  messagesOf,
  pendingElicitations,
  send,
  startGateway,
} from './support.js';

/** Arguments `levels` deep: the arguments object, then arrays. */
function nested(levels: number): Record<string, unknown> {
  let value: unknown = [];
  for (let level = 2; level < levels; level++) value = [value];
  return { ids: value };
}

const refused = (tool: string) => ({
  content: [
    { type: 'text', text: `Execution of ${tool} was refused: its arguments are nested more than 64 levels deep.` },
  ],
  isError: true,
});

describe('the MCP gateway, given arguments nested too deep', () => {
  const log = memoryLog('info');
  let h: Harness;
  let tools: CountingToolSource;
  beforeAll(async () => {
    ({ h, tools } = await startGateway({ logger: log.logger }));
  });
  afterAll(() => h?.close());

  const gateway = () => mcpUrl(h, `/mcp/${GATEWAY_ID}`);
  const faults = () => log.lines().filter((line) => line.level >= LEVEL.warn);

  it('refuses the call with the reason as its result: nothing runs, nothing asks, nothing is logged as a fault', async () => {
    const { client } = await connectClient(gateway(), { token: ALICE_TOKEN });
    // 64 levels run; 65, and the 4,000 that overflowed the stack of the functions that store arguments, do not.
    expect(await client.callTool({ name: 'look', arguments: nested(64) })).toMatchObject({ isError: false });
    expect(tools.runs.get('look')).toEqual([nested(64)]);
    for (const levels of [65, 4000]) {
      expect(await client.callTool({ name: 'look', arguments: nested(levels) })).toEqual(refused('look'));
      // A tool that would ask is refused before it asks.
      expect(await client.callTool({ name: 'drop', arguments: nested(levels) })).toEqual(refused('drop'));
    }
    expect(tools.count('look')).toBe(1);
    expect(tools.count('drop')).toBe(0);
    expect(await pendingElicitations(h, ALICE_TOKEN, 0)).toEqual([]);
    expect(faults()).toEqual([]);
    await client.close();
  });

  it('refuses 100,000 levels sent as raw JSON-RPC, deeper than a client library can write', async () => {
    const headers = { ...MCP_HEADERS, ...bearer(ALICE_TOKEN) };
    const opened = await send(gateway(), { headers, body: INITIALIZE });
    const session = {
      ...headers,
      'mcp-session-id': String(opened.headers['mcp-session-id']),
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    };
    await send(gateway(), { headers: session, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    const deep = `{"ids":${'['.repeat(99_999)}${']'.repeat(99_999)}}`;
    const body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"look","arguments":${deep}}}`;
    const response = await send(gateway(), { headers: session, body });
    expect(response.status).toBe(200);
    expect(messagesOf(response)).toEqual([{ jsonrpc: '2.0', id: 2, result: refused('look') }]);
    expect(tools.count('look')).toBe(1);
    expect(faults()).toEqual([]);
    await send(gateway(), { method: 'DELETE', headers: session });
  });
});
