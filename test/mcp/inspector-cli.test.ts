// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, a 2025 client of the v1 SDK) against the gateway at
// /mcp, as a person would run it: it lists the tools and calls a read-only one.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import type { CountingToolSource } from '../support/tools.js';
import { ALICE_TOKEN, mcpUrl, startGateway } from './support.js';

const run = promisify(execFile);
/** The package's CLI (its bin launches build/index.js, which the test runs itself). */
const BUILD = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')),
  'build',
);

let h: Harness;
let tools: CountingToolSource;

beforeAll(async () => {
  ({ h, tools } = await startGateway());
});
afterAll(async () => {
  await h?.close();
});

async function inspector(...args: string[]): Promise<any> {
  const { stdout } = await run(
    process.execPath,
    [
      join(BUILD, 'index.js'),
      mcpUrl(h).href,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${ALICE_TOKEN}`,
      ...args,
    ],
    // It finds its own package.json relative to the working directory, as its launcher runs it.
    { timeout: 30_000, cwd: BUILD },
  );
  return JSON.parse(stdout);
}

describe("the MCP Inspector's CLI at /mcp", { timeout: 60_000 }, () => {
  it('lists the tools', async () => {
    const listed = await inspector('--method', 'tools/list');
    expect(listed.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['drop', 'look']);
  });

  it('calls a read-only tool', async () => {
    const before = tools.count('look');
    const result = await inspector('--method', 'tools/call', '--tool-name', 'look');
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text' }] });
    expect(tools.count('look')).toBe(before + 1);
  });
});
