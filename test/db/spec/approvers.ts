// Approvers (docs/approvers.md): an agent's policies round-trip through syncAgent (the config owns them, so a sync
// writes them even after updateAgent took the gating over), and a request keeps the policy it was paused with.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Agent, ElicitationApproval } from '../../../src/domain/records.js';
import type { Store } from '../../../src/domain/store.js';
import { agentConfig, at, ANN, pausedTurn } from './fixtures.js';
import type { StoreHarness } from './harness.js';

const REVIEWERS: ElicitationApproval = {
  roles: ['reviewer'],
  required: 2,
  requester: 'EXCLUDED',
  escalation: { roles: ['oncall'], at: at(900) },
};

export function registerApproversSpec(harness: StoreHarness): void {
  const { seedAgents } = harness;

  describe('approvers: policies and requests', () => {
    let store: Store;
    beforeEach(() => {
      store = harness.store;
    });

    it("syncAgent keeps the agent's, a tool's and a rule's approvers, and reads them back as configured", async () => {
      const config = agentConfig('notes', {
        approvers: { roles: ['reviewer'], required: 2, requester: 'EXCLUDED', escalate: null },
        toolApprovers: {
          'notes:delete': {
            roles: ['admin'],
            required: 1,
            requester: 'ALSO',
            escalate: { afterSeconds: 60, roles: ['oncall'] },
          },
          'notes:read': 'REQUESTER',
        },
        toolConfirmation: { 'notes:write': 'BY_ANNOTATION' },
        toolRules: {
          'notes:write': [
            {
              match: { required: ['path'] },
              mode: 'ALWAYS',
              approvers: { roles: ['security'], required: 1, requester: 'ALSO', escalate: null },
            },
          ],
        },
      });
      expect(await store.syncAgent(config, at(0))).toEqual(config);
      expect(await store.getAgent('notes')).toEqual(config);
      expect((await store.listAgents()).find((a) => a.id === 'notes')).toEqual(config);
    });

    it('an agent without approvers reads REQUESTER everywhere', async () => {
      await store.syncAgent(agentConfig('plain'), at(0));
      expect(await store.getAgent('plain')).toMatchObject({ approvers: 'REQUESTER', toolApprovers: {} });
    });

    it("a later sync writes the config's approvers, also after updateAgentGating took the gating over", async () => {
      await store.syncAgent(agentConfig('notes'), at(0));
      await store.updateAgentGating('notes', { pauseTtlSeconds: 90 }, at(1));
      const policy: Agent['approvers'] = { roles: ['reviewer'], required: 1, requester: 'ALSO', escalate: null };
      const synced = await store.syncAgent(
        agentConfig('notes', {
          approvers: policy,
          toolApprovers: { 'notes:read': 'REQUESTER' },
          pauseTtlSeconds: 3600,
        }),
        at(2),
      );
      expect(synced).toMatchObject({
        pauseTtlSeconds: 90,
        approvers: policy,
        toolApprovers: { 'notes:read': 'REQUESTER' },
      });
      const cleared = await store.syncAgent(agentConfig('notes'), at(3));
      expect(cleared).toMatchObject({ pauseTtlSeconds: 90, approvers: 'REQUESTER', toolApprovers: {} });
    });

    describe('a request paused under a policy', () => {
      beforeEach(seedAgents);

      it('keeps its policy: pauseTurn returns it, every read of the request gives it back', async () => {
        const paused = await pausedTurn(store, { elicitations: 2, approval: REVIEWERS });
        expect(paused.elicitations.map((e) => e.approval)).toEqual([REVIEWERS, REVIEWERS]);
        const [first] = paused.elicitations;
        expect(await store.getElicitation(first!.id, ANN)).toEqual(first);
        expect(await store.listTurnElicitations(paused.turn.id)).toEqual(paused.elicitations);
        const pending = await store.listPendingElicitations(ANN, {}, at(1), 10, null);
        expect(pending.items).toEqual(paused.elicitations);
      });

      it('a request paused without one reads null: the requester alone answers', async () => {
        const paused = await pausedTurn(store);
        expect(paused.elicitations[0]!.approval).toBeNull();
        expect((await store.getElicitation(paused.elicitations[0]!.id, ANN))!.approval).toBeNull();
      });
    });
  });
}
