// Agents: syncAgent writes an agent from the config, updateAgentGating from the API, and once the API has changed an
// agent's gating (argument rules and allowEdit included) later syncs keep it, so a restart does not undo an operator.
import { describe, expect } from 'vitest';
import type { Agent, ArgumentRule } from '../../../src/domain/records.js';
import { at, agentConfig, startInput } from './fixtures.js';
import type { StoreSpec } from './harness.js';

// Agents are what these cases write: they start from an empty database.
export function registerAgentsSpec({ itEmpty: it }: StoreSpec): void {
  describe('agents', () => {
    it('syncAgent creates an agent as configured, and getAgent reads it back; an unknown id reads null', async ({
      store,
    }) => {
      const config = agentConfig('notes', {
        description: 'Keeps notes',
        toolIds: ['notes:*', 'demo:read_graph'],
        toolConfirmation: { 'notes:delete': 'ALWAYS', 'notes:read': 'NEVER' },
      });
      expect(await store.syncAgent(config, at(0))).toEqual(config);
      expect(await store.getAgent('notes')).toEqual(config);
      expect(await store.getAgent('nobody')).toBeNull();
    });

    it('syncAgent updates an agent from the config: definition, gating and overrides (replaced, not merged)', async ({
      store,
    }) => {
      await store.syncAgent(agentConfig('notes', { toolConfirmation: { 'notes:delete': 'ALWAYS' } }), at(0));
      const changed = agentConfig('notes', {
        name: 'Notes v2',
        description: 'Now with a description',
        modelId: 'gpt-x',
        systemPrompt: 'Be brief.',
        toolIds: ['notes:read'],
        maxIterations: 3,
        requireToolConfirmation: false,
        pauseTtlSeconds: 60,
        toolConfirmation: { 'notes:read': 'NEVER' },
      });
      expect(await store.syncAgent(changed, at(1))).toEqual(changed);
      expect(await store.getAgent('notes')).toEqual(changed);
    });

    it('once updateAgentGating changed gating, syncAgent updates the definition and keeps the gating', async ({
      store,
    }) => {
      await store.syncAgent(agentConfig('notes', { toolConfirmation: { 'notes:delete': 'ALWAYS' } }), at(0));
      const updated = await store.updateAgentGating(
        'notes',
        { requireToolConfirmation: false, pauseTtlSeconds: 90, toolConfirmation: { 'notes:read': 'NEVER' } },
        at(1),
      );
      const gating: Partial<Agent> = {
        requireToolConfirmation: false,
        pauseTtlSeconds: 90,
        toolConfirmation: { 'notes:delete': 'ALWAYS', 'notes:read': 'NEVER' },
      };
      expect(updated).toEqual(agentConfig('notes', gating));

      const config = agentConfig('notes', {
        name: 'Renamed',
        maxIterations: 2,
        requireToolConfirmation: true,
        pauseTtlSeconds: 3600,
        toolConfirmation: { 'notes:write': 'ALWAYS' },
      });
      const synced = await store.syncAgent(config, at(2));
      expect(synced).toEqual(agentConfig('notes', { name: 'Renamed', maxIterations: 2, ...gating }));
      expect(await store.getAgent('notes')).toEqual(synced);
    });

    it('updateAgentGating changes only what the patch names, and upserts tool overrides', async ({ store }) => {
      await store.syncAgent(
        agentConfig('notes', { toolConfirmation: { 'notes:a': 'ALWAYS', 'notes:b': 'NEVER' } }),
        at(0),
      );
      const ttlOnly = await store.updateAgentGating('notes', { pauseTtlSeconds: 30 }, at(1));
      expect(ttlOnly).toMatchObject({
        requireToolConfirmation: true,
        pauseTtlSeconds: 30,
        toolConfirmation: { 'notes:a': 'ALWAYS', 'notes:b': 'NEVER' },
      });
      const upserted = await store.updateAgentGating(
        'notes',
        { toolConfirmation: { 'notes:b': 'BY_ANNOTATION', 'notes:c': 'ALWAYS' } },
        at(2),
      );
      expect(upserted?.toolConfirmation).toEqual({
        'notes:a': 'ALWAYS',
        'notes:b': 'BY_ANNOTATION',
        'notes:c': 'ALWAYS',
      });
      expect(upserted?.pauseTtlSeconds).toBe(30);
      expect((await store.getAgent('notes'))?.toolConfirmation).toEqual(upserted?.toolConfirmation);
    });

    it('updateAgentGating of an unknown agent returns null and creates nothing', async ({ store }) => {
      expect(await store.updateAgentGating('ghost', { pauseTtlSeconds: 5 }, at(0))).toBeNull();
      expect(await store.getAgent('ghost')).toBeNull();
      expect(await store.listAgents()).toEqual([]);
    });

    it('listAgents lists every agent with its overrides, by id', async ({ store }) => {
      await store.syncAgent(agentConfig('charlie'), at(0));
      await store.syncAgent(agentConfig('alpha', { toolConfirmation: { 'demo:x': 'NEVER' } }), at(0));
      await store.syncAgent(agentConfig('bravo'), at(0));
      expect(await store.listAgents()).toEqual([
        agentConfig('alpha', { toolConfirmation: { 'demo:x': 'NEVER' } }),
        agentConfig('bravo'),
        agentConfig('charlie'),
      ]);
    });
  });

  describe('agents: argument rules and allowEdit', () => {
    const TMP: ArgumentRule = {
      match: { properties: { path: { type: 'string', pattern: '^/tmp/' } }, required: ['path'] },
      mode: 'NEVER',
    };
    const ETC: ArgumentRule = {
      match: { properties: { path: { pattern: '^/etc/' } } },
      mode: 'DENY',
      reason: 'system files are off limits',
    };
    const ANY: ArgumentRule = { match: {}, mode: 'ALWAYS' };

    it('syncAgent stores rules in order, the agent allowEdit and per-tool allowEdit; every read returns them', async ({
      store,
    }) => {
      const config = agentConfig('files', {
        allowEdit: false,
        toolConfirmation: { 'fs:write': 'BY_ANNOTATION', 'fs:delete': 'ALWAYS', 'fs:read': 'NEVER' },
        toolRules: { 'fs:write': [ETC, TMP, ANY], 'fs:delete': [TMP] },
        toolAllowEdit: { 'fs:write': true, 'fs:delete': false },
      });
      expect(await store.syncAgent(config, at(0))).toEqual(config);
      expect(await store.getAgent('files')).toEqual(config);
      expect(await store.listAgents()).toEqual([config]);
      // The agent as a turn reads it in its transaction.
      const started = await store.startTurn(startInput({ agentId: 'files', now: at(1) }));
      expect(started.ok && started.agent).toEqual(config);
    });

    it('an agent without any keeps the defaults: allowEdit true, no rules, no per-tool allowEdit', async ({
      store,
    }) => {
      await store.syncAgent(agentConfig('plain', { toolConfirmation: { 'fs:read': 'NEVER' } }), at(0));
      expect(await store.getAgent('plain')).toMatchObject({ allowEdit: true, toolRules: {}, toolAllowEdit: {} });
    });

    it('syncAgent replaces rules and allowEdit from the config while updateAgent has not changed gating', async ({
      store,
    }) => {
      await store.syncAgent(
        agentConfig('files', {
          toolConfirmation: { 'fs:write': 'BY_ANNOTATION' },
          toolRules: { 'fs:write': [ETC, TMP] },
          toolAllowEdit: { 'fs:write': false },
        }),
        at(0),
      );
      const changed = agentConfig('files', {
        allowEdit: false,
        toolConfirmation: { 'fs:delete': 'ALWAYS' },
        toolRules: { 'fs:delete': [ANY] },
      });
      expect(await store.syncAgent(changed, at(1))).toEqual(changed);
    });

    it('updateAgentGating replaces the rules of the tools it names, [] clears them, null clears a tool allowEdit', async ({
      store,
    }) => {
      await store.syncAgent(
        agentConfig('files', {
          toolConfirmation: { 'fs:write': 'ALWAYS', 'fs:delete': 'ALWAYS' },
          toolRules: { 'fs:write': [ETC, TMP], 'fs:delete': [ANY] },
          toolAllowEdit: { 'fs:write': false, 'fs:delete': false },
        }),
        at(0),
      );
      const updated = await store.updateAgentGating(
        'files',
        {
          allowEdit: false,
          toolRules: { 'fs:write': [TMP], 'fs:delete': [], 'fs:new': [ETC] },
          toolAllowEdit: { 'fs:write': null, 'fs:other': true },
        },
        at(1),
      );
      const expected = agentConfig('files', {
        allowEdit: false,
        // The modes stay; a tool named for the first time gets BY_ANNOTATION.
        toolConfirmation: {
          'fs:write': 'ALWAYS',
          'fs:delete': 'ALWAYS',
          'fs:new': 'BY_ANNOTATION',
          'fs:other': 'BY_ANNOTATION',
        },
        toolRules: { 'fs:write': [TMP], 'fs:new': [ETC] },
        toolAllowEdit: { 'fs:delete': false, 'fs:other': true },
      });
      expect(updated).toEqual(expected);
      expect(await store.getAgent('files')).toEqual(expected);

      // A mode alone leaves the tool's rules and allowEdit as they are.
      const modeOnly = await store.updateAgentGating('files', { toolConfirmation: { 'fs:new': 'NEVER' } }, at(2));
      expect(modeOnly).toEqual({
        ...expected,
        toolConfirmation: { ...expected.toolConfirmation, 'fs:new': 'NEVER' },
      });
    });

    it('once updateAgentGating changed them, syncAgent keeps rules and allowEdit as the API left them', async ({
      store,
    }) => {
      await store.syncAgent(
        agentConfig('files', { toolConfirmation: { 'fs:write': 'BY_ANNOTATION' }, toolRules: { 'fs:write': [TMP] } }),
        at(0),
      );
      const updated = await store.updateAgentGating(
        'files',
        { allowEdit: false, toolRules: { 'fs:write': [ETC] }, toolAllowEdit: { 'fs:write': true } },
        at(1),
      );
      const synced = await store.syncAgent(
        agentConfig('files', {
          name: 'Files v2',
          allowEdit: true,
          toolConfirmation: { 'fs:write': 'NEVER' },
          toolRules: { 'fs:write': [ANY] },
          toolAllowEdit: { 'fs:write': false },
        }),
        at(2),
      );
      expect(synced).toEqual({ ...updated, name: 'Files v2' });
      expect(synced).toMatchObject({
        allowEdit: false,
        toolRules: { 'fs:write': [ETC] },
        toolAllowEdit: { 'fs:write': true },
      });
    });

    it('an allowEdit-only change also counts as a gating change that later syncs keep', async ({ store }) => {
      await store.syncAgent(agentConfig('files'), at(0));
      await store.updateAgentGating('files', { allowEdit: false }, at(1));
      expect((await store.syncAgent(agentConfig('files', { allowEdit: true }), at(2))).allowEdit).toBe(false);
    });

    it('a second store instance reads what the first wrote', async ({ store, second }) => {
      const config = agentConfig('files', {
        toolConfirmation: { 'fs:write': 'BY_ANNOTATION' },
        toolRules: { 'fs:write': [ETC, TMP] },
        toolAllowEdit: { 'fs:write': false },
      });
      await store.syncAgent(config, at(0));
      const other = await second();
      expect(await other.getAgent('files')).toEqual(config);
    });
  });
}
