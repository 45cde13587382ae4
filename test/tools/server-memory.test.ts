// A third-party MCP server from npm (@modelcontextprotocol/server-memory), run as examples/memory-agent.json
// configures it: read-only tools run, graph changes ask first, and the answers decide what happens.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ElicitRequestFormParamsSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import type { McpToolSource } from '../../src/tools/mcp.js';
import { dataOf, RESOLVE, START_TURN, startHarness, tempDir, type Harness } from '../support/harness.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/memory-agent.json', import.meta.url));

describe('examples/memory-agent.json on @modelcontextprotocol/server-memory', () => {
  let h: Harness;
  const { dir, cleanup } = tempDir();
  const memoryFile = join(dir, 'memory.jsonl');

  beforeAll(async () => {
    const { config, file } = loadConfigFile(EXAMPLE);
    // The example as it is, except that the graph goes to a temp file rather than ./data.
    const memory = config.toolSources.memory as { env?: Record<string, string> };
    memory.env = { ...memory.env, MEMORY_FILE_PATH: memoryFile };
    h = await startHarness({ config, configFile: file });
  });
  afterAll(async () => {
    await h?.close();
    cleanup();
  });

  const start = async (message: string, threadId?: string) =>
    dataOf(await h.gql(START_TURN, { input: { agentId: 'memory', message, threadId } })).startTurn;
  const resolve = async (elicitationId: string, action: string, content?: unknown) =>
    dataOf(await h.gql(RESOLVE, { input: { elicitationId, action, content } })).resolveElicitation;

  it("lists server-memory's tools with their annotations and gates them", async () => {
    const { agent } = dataOf(
      await h.gql(
        '{ agent(id: "memory") { tools { toolId label requiresConfirmation confirmation annotations { readOnlyHint destructiveHint } } } }',
      ),
    );
    const gate = Object.fromEntries(agent.tools.map((t: any) => [t.toolId, t.requiresConfirmation]));
    expect(gate).toEqual({
      'memory:create_entities': true,
      'memory:create_relations': true,
      'memory:add_observations': true,
      'memory:delete_entities': true,
      'memory:delete_observations': true,
      'memory:delete_relations': true,
      'memory:read_graph': false,
      'memory:search_nodes': false,
      'memory:open_nodes': false,
    });
    expect(agent.tools.find((t: any) => t.toolId === 'memory:add_observations').confirmation).toBe('ALWAYS');
    expect(agent.tools.find((t: any) => t.toolId === 'memory:read_graph')).toMatchObject({
      label: 'Read Graph',
      annotations: { readOnlyHint: true, destructiveHint: false },
    });
  });

  it('asks before writing to the graph, writes once on ACCEPT, reads without asking, and keeps what a DECLINE protects', async () => {
    const remember = await start('remember Ada wrote the first program');
    expect(remember.turn.status).toBe('PAUSED');
    const [ask] = remember.turn.pendingElicitations;
    expect(ask.toolCall).toMatchObject({
      toolId: 'memory:create_entities',
      annotations: { readOnlyHint: false, destructiveHint: false },
    });
    expect(ElicitRequestFormParamsSchema.safeParse(ask.mcpRequest).success).toBe(true);
    expect(existsSync(memoryFile)).toBe(false);

    const accepted = await resolve(ask.id, 'ACCEPT');
    expect(accepted.turn.status).toBe('COMPLETED');
    expect(accepted.turn.text).toContain('"name": "Ada"');
    const lines = readFileSync(memoryFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      { type: 'entity', name: 'Ada', entityType: 'note', observations: ['wrote the first program'] },
    ]);

    const recall = await start('what do you know about Ada?', remember.thread.id);
    expect(recall.turn.status).toBe('COMPLETED');
    expect(recall.turn.text).toContain('wrote the first program');

    const forget = await start('forget Ada', remember.thread.id);
    expect(forget.turn.status).toBe('PAUSED');
    expect(forget.turn.pendingElicitations[0].toolCall).toMatchObject({
      toolId: 'memory:delete_entities',
      arguments: { entityNames: ['Ada'] },
      annotations: { destructiveHint: true },
    });
    const declined = await resolve(forget.turn.pendingElicitations[0].id, 'DECLINE');
    expect(declined.turn.status).toBe('COMPLETED');
    expect(declined.turn.text).toBe('Understood: I did not run delete_entities.');
    expect(readFileSync(memoryFile, 'utf8')).toContain('"name":"Ada"');
  });

  it('ends the server-memory process when toolgate stops', async () => {
    const source = h.server.services.tools.sources.get('memory') as McpToolSource;
    const pid = source.pid!;
    expect(() => process.kill(pid, 0)).not.toThrow();
    await h.close();
    const end = Date.now() + 5000;
    while (
      Date.now() < end &&
      (() => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      })()
    )
      await new Promise((r) => setTimeout(r, 25));
    expect(() => process.kill(pid, 0)).toThrow();
    h = undefined as unknown as Harness;
  });
});
