import type { ToolgateConfig } from './schema.js';

/**
 * What runs with no TOOLGATE_CONFIG: the scripted model, the demo tools, one agent with confirmation on, and a
 * gateway on the same tools, so that an MCP client pointed at /mcp calls them with nothing else set up.
 */
export const demoConfig: ToolgateConfig = {
  models: { demo: { provider: 'scripted' } },
  toolSources: { demo: { type: 'builtin' } },
  agents: [
    {
      id: 'demo',
      name: 'Demo agent',
      description: 'Lists, creates and deletes entities in a small demo store; asks before it changes anything.',
      model: 'demo',
      systemPrompt: 'You manage a small store of entities. Use the tools to list, create and delete them.',
      tools: ['demo:*'],
      requireToolConfirmation: true,
      toolConfirmation: {},
      pauseTtlSeconds: 3600,
      maxIterations: 10,
    },
    {
      id: 'gateway',
      name: 'Demo gateway',
      description: 'Serves the demo tools to MCP clients at /mcp; asks before a call changes anything.',
      systemPrompt: '',
      tools: ['demo:*'],
      requireToolConfirmation: true,
      toolConfirmation: {},
      pauseTtlSeconds: 3600,
      maxIterations: 10,
    },
  ],
  plugins: [],
};
