// Lifecycle: ping and flush on an open store, ping failing once it is closed, and second() as another process's view
// of the same database, which the concurrency and webhook cases rely on.
import { describe, expect } from 'vitest';
import { at, AGENT, lease, agentConfig, runningTurn } from './fixtures.js';
import type { StoreSpec } from './harness.js';

export function registerLifecycleSpec({ it, itEmpty }: StoreSpec): void {
  describe('health and durability', () => {
    itEmpty('ping() is null on a migrated database; flush() resolves', async ({ store }) => {
      expect(await store.ping()).toBeNull();
      await store.syncAgent(agentConfig(AGENT), at(0));
      await expect(store.flush()).resolves.toBeUndefined();
      await expect(store.flush()).resolves.toBeUndefined();
    });

    itEmpty('ping() throws once the store is closed', async ({ store, close }) => {
      await close(store);
      await expect(store.ping()).rejects.toThrow();
    });

    it("second() is another view of the same database: each reads the other's commits", async ({ store, second }) => {
      const other = await second();
      expect(await other.ping()).toBeNull();
      const { turn } = await runningTurn(store, { lease: lease('host:1:a') });
      expect(await other.loadTurn(turn.id)).toEqual(turn);
      await other
        .turnWriter({ turnId: turn.id, lease: { owner: 'host:1:a' } })
        .finishTurn({ status: 'COMPLETED', text: 'by the other', now: at(1) });
      expect(await store.loadTurn(turn.id)).toMatchObject({ status: 'COMPLETED', text: 'by the other' });
      expect(await other.listAgents()).toHaveLength(2);
    });
  });
}
