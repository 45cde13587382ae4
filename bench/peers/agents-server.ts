// Child process of part 9: the HITL round trip in the OpenAI Agents SDK (@openai/agents-core), behind a minimal
// node:http server on 127.0.0.1. An Agent with one tool, `delete_entities`, with `needsApproval: true`, on a
// zero-latency scripted Model (on a user message one `delete_entities` call, after the tool result a final text).
//   POST /start {"priorMessages": N}  run() stops with an interruption; the RunState string is stored (one row per
//                                     run) before the answer {"runId"}. N prior messages go in as the run's input.
//   POST /approve/<runId>             loads the string, RunState.fromString, approve(), run() to the end; the final
//                                     output is stored before the answer {"finalOutput"}.
// SQLite on BENCH_DB (better-sqlite3): WAL, synchronous=FULL, so each commit is on disk before its answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import {
  Agent,
  run,
  RunState,
  tool,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents-core';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { priorMessages, serveCommands } from './child.js';

const database = process.env.BENCH_DB;
if (!database) throw new Error('bench/peers/agents-server.ts is started by part 9 (BENCH_DB)');

/** The scripted model: the same script as toolgate's demo model for "delete entities 1". */
class ScriptedModel implements Model {
  #calls = 0;

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = typeof request.input === 'string' ? [] : request.input;
    const last = input.at(-1);
    if (last?.type === 'function_call_result') {
      const output = last.output;
      const text = typeof output === 'string' ? output : 'text' in output ? String(output.text) : '';
      return {
        usage: new Usage(),
        output: [
          {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: `Done. ${text}` }],
          },
        ],
      };
    }
    return {
      usage: new Usage(),
      output: [
        {
          type: 'function_call',
          callId: `call_${++this.#calls}`,
          name: 'delete_entities',
          arguments: JSON.stringify({ ids: [1] }),
          status: 'completed',
        },
      ],
    };
  }

  // eslint-disable-next-line require-yield -- run() is never streamed here
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed');
  }
}

const deleteEntities = tool({
  name: 'delete_entities',
  description: 'Permanently deletes the entities with the given ids from the demo store.',
  parameters: z.object({ ids: z.array(z.number()) }),
  needsApproval: true,
  execute: async ({ ids }) => `Deleted entities ${ids.join(', ')}.`,
});

const agent = new Agent({
  name: 'demo',
  instructions: 'You manage the entities of the demo store.',
  model: new ScriptedModel(),
  tools: [deleteEntities],
});

const db = new Database(database);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  state TEXT NOT NULL,
  final_output TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`);
const insertRun = db.prepare(
  "INSERT INTO runs (id, status, state, created_at, updated_at) VALUES (?, 'PAUSED', ?, ?, ?)",
);
const selectRun = db.prepare<[string], { state: string }>("SELECT state FROM runs WHERE id = ? AND status = 'PAUSED'");
const completeRun = db.prepare(
  "UPDATE runs SET status = 'COMPLETED', final_output = ?, updated_at = ? WHERE id = ? AND status = 'PAUSED'",
);

async function start(priorCount: number): Promise<{ runId: string }> {
  const input: AgentInputItem[] = priorMessages(priorCount).map((m) =>
    m.role === 'user'
      ? { role: 'user', content: m.text }
      : { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: m.text }] },
  );
  input.push({ role: 'user', content: 'delete entities 1' });
  const result = await run(agent, input);
  if (!result.interruptions?.length) throw new Error(`the run did not pause: ${String(result.finalOutput)}`);
  const runId = randomUUID();
  const now = new Date().toISOString();
  insertRun.run(runId, result.state.toString(), now, now);
  return { runId };
}

async function approve(runId: string): Promise<{ finalOutput: string }> {
  const row = selectRun.get(runId);
  if (!row) throw new Error(`no paused run ${runId}`);
  const state = await RunState.fromString(agent, row.state);
  for (const item of state.getInterruptions()) state.approve(item);
  const result = await run(agent, state);
  if (result.interruptions?.length || typeof result.finalOutput !== 'string')
    throw new Error('the run did not complete');
  if (completeRun.run(result.finalOutput, new Date().toISOString(), runId).changes !== 1)
    throw new Error(`run ${runId} was completed meanwhile`);
  return { finalOutput: result.finalOutput };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const url = request.url ?? '';
  try {
    if (request.method === 'POST' && url === '/start') {
      const body = chunks.length
        ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { priorMessages?: number })
        : {};
      return send(response, 200, await start(Number(body.priorMessages ?? 0)));
    }
    if (request.method === 'POST' && url.startsWith('/approve/'))
      return send(response, 200, await approve(decodeURIComponent(url.slice('/approve/'.length))));
    send(response, 404, { error: 'not found' });
  } catch (error) {
    send(response, 500, { error: error instanceof Error ? error.message : String(error) });
  }
}

const server = createServer((request, response) => void handle(request, response));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

serveCommands(
  {
    settings: () => ({
      journal_mode: db.pragma('journal_mode', { simple: true }),
      synchronous: db.pragma('synchronous', { simple: true }),
    }),
  },
  `http://127.0.0.1:${port}`,
  async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    db.close();
  },
);
