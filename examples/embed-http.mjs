// Generated from examples/embed-http.ts by `npm run examples:js` (scripts/examples-js.ts): the same program in plain
// JavaScript. Run it with `node examples/embed-http.mjs` in a project that installed toolgate, or in a checkout after
// `npm run build`. Edit the .ts file, not this one.
// toolgate mounted in an existing node:http app: the app keeps its own routes (`/`, /api/…), and the paths that are
// toolgate's (/graphql with its WebSocket subscriptions, /mcp, /inbox, /healthz, /readyz, /metrics) are routed to it.
// Run it from a checkout with `node --import tsx examples/embed-http.ts`, or as a file of a project that installed
// toolgate (docs/embedding.md). PORT (default 3000) and TOOLGATE_DB (default ./data/embedded.db) are read here, by
// the example: createServer itself reads no environment variable.
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'toolgate';

// The built-in demo agent (no config given): an offline model, three tools on an entity store, confirmation on.
const toolgate = await createServer({ database: process.env.TOOLGATE_DB || './data/embedded.db' });

const app = createHttpServer((request, response) => {
  if (toolgate.handles(request)) return toolgate.handleRequest(request, response);
  // The app's own routes.
  if (request.url === '/api/status') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ app: 'ok' }));
    return;
  }
  response.writeHead(request.url === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
  response.end('<p>My app. Its approvals: <a href="/inbox">/inbox</a>, its API: <a href="/graphql">/graphql</a>.</p>');
});
// graphql-ws subscriptions (the inbox's live updates) arrive as upgrades.
app.on('upgrade', (request, socket, head) => {
  if (toolgate.handles(request)) toolgate.handleUpgrade(request, socket, head);
  else socket.destroy();
});

// Without an `auth` section everyone is the admin user "local": listen on loopback only (toolgate refuses the rest).
app.listen(Number(process.env.PORT || 3000), '127.0.0.1', () => {
  const { port } = app.address();
  console.log(`my app at http://127.0.0.1:${port}/, toolgate's inbox at http://127.0.0.1:${port}/inbox`);
});

// toolgate first (its WebSockets, subscriptions and MCP sessions end, running tools finish), then the app's server.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await toolgate.close();
    app.close(() => process.exit(0)); // idle keep-alive connections close at once, busy ones when they finish
  });
}
