// A test agent on a scripted model and counting tools, served over real HTTP, plus the queries the tests share.
import type { JsonObject } from '../../src/domain/records.js';
import type { AgentConfig, ToolgateConfig } from '../../src/config/schema.js';
import type { Model, ModelRequest, ModelResponse, ModelToolCall } from '../../src/models/model.js';
import { ScriptedModel, type ScriptStep } from '../../src/models/scripted.js';
import type { ServerOptions } from '../../src/server.js';
import { dataOf, RESOLVE, START_TURN, startHarness, TURN_FIELDS, type Harness } from './harness.js';
import { CountingToolSource, type CountingTool } from './tools.js';
import { expectValidModelRequests, expectValidTranscript, type TranscriptMessage } from './transcript.js';

export const AGENT_ID = 'tester';
export const MODEL_ID = 'scripted';
/** The id of the CountingToolSource the scenarios pass: its tools are `t:<name>`. */
export const SOURCE_ID = 't';

export function testAgent(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    id: AGENT_ID,
    name: 'Test agent',
    model: MODEL_ID,
    systemPrompt: 'You are the test agent.',
    tools: [`${SOURCE_ID}:*`],
    requireToolConfirmation: true,
    toolConfirmation: {},
    pauseTtlSeconds: 3600,
    maxIterations: 10,
    ...overrides,
  };
}

export function testConfig(agent: Partial<AgentConfig> = {}, plugins: string[] = []): ToolgateConfig {
  return { models: { [MODEL_ID]: { provider: 'scripted' } }, toolSources: {}, agents: [testAgent(agent)], plugins };
}

/** One tool call as the model gives it (its model-facing name is the tool's own name here). */
export const call = (name: string, args: JsonObject = {}, id = `call_${name}`): ModelToolCall => ({
  id,
  name,
  arguments: args,
});
export const callStep = (...calls: ModelToolCall[]): ModelResponse => ({ text: null, toolCalls: calls });
export const textStep = (text: string): ModelResponse => ({ text, toolCalls: [] });

/** A clock the test moves by hand. */
export function manualClock(start = '2026-01-01T00:00:00.000Z') {
  let now = new Date(start).getTime();
  return {
    now: () => new Date(now),
    advance(seconds: number) {
      now += seconds * 1000;
    },
  };
}

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export interface Scenario {
  h: Harness;
  model: ScriptedModel;
  tools: CountingToolSource;
  /** Sends a message on a new thread (or `threadId`) and returns the payload. */
  start(message: string, threadId?: string | null, extra?: { background?: boolean }): Promise<any>;
  /** Answers an elicitation and returns the payload. */
  resolve(elicitationId: string, action: 'ACCEPT' | 'DECLINE' | 'CANCEL', content?: unknown): Promise<any>;
  /** The whole thread: messages (checked against the transcript invariant) and its turns. */
  thread(threadId: string): Promise<{ messages: any[]; turns: any[] }>;
  turn(turnId: string): Promise<any>;
  /** Checks the thread's transcript and every request the model received. */
  expectConsistent(threadId: string): Promise<void>;
  close(): Promise<void>;
}

export interface ScenarioOptions extends Omit<Partial<ServerOptions>, 'models' | 'toolSources'> {
  tools?: CountingTool[];
  script?: ScriptStep[];
  /** Instead of a ScriptedModel with `script`. */
  model?: Model;
  agent?: Partial<AgentConfig>;
  plugins?: string[];
  database?: string;
}

export const THREAD_QUERY = `query Thread($id: ID!) {
  thread(id: $id) {
    id
    messages { id role text toolCallId toolCalls { id name toolId arguments } }
    turns { id status text error iterations }
  }
}`;

export const TURN_QUERY = `query Turn($id: ID!) { turn(id: $id) { ${TURN_FIELDS} } }`;

export async function startScenario(options: ScenarioOptions = {}): Promise<Scenario> {
  const { tools: toolSpecs, script, model: customModel, agent, plugins, ...serverOptions } = options;
  const model = new ScriptedModel(script ?? [textStep('ok')]);
  const tools = new CountingToolSource(SOURCE_ID, toolSpecs ?? []);
  const h = await startHarness({
    config: testConfig(agent, plugins),
    ...serverOptions,
    models: { [MODEL_ID]: customModel ?? model },
    toolSources: [tools],
  });
  const scenario: Scenario = {
    h,
    model,
    tools,
    async start(message, threadId = null, extra = {}) {
      return dataOf(await h.gql(START_TURN, { input: { agentId: AGENT_ID, message, threadId, ...extra } })).startTurn;
    },
    async resolve(elicitationId, action, content) {
      const input: Record<string, unknown> = { elicitationId, action };
      if (content !== undefined) input.content = content;
      return dataOf(await h.gql(RESOLVE, { input })).resolveElicitation;
    },
    async thread(threadId) {
      return dataOf(await h.gql(THREAD_QUERY, { id: threadId })).thread;
    },
    async turn(turnId) {
      return dataOf(await h.gql(TURN_QUERY, { id: turnId })).turn;
    },
    async expectConsistent(threadId) {
      const thread = await scenario.thread(threadId);
      const paused = thread.turns.at(-1)?.status === 'PAUSED';
      expectValidTranscript(thread.messages as TranscriptMessage[], { openLastStep: paused });
      if (!customModel)
        expectValidModelRequests(model.requests as ModelRequest[] as { messages: TranscriptMessage[] }[]);
    },
    close: () => h.close(),
  };
  return scenario;
}

/** The texts of the TOOL messages of a list of messages, in order. */
export function toolTexts(messages: { role: string; text: string | null }[]): (string | null)[] {
  return messages.filter((m) => m.role === 'TOOL').map((m) => m.text);
}

/** The messages of the last request the model received. */
export function lastRequest(model: ScriptedModel): ModelRequest {
  const request = model.requests.at(-1);
  if (!request) throw new Error('the model received no request');
  return request;
}
