// A fake OpenAI-compatible Chat Completions server on 127.0.0.1: it records every request and answers from a
// queue of replies (text, tool calls, HTTP errors, a hang), streamed as SSE when the request asks for it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** How a streamed reply is sent: its text in pieces of `pieceLength` (default 4), `delayMs` apart (default none). */
export interface FakeStreaming {
  pieceLength?: number;
  delayMs?: number;
  /** The first piece waits for this (a test that must listen before the text comes). */
  after?: Promise<unknown>;
}

export type FakeReply =
  | { text: string; streaming?: FakeStreaming }
  | { toolCalls: { name: string; arguments: unknown; id?: string }[]; text?: string; streaming?: FakeStreaming }
  /** `arguments` sent as this exact string (to send broken JSON). */
  | { rawToolCall: { name: string; arguments: string } }
  | { status: number; error?: string; headers?: Record<string, string> }
  /** Never answers (until the client gives up). */
  | { hang: true };

export type ReplyFn = (request: RecordedRequest) => FakeReply;

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1` */
  baseURL: string;
  requests: RecordedRequest[];
  /** Queue replies, answered in order; when the queue is empty the fallback answers. */
  reply(...replies: (FakeReply | ReplyFn)[]): void;
  fallback: FakeReply | ReplyFn;
  /** The request bodies' messages, for assertions on what reached the model. */
  messagesOf(index: number): any[];
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const queue: (FakeReply | ReplyFn)[] = [];
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let calls = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : null,
      };
      requests.push(recorded);
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
        return;
      }
      const next = queue.shift() ?? fake.fallback;
      const reply = typeof next === 'function' ? next(recorded) : next;
      answer(res, reply, recorded.body, ++calls, hanging);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeOpenAi = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    fallback: { text: 'ok' },
    reply: (...replies) => {
      queue.push(...replies);
    },
    messagesOf: (index) => requests[index]?.body?.messages ?? [],
    reset() {
      queue.length = 0;
      requests.length = 0;
    },
    async close() {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return fake;
}

function answer(res: ServerResponse, reply: FakeReply, body: any, n: number, hanging: Set<ServerResponse>): void {
  if ('hang' in reply) {
    hanging.add(res);
    res.on('close', () => hanging.delete(res));
    return;
  }
  if ('status' in reply) {
    res
      .writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
      .end(JSON.stringify({ error: { message: reply.error ?? `fake error ${reply.status}`, type: 'fake_error' } }));
    return;
  }
  const id = `chatcmpl-${n}`;
  const model = body?.model ?? 'fake';
  const text = 'text' in reply ? (reply.text ?? null) : null;
  const toolCalls =
    'toolCalls' in reply
      ? reply.toolCalls.map((call, i) => ({
          id: call.id ?? `call_${n}_${i}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        }))
      : 'rawToolCall' in reply
        ? [{ id: `call_${n}_0`, type: 'function', function: reply.rawToolCall }]
        : [];
  const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

  if (!body?.stream) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created: 1_700_000_000,
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: text, ...(toolCalls.length && { tool_calls: toolCalls }) },
            finish_reason: finish,
          },
        ],
        usage,
      }),
    );
    return;
  }
  // Streamed: text in small pieces, each tool call's arguments split across chunks, as real servers do.
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const streaming = 'streaming' in reply ? (reply.streaming ?? {}) : {};
  void streamAnswer(res, { id, model, text, toolCalls, finish }, streaming);
}

async function streamAnswer(
  res: ServerResponse,
  answer: { id: string; model: string; text: string | null; toolCalls: any[]; finish: string },
  streaming: FakeStreaming,
): Promise<void> {
  const { id, model, text, toolCalls, finish } = answer;
  const pause = () => new Promise((resolve) => setTimeout(resolve, streaming.delayMs ?? 0));
  const send = (delta: object, finishReason: string | null = null) =>
    !res.destroyed &&
    res.write(
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
      })}\n\n`,
    );
  send({ role: 'assistant', content: '' });
  await streaming.after;
  const pieces = (text ?? '').match(new RegExp(`.{1,${streaming.pieceLength ?? 4}}`, 'gs')) ?? [];
  for (const [i, piece] of pieces.entries()) {
    if (i > 0 && streaming.delayMs) await pause();
    send({ content: piece });
  }
  if (streaming.delayMs) await pause();
  toolCalls.forEach((call, index) => {
    const args = call.function.arguments;
    const half = Math.ceil(args.length / 2);
    send({
      tool_calls: [
        {
          index,
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: args.slice(0, half) },
        },
      ],
    });
    send({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
  });
  send({}, finish);
  if (res.destroyed) return;
  res.write('data: [DONE]\n\n');
  res.end();
}
