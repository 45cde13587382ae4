// Agents from the config: created on first start; later starts update model, prompt and tools, but gating set
// through updateAgent persists. Two real server starts on one SQLite file.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentConfig, ToolgateConfig } from '../../src/config/schema.js';
import { dataOf, startHarness, tempDir } from '../support/harness.js';

const { dir, cleanup } = tempDir();
afterAll(cleanup);

function config(agents: Partial<AgentConfig>[]): ToolgateConfig {
  return {
    models: { small: { provider: 'scripted' }, large: { provider: 'scripted' } },
    toolSources: { demo: { type: 'builtin' } },
    agents: agents.map((agent) => ({
      id: 'editor',
      name: 'Editor',
      model: 'small',
      systemPrompt: 'First prompt.',
      tools: ['demo:list_entities'],
      requireToolConfirmation: true,
      toolConfirmation: {},
      pauseTtlSeconds: 600,
      maxIterations: 5,
      ...agent,
    })),
    plugins: [],
  };
}

const AGENT = `query Agent($id: ID!) { agent(id: $id) { name requireToolConfirmation pauseTtlSeconds maxIterations tools { toolId confirmation requiresConfirmation } } }`;
const UPDATE = `mutation Update($input: UpdateAgentInput!) { updateAgent(input: $input) { userErrors { code message } } }`;

describe('agents from the config across two starts on one database', () => {
  const database = join(dir, 'agents.db');

  it('keeps updateAgent gating but takes model, prompt and tools from the new config', async () => {
    const first = await startHarness({
      database,
      config: config([
        { toolConfirmation: { 'demo:list_entities': 'ALWAYS' } },
        { id: 'reviewer', name: 'Reviewer', requireToolConfirmation: false, tools: ['demo:*'] },
      ]),
    });
    const created = dataOf(await first.gql(AGENT, { id: 'editor' })).agent;
    expect(created).toMatchObject({
      requireToolConfirmation: true,
      pauseTtlSeconds: 600,
      tools: [{ toolId: 'demo:list_entities', confirmation: 'ALWAYS', requiresConfirmation: true }],
    });
    expect(
      dataOf(
        await first.gql(UPDATE, {
          input: {
            agentId: 'editor',
            requireToolConfirmation: false,
            pauseTtlSeconds: 120,
            toolConfirmation: [{ toolId: 'demo:list_entities', mode: 'NEVER' }],
          },
        }),
      ).updateAgent.userErrors,
    ).toEqual([]);
    await first.close();

    const second = await startHarness({
      database,
      config: config([
        {
          name: 'Editor 2',
          model: 'large',
          systemPrompt: 'Second prompt.',
          tools: ['demo:*'],
          maxIterations: 7,
          requireToolConfirmation: true,
          pauseTtlSeconds: 900,
          toolConfirmation: { 'demo:list_entities': 'ALWAYS' },
        },
        { id: 'reviewer', name: 'Reviewer', requireToolConfirmation: true, tools: ['demo:*'] },
        { id: 'newcomer', name: 'Newcomer' },
      ]),
    });
    try {
      const editor = dataOf(await second.gql(AGENT, { id: 'editor' })).agent;
      // Definition from the new config ...
      expect(editor.name).toBe('Editor 2');
      expect(editor.maxIterations).toBe(7);
      expect(editor.tools.map((t: any) => t.toolId)).toEqual([
        'demo:list_entities',
        'demo:create_entity',
        'demo:delete_entities',
      ]);
      const stored = await second.server.services.store.getAgent('editor');
      expect(stored).toMatchObject({ modelId: 'large', systemPrompt: 'Second prompt.', toolIds: ['demo:*'] });
      // ... gating as updateAgent left it.
      expect(editor.requireToolConfirmation).toBe(false);
      expect(editor.pauseTtlSeconds).toBe(120);
      expect(editor.tools[0]).toMatchObject({
        toolId: 'demo:list_entities',
        confirmation: 'NEVER',
        requiresConfirmation: false,
      });

      // An agent nobody changed through the API follows the config's gating.
      expect(dataOf(await second.gql(AGENT, { id: 'reviewer' })).agent.requireToolConfirmation).toBe(true);
      // An agent new in the config is created.
      expect(dataOf(await second.gql(AGENT, { id: 'newcomer' })).agent).toMatchObject({
        name: 'Newcomer',
        requireToolConfirmation: true,
      });
    } finally {
      await second.close();
    }
  });
});

describe('tool patterns', () => {
  it('"<source>:*" gives every tool of the source; an exact id gives that one, in the order the agent names them', async () => {
    const h = await startHarness({
      config: config([
        { id: 'all', tools: ['demo:*'] },
        { id: 'some', tools: ['demo:delete_entities', 'demo:list_entities'] },
        { id: 'mixed', tools: ['demo:delete_entities', 'demo:*'] },
      ]),
    });
    try {
      const ids = async (id: string) => dataOf(await h.gql(AGENT, { id })).agent.tools.map((t: any) => t.toolId);
      expect(await ids('all')).toEqual(['demo:list_entities', 'demo:create_entity', 'demo:delete_entities']);
      expect(await ids('some')).toEqual(['demo:delete_entities', 'demo:list_entities']);
      expect(await ids('mixed')).toEqual(['demo:delete_entities', 'demo:list_entities', 'demo:create_entity']);
    } finally {
      await h.close();
    }
  });

  it('refuses to start when an agent names a tool id that no source lists', async () => {
    await expect(
      startHarness({
        configFile: '/etc/toolgate.json',
        config: config([{ tools: ['demo:list_entities', 'demo:drop_everything'] }]),
      }),
    ).rejects.toThrow(
      '/etc/toolgate.json: agents[0].tools[1]: no tool source lists "demo:drop_everything" ("demo" lists: list_entities, create_entity, delete_entities)',
    );
  });
});
