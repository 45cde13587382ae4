// The use cases of src/app/ with no API in front: a server's core (its real store, the loop, the tools) built by
// createCore, without the HTTP router or the background work. A test calls startTurn(app, viewer, …) and so on as an
// entrance would.
import type { ToolPreExecuteListener } from '../../src/domain/gate/listeners.js';
import type { AppDeps } from '../../src/app/deps.js';
import type { Viewer } from '../../src/app/viewer.js';
import type { AgentConfig } from '../../src/config/schema.js';
import { ScriptedModel, type ScriptStep } from '../../src/models/scripted.js';
import { createCore, unwindOnFailure, type Core, type CoreOptions } from '../../src/compose/core.js';
import { sweeperOf } from '../../src/compose/background.js';
import type { SweepReport } from '../../src/agent/sweeper.js';
import { DbObserver, type DbSnapshot } from './db-snapshot.js';
import { freshDatabase } from './harness.js';
import type { JsonObject } from '../../src/domain/records.js';
import { call, callStep, MODEL_ID, testAgent, testConfig, textStep } from './scenario.js';
import { CountingToolSource, type CountingTool } from './tools.js';

export const ALICE: Viewer = { id: 'alice', isAdmin: false, roles: [] };
export const BOB: Viewer = { id: 'bob', isAdmin: false, roles: [] };
export const ADMIN: Viewer = { id: 'root', isAdmin: true, roles: [] };

export interface AppScenario {
  app: AppDeps;
  core: Core;
  /** The database: an SQLite file's path, or a PostgreSQL URL. */
  database: string;
  /** One sweep now (expiry, retention, recovery), as the server's timer runs it. */
  sweep(): Promise<SweepReport>;
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
    /** Awaited at each of the runner's checkpoints (src/agent/loop.ts). */
    checkpoint?: CoreOptions['checkpoint'];
    logger?: CoreOptions['logger'];
    /** The one clock of the rules, the loop and the records (default: the storage's). */
    clock?: CoreOptions['clock'];
  } = {},
): Promise<AppScenario> {
  const database = await freshDatabase();
  const model = new ScriptedModel(options.script ?? [textStep('ok')]);
  const tools = new CountingToolSource('t', options.tools ?? []);
  const config = testConfig(options.agent);
  config.agents.push(...(options.agents ?? []));
  const core = await unwindOnFailure((opened) =>
    createCore(
      {
        config,
        database,
        models: { [MODEL_ID]: model },
        toolSources: [tools],
        ...(options.listeners && { listeners: options.listeners }),
        ...(options.checkpoint && { checkpoint: options.checkpoint }),
        ...(options.logger && { logger: options.logger }),
        ...(options.clock && { clock: options.clock }),
      },
      opened,
    ),
  );
  const observer = new DbObserver(database);
  return {
    app: core.services,
    core,
    database,
    sweep: () => sweeperOf(core, {}).sweepOnce(),
    tools,
    model,
    snapshot: () => observer.snapshot(),
    async close() {
      await observer.close();
      // As the server's close(): running turns get 5 s.
      await core.close(Date.now() + 5_000);
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
