// A server that closes while MCP clients of both revisions wait on their calls: what their requests still do once
// stopped (a read of the call) ends before the store closes, which would otherwise log a fault for each.
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/domain/store.js';
import { openStorage } from '../../src/storage.js';
import { freshDatabase, startHarness } from '../support/harness.js';
import { memoryLog } from '../support/log.js';
import { connectModernClient } from './modern-support.js';
import {
  ALICE_TOKEN,
  answerAsAlice,
  CLIENT_REVISIONS,
  connectClientOf,
  countingTools,
  gatewayConfig,
  mcpUrl,
  onlyPending,
} from './support.js';

/**
 * The store of `database`, whose next read of a turn for a viewer (a waiting request's, at its tick) is held once
 * `holdNextRead` is called, until the promise it returns is told to go on.
 */
async function storageHoldingARead(database: string) {
  const storage = await openStorage(database, 'test');
  let hold: { reached: () => void; released: Promise<void> } | null = null;
  const store = new Proxy(storage.store, {
    get(target, property) {
      if (property !== 'getTurn') {
        const value: unknown = Reflect.get(target, property, target);
        // The store's methods use its private fields: called on the store, not on the proxy.
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: Parameters<Store['getTurn']>) => {
        const held = hold;
        if (held && args[1] !== undefined) {
          hold = null;
          held.reached();
          await held.released;
        }
        return target.getTurn(...args);
      };
    },
  });
  return {
    storage: { ...storage, store },
    /** Resolves once the next such read is held; `release` lets it go on. */
    holdNextRead() {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      return new Promise<{ release: () => void }>((resolve) => {
        hold = { reached: () => resolve({ release }), released };
      });
    },
  };
}

describe('a server that closes while a waiting request reads the store', { timeout: 60_000 }, () => {
  it.each(CLIENT_REVISIONS)(
    'a %s client: the store closes once that read is done; nothing read from a closed store, nothing logged',
    async (revision) => {
      const config = gatewayConfig();
      config.server = { mcpRequestState: { waitSeconds: 20 } };
      const log = memoryLog('info');
      const { storage, holdNextRead } = await storageHoldingARead(await freshDatabase());
      const server = await startHarness({
        config,
        toolSources: [countingTools()],
        storage,
        logger: log.logger,
        mcpProgressIntervalMs: 50,
      });
      const client = await connectClientOf(revision, mcpUrl(server), { token: ALICE_TOKEN });
      try {
        client.call('drop', { ids: [42] }).catch(() => {});
        await onlyPending(server);
        // The request's next tick reads its turn: held while the server begins to close.
        const read = await holdNextRead();
        const closing = server.close();
        // The close waits for the read (up to its grace); a close that did not would be over by now, the store shut.
        await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 500))]);
        read.release();
        await closing;
        // Past what the request does once its read returns.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(log.find('unexpected fault')).toEqual([]);
      } finally {
        await client.close().catch(() => {});
      }
    },
  );
});

describe('a server that closes while a 2026-07-28 client waits on someone else', { timeout: 60_000 }, () => {
  it('answers it input_required with a requestState at once, which brings the result from the server after it', async () => {
    const config = gatewayConfig();
    // Keys both servers share: a state issued by one is taken by the other.
    const key = { id: 'closing', secret: 'a-key-both-servers-share-of-32-characters' };
    config.server = { mcpRequestState: { keys: [key], waitSeconds: 20 } };
    const tools = countingTools();
    const first = await startHarness({ config, toolSources: [tools] });
    const client = await connectModernClient(mcpUrl(first), { token: ALICE_TOKEN, autoFulfill: false });
    const params = { name: 'drop', arguments: { ids: [43] } };
    const waiting = client.callTool(params, { allowInputRequired: true }) as unknown as Promise<{
      resultType?: string;
      inputRequests?: Record<string, unknown>;
      requestState?: string;
    }>;
    waiting.catch(() => {});
    const pending = await onlyPending(first);
    const closedAt = Date.now();
    await first.close();
    const answered = await waiting;
    // Answered as the server closed, not after the request's 20 s wait.
    expect(Date.now() - closedAt).toBeLessThan(10_000);
    expect(answered).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    expect(Object.keys(answered.inputRequests ?? {})).toEqual([]);
    await client.close();

    const second = await startHarness({ config, toolSources: [tools], database: first.database });
    try {
      expect((await answerAsAlice(second, pending.id, 'ACCEPT')).userErrors).toEqual([]);
      const back = await connectModernClient(mcpUrl(second), { token: ALICE_TOKEN, autoFulfill: false });
      const retry = { ...params, requestState: answered.requestState };
      expect(await back.callTool(retry as never, { allowInputRequired: true })).toMatchObject({
        content: [{ type: 'text', text: 'dropped [43]' }],
        isError: false,
      });
      expect(tools.count('drop')).toBe(1);
      await back.close();
    } finally {
      await second.close();
    }
  });
});
