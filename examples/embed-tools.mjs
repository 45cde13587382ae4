// Generated from examples/embed-tools.ts by `npm run examples:js` (scripts/examples-js.ts): the same program in plain
// JavaScript. Run it with `node examples/embed-tools.mjs` in a project that installed toolgate, or in a checkout after
// `npm run build`. Edit the .ts file, not this one.
// A tool written as a TypeScript function next to an MCP server's tools, behind one gate. The agent has no model: it
// is an MCP gateway, so MCP clients (Claude Code, Cursor, your own loop) call both kinds of tools at /mcp, and every
// call that changes something waits until a human answers in the inbox (/inbox) or through the API.
// Run it from a checkout with `node --import tsx examples/embed-tools.ts`; in a project of your own, install toolgate
// and @modelcontextprotocol/server-memory first (docs/embedding.md). PORT (default 4000), TOOLGATE_DB (default
// ./data/embedded-tools.db) and MEMORY_FILE_PATH (default ./data/memory.jsonl) are read here, by the example.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, defineToolSource, parseConfig } from 'toolgate';

/** The tickets of a small help desk, kept in memory by this program. */
const tickets = new Map([
  [1, { title: 'Printer on fire', open: true }],
  [2, { title: 'VPN drops every hour', open: true }],
]);

// The source's id, "helpdesk", is how the config names it; its tools are "helpdesk:list_tickets" and
// "helpdesk:close_ticket". Arguments are checked against inputSchema before execute is called.
const helpdesk = defineToolSource('helpdesk', [
  {
    name: 'list_tickets',
    title: 'List tickets',
    description: 'Lists the help desk tickets with their ids, titles and whether they are open.',
    // Read-only: runs at once, nobody is asked.
    annotations: { readOnlyHint: true },
    execute: () =>
      [...tickets].map(([id, ticket]) => `#${id} ${ticket.title} (${ticket.open ? 'open' : 'closed'})`).join('\n'),
  },
  {
    name: 'close_ticket',
    title: 'Close ticket',
    description: 'Closes one ticket for good.',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'integer' }, resolution: { type: 'string' } },
      required: ['id'],
      additionalProperties: false,
    },
    // Changes something: asks first, and runs only after an ACCEPT (at most once).
    annotations: { readOnlyHint: false, destructiveHint: true },
    execute: (args) => {
      const ticket = tickets.get(args.id);
      if (!ticket) return { text: `There is no ticket #${args.id}.`, isError: true };
      ticket.open = false;
      return `Closed #${args.id} ${ticket.title}${args.resolution ? `: ${args.resolution}` : ''}.`;
    },
  },
]);

const config = parseConfig({
  models: {},
  toolSources: {
    // Written in code: given to createServer below.
    helpdesk: { type: 'builtin' },
    // An MCP server over stdio: the MCP project's knowledge-graph memory.
    memory: {
      type: 'mcp',
      command: process.execPath,
      args: [fileURLToPath(import.meta.resolve('@modelcontextprotocol/server-memory/dist/index.js'))],
      env: { MEMORY_FILE_PATH: resolve(process.env.MEMORY_FILE_PATH || 'data/memory.jsonl') },
    },
  },
  agents: [
    {
      id: 'desk',
      name: 'Help desk tools',
      // No "model": an MCP gateway.
      tools: ['helpdesk:*', 'memory:*'],
      requireToolConfirmation: true,
    },
  ],
});

const toolgate = await createServer({
  config,
  database: process.env.TOOLGATE_DB || './data/embedded-tools.db',
  toolSources: [helpdesk],
});
const url = await toolgate.listen(Number(process.env.PORT || 4000));
console.log(`MCP clients: ${new URL('/mcp', url)}; answers: ${new URL('/inbox', url)}`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => void toolgate.close().then(() => process.exit(0)));
}
