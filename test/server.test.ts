// createServer (src/server.ts) when its start fails: whatever it opened is closed again (tool sources, a Redis it
// connected, the database, a storage the caller handed over), so an embedding process that catches the error and
// goes on keeps no child process, connection or file handle of the failed server.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { demoConfig } from '../src/config/demo.js';
import { createServer } from '../src/server.js';
import { openStorage, type Storage } from '../src/storage.js';
import type { Tool, ToolSource } from '../src/tools/tool.js';
import { REDIS_URL } from './support/redis.js';

const admin = new Redis(REDIS_URL);
afterAll(() => admin.quit());

/** A tool source that records whether it was closed. */
function recordingSource(id: string): ToolSource & { closed: boolean } {
  return {
    id,
    closed: false,
    async listTools(): Promise<Tool[]> {
      return [];
    },
    async close() {
      this.closed = true;
    },
  };
}

async function closedStore(storage: Storage): Promise<boolean> {
  return storage.store.ping().then(
    () => false,
    () => true,
  );
}

describe('a failed start closes what it opened', () => {
  it('the database failing after it opened: the tool sources, its own Redis connections and the database are closed', async () => {
    const prefix = `toolgate-test:${randomUUID()}:`;
    const extra = recordingSource('extra');
    let storage: Storage | undefined;
    const start = createServer({
      config: { ...demoConfig, pubsub: { redis: REDIS_URL, prefix } },
      toolSources: [extra],
      storage: async () => {
        storage = await openStorage(':memory:', 'database');
        // A database that opened, then refuses writes (read-only file, a PostgreSQL gone right after migrating).
        storage.store.syncAgent = async () => {
          throw new Error('attempt to write a readonly database');
        };
        return storage;
      },
    });
    await expect(start).rejects.toThrow('attempt to write a readonly database');
    expect(extra.closed).toBe(true);
    expect(await closedStore(storage!)).toBe(true);
    expect((await admin.call('CLIENT', 'LIST')) as string).not.toContain(` name=${prefix}`);
  });

  it('a config check failing first: a storage the caller opened is closed too', async () => {
    const storage = await openStorage(':memory:', 'database');
    const config = {
      ...demoConfig,
      webhooks: [
        { url: 'http://127.0.0.1:9/hook', secret: 'env:TOOLGATE_TEST_UNSET_SECRET', events: ['turn.completed'] },
      ],
    } as typeof demoConfig;
    await expect(createServer({ config, storage })).rejects.toThrow(/TOOLGATE_TEST_UNSET_SECRET/);
    expect(await closedStore(storage)).toBe(true);
  });
});

describe('once listening', () => {
  it('an error of the listening server is a fault it logs, not a crash', async () => {
    const faults: unknown[] = [];
    const server = await createServer({ database: ':memory:', onError: (error) => faults.push(error) });
    try {
      await server.listen(0, '127.0.0.1');
      const error = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' });
      expect(() => server.httpServer.emit('error', error)).not.toThrow();
      expect(faults).toEqual([error]);
    } finally {
      await server.close();
    }
  });
});
