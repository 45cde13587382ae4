// Child process of `npm run bench`: the limit toolgate is measured against, a bare graphql-yoga server with a
// one-field schema on node:http, nothing else (no context, no plugins, no body limit).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';

if (!process.send) throw new Error('bench/bare-yoga.ts is started by bench/run.ts (IPC)');

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { hello: String! }', resolvers: { Query: { hello: () => 'world' } } }),
  graphqlEndpoint: '/graphql',
  landingPage: false,
});
const server = createServer(yoga);
const stop = () => { server.close(() => process.exit(0)); server.closeAllConnections(); setTimeout(() => process.exit(1), 5000).unref(); };
process.on('SIGTERM', stop);
process.on('disconnect', stop);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}/graphql` });
});
