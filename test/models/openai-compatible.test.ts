// The openai-compatible provider against a fake Chat Completions server on 127.0.0.1.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import type { ModelRequest } from '../../src/models/model.js';
import { OpenAiCompatibleModel, type OpenAiCompatibleConfig } from '../../src/models/openai-compatible.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';

const TOOLS: ModelRequest['tools'] = [
  {
    name: 'delete_entities',
    description: 'Deletes entities.',
    inputSchema: {
      type: 'object',
      properties: { ids: { type: 'array', items: { type: 'integer' } } },
      required: ['ids'],
    },
  },
];

const TRANSCRIPT: ModelRequest['messages'] = [
  { role: 'USER', text: 'delete 1 and 2', toolCalls: [], toolCallId: null },
  {
    role: 'ASSISTANT',
    text: 'Deleting.',
    toolCalls: [
      { id: 'c1', name: 'delete_entities', arguments: { ids: [1] } },
      { id: 'c2', name: 'delete_entities', arguments: { ids: [2] } },
    ],
    toolCallId: null,
  },
  { role: 'TOOL', text: 'Deleted 1.', toolCalls: [], toolCallId: 'c1' },
  { role: 'TOOL', text: 'User declined execution of delete_entities.', toolCalls: [], toolCallId: 'c2' },
  { role: 'ASSISTANT', text: 'One deleted.', toolCalls: [], toolCallId: null },
  { role: 'USER', text: 'thanks', toolCalls: [], toolCallId: null },
];

describe('OpenAiCompatibleModel', () => {
  let fake: FakeOpenAi;
  const make = (extra: Partial<OpenAiCompatibleConfig> = {}) =>
    new OpenAiCompatibleModel(
      {
        provider: 'openai-compatible',
        baseURL: fake.baseURL,
        model: 'fake-model',
        maxRetries: 2,
        ...extra,
      },
      'test.json: models.main',
    );

  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterEach(() => {
    fake.reset();
    fake.fallback = { text: 'ok' };
    delete process.env.TOOLGATE_TEST_KEY;
  });
  afterAll(async () => {
    await fake.close();
  });

  for (const stream of [false, true]) {
    describe(stream ? 'streaming' : 'not streaming', () => {
      it('returns the text of an answer', async () => {
        fake.reply({ text: 'Hello there, how can I help?' });
        const answer = await make({ stream }).generate({
          system: 'Be brief.',
          messages: TRANSCRIPT.slice(0, 1),
          tools: [],
        });
        expect(answer).toEqual({ text: 'Hello there, how can I help?', toolCalls: [] });
        expect(fake.requests[0]!.body.stream ?? false).toBe(stream);
      });

      it('returns tool calls with their ids and parsed arguments', async () => {
        fake.reply({
          toolCalls: [
            { id: 'call_a', name: 'delete_entities', arguments: { ids: [1, 2, 3] } },
            { id: 'call_b', name: 'delete_entities', arguments: { ids: [4] } },
          ],
        });
        const answer = await make({ stream }).generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: TOOLS });
        expect(answer.text).toBeNull();
        expect(answer.toolCalls).toEqual([
          { id: 'call_a', name: 'delete_entities', arguments: { ids: [1, 2, 3] } },
          { id: 'call_b', name: 'delete_entities', arguments: { ids: [4] } },
        ]);
      });

      it('returns text and tool calls of one answer together', async () => {
        fake.reply({
          text: 'Deleting them now.',
          toolCalls: [{ id: 'call_c', name: 'delete_entities', arguments: { ids: [7] } }],
        });
        const answer = await make({ stream }).generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: TOOLS });
        expect(answer).toEqual({
          text: 'Deleting them now.',
          toolCalls: [{ id: 'call_c', name: 'delete_entities', arguments: { ids: [7] } }],
        });
      });

      it('retries a 429 before the answer starts', async () => {
        fake.reply({ status: 429, error: 'slow down', headers: { 'retry-after-ms': '10' } }, { text: 'second time' });
        const answer = await make({ stream }).generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: [] });
        expect(answer.text).toBe('second time');
        expect(fake.requests).toHaveLength(2);
      });

      it('times out with a readable error', async () => {
        fake.reply({ hang: true });
        await expect(
          make({ stream, timeoutMs: 300, maxRetries: 0 }).generate({
            system: 's',
            messages: TRANSCRIPT.slice(0, 1),
            tools: [],
          }),
        ).rejects.toThrow(`fake-model at ${fake.baseURL} did not answer within 300 ms`);
      });
    });
  }

  describe('streamed text (onTextDelta)', () => {
    it('hands over each piece as it arrives, in order, before the call returns the whole text', async () => {
      fake.reply({ text: 'Streaming answers arrive in pieces.', streaming: { delayMs: 30 } });
      const pieces: { text: string; at: number }[] = [];
      const started = performance.now();
      const answer = await make({ stream: true }).generate({
        system: 's',
        messages: TRANSCRIPT.slice(0, 1),
        tools: [],
        onTextDelta: (text) => pieces.push({ text, at: performance.now() - started }),
      });
      const returned = performance.now() - started;
      expect(pieces.map((p) => p.text)).toEqual([
        'Stre',
        'amin',
        'g an',
        'swer',
        's ar',
        'rive',
        ' in ',
        'piec',
        'es.',
      ]);
      expect(pieces.map((p) => p.text).join('')).toBe(answer.text);
      // Live: the first piece came well before the answer was complete (8 gaps of 30 ms after it).
      expect(returned - pieces[0]!.at).toBeGreaterThan(150);
    });

    it('hands over the text of an answer with tool calls, and the tool calls in the result', async () => {
      fake.reply({
        text: 'Deleting 7.',
        toolCalls: [{ id: 'call_s', name: 'delete_entities', arguments: { ids: [7] } }],
        streaming: { delayMs: 5 },
      });
      const pieces: string[] = [];
      const answer = await make({ stream: true }).generate({
        system: 's',
        messages: TRANSCRIPT.slice(0, 1),
        tools: TOOLS,
        onTextDelta: (text) => pieces.push(text),
      });
      expect(pieces).toEqual(['Dele', 'ting', ' 7.']);
      expect(answer).toEqual({
        text: 'Deleting 7.',
        toolCalls: [{ id: 'call_s', name: 'delete_entities', arguments: { ids: [7] } }],
      });
    });

    it('never calls it when not streaming (the default), and returns the same answer', async () => {
      fake.reply({ text: 'Streaming answers arrive in pieces.' });
      const pieces: string[] = [];
      const answer = await make().generate({
        system: 's',
        messages: TRANSCRIPT.slice(0, 1),
        tools: [],
        onTextDelta: (text) => pieces.push(text),
      });
      expect(fake.requests[0]!.body.stream ?? false).toBe(false);
      expect(pieces).toEqual([]);
      expect(answer.text).toBe('Streaming answers arrive in pieces.');
    });

    it('returns the whole answer even when the listener throws', async () => {
      fake.reply({ text: 'Still whole.' });
      let calls = 0;
      const answer = await make({ stream: true }).generate({
        system: 's',
        messages: TRANSCRIPT.slice(0, 1),
        tools: [],
        onTextDelta: () => {
          calls++;
          throw new Error('listener fault');
        },
      });
      expect(calls).toBe(3);
      expect(answer.text).toBe('Still whole.');
    });
  });

  it('sends the system prompt, the transcript with tool calls and results, and the tools as function schemas', async () => {
    await make({ temperature: 0.2 }).generate({ system: 'You are careful.', messages: TRANSCRIPT, tools: TOOLS });
    const body = fake.requests[0]!.body;
    expect(fake.requests[0]!.path).toBe('/v1/chat/completions');
    expect(body.model).toBe('fake-model');
    expect(body.temperature).toBe(0.2);
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are careful.' },
      { role: 'user', content: 'delete 1 and 2' },
      {
        role: 'assistant',
        content: 'Deleting.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'delete_entities', arguments: '{"ids":[1]}' } },
          { id: 'c2', type: 'function', function: { name: 'delete_entities', arguments: '{"ids":[2]}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'Deleted 1.' },
      { role: 'tool', tool_call_id: 'c2', content: 'User declined execution of delete_entities.' },
      { role: 'assistant', content: 'One deleted.' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'delete_entities', description: 'Deletes entities.', parameters: TOOLS[0]!.inputSchema },
      },
    ]);
  });

  it('sends no tools field when the agent has no tools', async () => {
    await make().generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: [] });
    expect(fake.requests[0]!.body.tools).toBeUndefined();
  });

  it('reads the API key from the environment with env:NAME and sends the configured headers', async () => {
    process.env.TOOLGATE_TEST_KEY = 'sk-from-env';
    await make({ apiKey: 'env:TOOLGATE_TEST_KEY', headers: { 'x-org': 'acme' } }).generate({
      system: 's',
      messages: TRANSCRIPT.slice(0, 1),
      tools: [],
    });
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-from-env');
    expect(fake.requests[0]!.headers['x-org']).toBe('acme');
  });

  it('refuses to start when the env: variable of the key is not set, naming the config path', () => {
    expect(() => make({ apiKey: 'env:TOOLGATE_TEST_KEY' })).toThrow(ConfigError);
    expect(() => make({ apiKey: 'env:TOOLGATE_TEST_KEY' })).toThrow(
      'test.json: models.main.apiKey: the environment variable TOOLGATE_TEST_KEY is not set',
    );
  });

  it('retries a 429 and a 500 and then answers', async () => {
    fake.reply(
      { status: 429, error: 'slow down', headers: { 'retry-after-ms': '10' } },
      { status: 500, error: 'oops', headers: { 'retry-after-ms': '10' } },
      { text: 'third time' },
    );
    const answer = await make().generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: [] });
    expect(answer.text).toBe('third time');
    expect(fake.requests).toHaveLength(3);
  });

  it('backs off between attempts when the server gives no Retry-After', async () => {
    fake.reply({ status: 503, error: 'busy' }, { text: 'after backoff' });
    const started = Date.now();
    const answer = await make().generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: [] });
    expect(answer.text).toBe('after backoff');
    // The AI SDK's first backoff is 2 s; an immediate retry would take a few ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
  });

  it('gives up after maxRetries with a readable error', async () => {
    fake.fallback = { status: 500, error: 'the GPU caught fire', headers: { 'retry-after-ms': '5' } };
    await expect(
      make({ maxRetries: 2 }).generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: [] }),
    ).rejects.toThrow(`fake-model at ${fake.baseURL} answered HTTP 500: the GPU caught fire (after 3 attempts)`);
    expect(fake.requests).toHaveLength(3);
  });

  it('does not retry a 400, and says what the server said', async () => {
    fake.reply({ status: 400, error: 'tools[0].function.name is invalid' });
    await expect(make().generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: [] })).rejects.toThrow(
      'answered HTTP 400: tools[0].function.name is invalid',
    );
    expect(fake.requests).toHaveLength(1);
  });

  it('fails readably when nothing listens at the base URL', async () => {
    const model = new OpenAiCompatibleModel(
      { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm', maxRetries: 0 },
      'x',
    );
    await expect(model.generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: [] })).rejects.toThrow(
      /^m at http:\/\/127\.0\.0\.1:9\/v1/,
    );
  });

  it('rejects tool-call arguments that are not a JSON object instead of guessing', async () => {
    fake.reply({ rawToolCall: { name: 'delete_entities', arguments: '{"ids": [1,' } });
    await expect(make().generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: TOOLS })).rejects.toThrow(
      'the model sent arguments for delete_entities that are not a JSON object',
    );
  });

  it('passes a call of an unknown tool through, for the loop to answer', async () => {
    fake.reply({ toolCalls: [{ id: 'x1', name: 'format_disk', arguments: {} }] });
    const answer = await make().generate({ system: 's', messages: TRANSCRIPT.slice(0, 1), tools: TOOLS });
    expect(answer.toolCalls).toEqual([{ id: 'x1', name: 'format_disk', arguments: {} }]);
  });
});
