// `toolgate mcp`: bridges an MCP client on stdio to a running server's /mcp (src/mcp/stdio-bridge.ts). stdout carries
// JSON-RPC only, so every word for the user goes to stderr.
import { DEFAULT_MCP_URL, runStdioBridge } from '../mcp/stdio-bridge.js';

export function mcpBridge(): void {
  const given = process.env.TOOLGATE_URL || DEFAULT_MCP_URL;
  if (!URL.canParse(given)) {
    console.error(`toolgate mcp: TOOLGATE_URL: "${given}" is not a URL`);
    process.exit(1);
  }
  void runStdioBridge({
    url: new URL(given),
    token: process.env.TOOLGATE_TOKEN || undefined,
    log: (line) => console.error(line),
  }).then((code) => process.exit(code));
}
