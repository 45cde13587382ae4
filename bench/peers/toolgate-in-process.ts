// Child process of part 9: toolgate's HITL round trip driven in this process, without sockets. The server is
// built as bench/server.ts builds it (createServer, the built-in demo: scripted model, demo tools, confirmation
// on, FULL durability, on the SQLite file BENCH_DB) and each round trip is the same two GraphQL requests as part 1
// through `yoga.fetch` (as bench/round-trip-anatomy.ts does): startTurn that pauses, resolveElicitation ACCEPT
// that completes.
import '../../src/node-env.js'; // first, as in src/cli.ts: the server runs as `npm start` runs it
import { createServer } from '../../src/server.js';
import { parseStartTurn, resolveBody, START } from '../lib/operations.js';
import { runFlows, serveCommands } from './child.js';

const database = process.env.BENCH_DB;
if (!database) throw new Error('bench/peers/toolgate-in-process.ts is started by part 9 (BENCH_DB)');

const server = await createServer({ database, onError: (error) => console.error('toolgate in process:', error) });

async function post(body: string): Promise<string> {
  const response = await server.yoga.fetch('http://127.0.0.1/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return response.text();
}

async function roundTrip(): Promise<void> {
  const started = await post(START);
  const id = parseStartTurn(started)?.turn?.pendingElicitations[0]?.id;
  if (!id) throw new Error(`startTurn did not pause: ${started.slice(0, 200)}`);
  const resolved = await post(resolveBody(id));
  if (!resolved.includes('"status":"COMPLETED"'))
    throw new Error(`resolveElicitation did not complete: ${resolved.slice(0, 200)}`);
}

serveCommands({ run: (args) => runFlows(Number(args.flows), Number(args.seconds), roundTrip) }, '', () =>
  server.close(),
);
