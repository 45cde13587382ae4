// What a backend hands the Store contract (StoreFactory), and the bookkeeping every role's cases share: a fresh store
// on a fresh database per test, other processes' stores on it through second(), and every one of them closed once
// after the test (unless the test closed it itself) before the database is dropped.
import { afterEach, beforeEach } from 'vitest';
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
   * Drops the database and releases whatever open() holds. The spec has closed `store` and every store second()
   * returned before it calls this: cleanup must not close them again.
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

/** What the role files' cases use: the test's store and what the harness does around it. */
export interface StoreHarness {
  /** The current test's store: a new one each test, so read it in a hook or a case, never when registering. */
  readonly store: Store;
  /** Another process's store on the same database. */
  second(options?: StoreOptions): Promise<Store>;
  /** Closes a store the test was handed; the harness then does not close it again. */
  close(s: Store): Promise<void>;
  /** The agents the turns belong to, as the server syncs them from its config before anything runs. */
  seedAgents(): Promise<void>;
  /** One SQL statement on the test's database (StoreUnderTest.sql). */
  sql(text: string): Promise<Record<string, unknown>[]>;
}

/** Installs the per-test hooks in the calling describe block and returns what its cases use. */
export function installStoreHarness(factory: StoreFactory): StoreHarness {
  let sut: StoreUnderTest | undefined;
  let store: Store;
  /** Every store the test was handed (second() included), closed after it unless the test closed one itself. */
  let opened: Store[] = [];
  let closed = new Set<Store>();

  async function close(s: Store): Promise<void> {
    if (closed.has(s)) return;
    closed.add(s);
    await s.close();
  }

  async function second(options?: StoreOptions): Promise<Store> {
    const other = await sut!.second(options);
    opened.push(other);
    return other;
  }

  beforeEach(async () => {
    sut = undefined;
    opened = [];
    closed = new Set();
    sut = await factory.open();
    store = sut.store;
    opened.push(store);
  });

  afterEach(async () => {
    // The second() stores first, then the first one; then the database goes.
    for (const s of opened.reverse()) await close(s);
    await sut?.cleanup();
  });

  async function seedAgents(): Promise<void> {
    await store.syncAgent(agentConfig(AGENT), at(0));
    await store.syncAgent(agentConfig(SIDE_AGENT), at(0));
  }

  return {
    get store() {
      return store;
    },
    second,
    close,
    seedAgents,
    sql: (text) => sut!.sql(text),
  };
}
