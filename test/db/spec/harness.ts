// What a backend hands the Store contract (StoreFactory), and the one fixture builder every role's cases are written
// with (storeSpec): vitest test functions whose context holds a store on a fresh database of the test's own, other
// processes' stores on it through second(), every one of them closed once after the test (unless the test closed it
// itself) before the database is cleaned up.
import { test, type TestAPI } from 'vitest';
import type { Store } from '../../../src/domain/store.js';
import type { WebhookOutbox } from '../../../src/domain/webhook-events.js';
import { AGENT, agentConfig, at, SIDE_AGENT } from './fixtures.js';

export interface StoreUnderTest {
  /** A store on a fresh, migrated, empty database of its own. */
  store: Store;
  /**
   * A second store instance on the SAME database (another process's view), for concurrency cases; with `options`,
   * one opened with them (webhooks: the endpoints whose events it writes).
   */
  second(options?: StoreOptions): Promise<Store>;
  /**
   * Runs one SQL statement on `store`'s database as written (no parameters): its rows. Only for what the Store does not
   * read, or states it no longer writes (rows an earlier version left).
   */
  sql(text: string): Promise<Record<string, unknown>[]>;
  /**
   * Drops the database (or empties it for reuse) and releases whatever open() holds. The spec has closed `store` and
   * every store second() returned before it calls this: cleanup must not close them again.
   */
  cleanup(): Promise<void>;
}

/** What a store may be opened with, beside its database. */
export interface StoreOptions {
  webhooks?: WebhookOutbox;
}

export interface StoreFactory {
  name: string;
  open(): Promise<StoreUnderTest>;
}

/** What a case of the contract gets in its test context. */
export interface StoreContext {
  /** The test's store, on a fresh, migrated database of its own. */
  store: Store;
  /** Another process's store on the same database. */
  second(options?: StoreOptions): Promise<Store>;
  /** Closes a store the test was handed; it is then not closed again after the test. */
  close(s: Store): Promise<void>;
  /** One SQL statement on the test's database (StoreUnderTest.sql). */
  sql(text: string): Promise<Record<string, unknown>[]>;
}

export interface StoreSpec {
  /** A case whose database holds the agents the turns belong to, as the server syncs them before anything runs. */
  it: TestAPI<StoreContext>;
  /** A case on an empty database. */
  itEmpty: TestAPI<StoreContext>;
}

/** The per-test database behind the context: the stores it handed out, closed after the test unless already closed. */
interface Opened {
  sut: StoreUnderTest;
  stores: Store[];
  closed: Set<Store>;
}

/** The test functions the role files write their cases with, on `factory`'s backend. */
export function storeSpec(factory: StoreFactory): StoreSpec {
  const closeOnce = async (opened: Opened, s: Store) => {
    if (opened.closed.has(s)) return;
    opened.closed.add(s);
    await s.close();
  };
  const itEmpty = test.extend<StoreContext & { opened: Opened }>({
    // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
    opened: async ({}, use) => {
      const sut = await factory.open();
      const opened: Opened = { sut, stores: [sut.store], closed: new Set() };
      await use(opened);
      // The second() stores first, then the first one; then the database goes.
      for (const s of opened.stores.reverse()) await closeOnce(opened, s);
      await sut.cleanup();
    },
    store: async ({ opened }, use) => use(opened.sut.store),
    second: async ({ opened }, use) =>
      use(async (options) => {
        const other = await opened.sut.second(options);
        opened.stores.push(other);
        return other;
      }),
    close: async ({ opened }, use) => use((s) => closeOnce(opened, s)),
    sql: async ({ opened }, use) => use((text) => opened.sut.sql(text)),
  });
  const it = itEmpty.extend<{ agents: void }>({
    agents: [
      async ({ store }, use) => {
        await store.syncAgent(agentConfig(AGENT), at(0));
        await store.syncAgent(agentConfig(SIDE_AGENT), at(0));
        await use();
      },
      { auto: true },
    ],
  });
  return { it, itEmpty };
}
