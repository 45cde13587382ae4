#!/usr/bin/env node
// The upstream MCP server of bench part 10 (stdio, the SDK's McpServer): `lookup` reads (readOnlyHint), `record`
// changes something (not read-only, so a gateway asks first). Each answers with its arguments and the moment it
// started, on the machine's monotonic clock (process.hrtime, shared by every process here), so the bench can tell
// how long after a person's answer the tool began. Plain JavaScript: the direct and supergateway setups start one
// of these per session, and node starts it faster without a TypeScript loader.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'toolgate-bench-upstream', version: '1.0.0' });
const recorded = new Map();

const answer = (fields) => ({ content: [{ type: 'text', text: JSON.stringify(fields) }] });

server.registerTool(
  'lookup',
  {
    title: 'Look up a key',
    description: 'Returns the value stored under a key.',
    inputSchema: { key: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ key }) => {
    const started = process.hrtime.bigint().toString();
    return answer({ key, value: recorded.get(key) ?? `value of ${key}`, started });
  },
);

server.registerTool(
  'record',
  {
    title: 'Record a value',
    description: 'Stores a value under a key.',
    inputSchema: { key: z.string(), value: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  },
  async ({ key, value }) => {
    const started = process.hrtime.bigint().toString();
    if (recorded.size > 100_000) recorded.clear(); // bounded: a long run records millions of keys
    recorded.set(key, value);
    return answer({ key, value, started });
  },
);

await server.connect(new StdioServerTransport());
