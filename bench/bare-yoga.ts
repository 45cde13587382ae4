// Child process of `npm run bench`: the limit toolgate is measured against, a bare graphql-yoga server on node:http
// with its defaults: a one-field query (`hello`), and for the push comparison one subscription on Yoga's
// createPubSub served by graphql-ws (`graphql-ws/use/ws`, Yoga's documented recipe), published over IPC.
import '../src/node-env.js'; // first: the same NODE_ENV as the toolgate server it is compared with
import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPubSub, createSchema, createYoga } from 'graphql-yoga';
import type { ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { CallMessage, ReplyMessage } from './lib/processes.js';
import { wallNow } from './lib/stats.js';

if (!process.send) throw new Error('bench/bare-yoga.ts is started by bench/run.ts (IPC)');

interface Requested {
  id: string;
  status: string;
  message: string;
  toolCall: { name: string; toolId: string; arguments: unknown };
}
// As in toolgate (src/events/pubsub.ts): an EventTarget without Node's listener warning, one listener per subscriber.
const eventTarget = new EventTarget();
setMaxListeners(0, eventTarget);
const pubsub = createPubSub<{ requested: [Requested] }>({ eventTarget: eventTarget as never });
const yoga = createYoga({
  schema: createSchema({
    typeDefs: `
      scalar JSON
      type Query { hello: String! }
      type ToolCall { name: String! toolId: ID! arguments: JSON! }
      type Requested { id: ID! status: String! message: String! toolCall: ToolCall! }
      type Subscription { requested: Requested! }`,
    resolvers: {
      Query: { hello: () => 'world' },
      Subscription: { requested: { subscribe: () => pubsub.subscribe('requested'), resolve: (r: Requested) => r } },
    },
  }),
  graphqlEndpoint: '/graphql',
  landingPage: false,
});
const server = createServer(yoga);

interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}
const wsServer = new WebSocketServer({ server, path: '/graphql' });
useServer(
  {
    execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
    subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
    onSubscribe: async (ctx, _id, params) => {
      const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
        ...ctx,
        req: ctx.extra.request,
        socket: ctx.extra.socket,
        params,
      });
      const document = parse(params.query);
      const errors = validate(schema, document);
      if (errors.length > 0) return errors;
      return {
        schema,
        operationName: params.operationName,
        document,
        variableValues: params.variables,
        contextValue: await contextFactory(),
        rootValue: { execute, subscribe },
      };
    },
  },
  wsServer,
);

// publish: one event like toolgate's elicitation; returns when it was published (wall clock).
process.on('message', (message: CallMessage) => {
  if (message.type !== 'call') return;
  const reply = (fields: Omit<ReplyMessage, 'type' | 'id'>) =>
    process.send!({ type: 'reply', id: message.id, ...fields } satisfies ReplyMessage);
  if (message.command === 'clock') {
    reply({ result: wallNow() });
    return;
  }
  if (message.command !== 'publish') {
    reply({ error: `unknown command ${message.command}` });
    return;
  }
  const at = wallNow();
  pubsub.publish('requested', {
    id: String(message.args.id),
    status: 'PENDING',
    message:
      'Allow the agent to run "Delete entities"? Permanently deletes the entities with the given ids from the demo store.',
    toolCall: { name: 'delete_entities', toolId: 'demo:delete_entities', arguments: { ids: [1] } },
  });
  reply({ result: at });
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(1), 5000).unref();
};
process.on('SIGTERM', stop);
process.on('disconnect', stop);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}/graphql` });
});
