// The use cases of src/app/ with no API in front: a server's services (its real store, the loop, the tools) built
// by createServer, never listening. A test calls startTurn(app, viewer, …) and so on as an entrance would.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import type { AppDeps } from '../../src/app/deps.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { AgentConfig } from '../../src/config/schema.js';
import { ScriptedModel, type ScriptStep } from '../../src/models/scripted.js';
import { createServer, type ToolgateServer } from '../../src/server.js';
import { DbObserver, type DbSnapshot } from './db-snapshot.js';
import { TEST_BACKEND } from './harness.js';
import { freshPostgresDatabase } from './postgres.js';
import type { JsonObject } from '../../src/domain/records.js';
import { call, callStep, MODEL_ID, testAgent, testConfig, textStep } from './scenario.js';
import { CountingToolSource, type CountingTool } from './tools.js';

export const ALICE: Viewer = { id: 'alice', isAdmin: false, roles: [] };
export const BOB: Viewer = { id: 'bob', isAdmin: false, roles: [] };
export const ADMIN: Viewer = { id: 'root', isAdmin: true, roles: [] };

export interface AppScenario {
  app: AppDeps;
  server: ToolgateServer;
  tools: CountingToolSource;
  model: ScriptedModel;
  /** Everything stored now: equal before and after a refused use case. */
  snapshot(): Promise<DbSnapshot>;
  close(): Promise<void>;
}

export async function startApp(
  options: {
    tools?: CountingTool[];
    script?: ScriptStep[];
    agent?: Partial<AgentConfig>;
    agents?: AgentConfig[];
    listeners?: ToolPreExecuteListener[];
  } = {},
): Promise<AppScenario> {
  const database =
    TEST_BACKEND === 'postgres'
      ? (await freshPostgresDatabase()).url
      : join(mkdtempSync(join(tmpdir(), 'toolgate-app-')), 'toolgate.db');
  const model = new ScriptedModel(options.script ?? [textStep('ok')]);
  const tools = new CountingToolSource('t', options.tools ?? []);
  const config = testConfig(options.agent);
  config.agents.push(...(options.agents ?? []));
  const server = await createServer({
    config,
    database,
    sweepIntervalSeconds: 0,
    models: { [MODEL_ID]: model },
    toolSources: [tools],
    ...(options.listeners && { listeners: options.listeners }),
  });
  const observer = new DbObserver(database);
  return {
    app: server.services,
    server,
    tools,
    model,
    snapshot: () => observer.snapshot(),
    async close() {
      await observer.close();
      await server.close();
    },
  };
}

/** A second agent on the same model and tools. */
export const otherAgent = (overrides: Partial<AgentConfig> = {}): AgentConfig =>
  testAgent({ id: 'other', name: 'Other agent', ...overrides });

let calls = 0;

/**
 * A model that calls each tool the user's message names by a word (with `args` of that tool), and answers "done" after
 * the tools' results: a turn's course is written in its message.
 */
export function callsWhatIsNamed(args: Record<string, JsonObject> = {}): ScriptStep {
  return (request) => {
    const last = request.messages.at(-1);
    if (last?.role !== 'USER') return textStep('done');
    const named = (last.text ?? '').split(/\s+/).filter((word) => word.startsWith('t_'));
    if (named.length === 0) return textStep('nothing to do');
    return callStep(...named.map((word) => call(word.slice(2), args[word.slice(2)] ?? {}, `call_${++calls}`)));
  };
}
