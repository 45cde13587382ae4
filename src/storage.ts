// Which store a server uses, from TOOLGATE_DB or the config's `database` section: the only place outside the stores
// that knows there is more than one. A postgres:// URL is PostgreSQL (several instances on one database); anything
// else is an SQLite file (the embedded default).
import { firstLine, socketFailure } from './config/connection-errors.js';
import { ConfigError } from './config/load.js';
import type { DatabaseConfig } from './config/schema.js';
import { publicJwk, type DecisionRecord, type PublicJwk, type ReceiptSigner } from './domain/decision-records.js';
import type { DemoEntities } from './domain/demo-entities.js';
import type { Store } from './domain/store.js';
import type { WebhookOutbox, WebhookSubscription } from './domain/webhook-events.js';
import type { NotifierCards } from './domain/notifier-cards.js';
import { postgresDemoEntities } from './db/postgres/demo-entities.js';
import { postgresNotifierCards } from './db/postgres/notifier-cards.js';
import { sqliteNotifierCards } from './db/sqlite/notifier-cards.js';
import { PostgresStore } from './db/postgres/postgres-store.js';
import type { SqlStore } from './db/sql-store.js';
import { sqliteDemoEntities } from './db/sqlite/demo-entities.js';
import { openDatabase, SqliteStore, type SqliteStoreOptions } from './db/sqlite/sqlite-store.js';

export const DEFAULT_SQLITE_PATH = './data/toolgate.db';

/** An opened store and what lives beside it in the same database. */
export interface Storage {
  store: Store;
  /** The builtin demo tool source's entities. */
  demoEntities: DemoEntities;
  /** The chat cards notifier channels posted, and the signed requests they took (docs/slack.md). */
  notifierCards: NotifierCards;
  /** Host and database (PostgreSQL) or the file: for logs, never a password. */
  shown: string;
  /**
   * The clock every instance must agree on, where times of several hosts are compared (leases, expiry): PostgreSQL's
   * (this host's clock corrected by the measured offset, re-measured every minute); SQLite: this host's.
   */
  clock: () => Date;
  /** The webhook endpoints the store writes events for (none: it writes none), and who hears when it wrote some. */
  webhooks: WebhookOutboxSignal;
  /** The decision records whose time is within [from, to] (either null: open), in chain order (docs/receipts.md). */
  decisionRecords(from: string | null, to: string | null): Promise<DecisionRecord[]>;
  /** The public keys of the decision records (a JWKS's keys): the configured ones, or the generated one. */
  receiptKeys: PublicJwk[];
  close(): Promise<void>;
}

export interface WebhookOutboxSignal {
  subscriptions: readonly WebhookSubscription[];
  /** `listener` runs after each commit that wrote outbox rows (the deliverer's nudge); returns its removal. */
  onWritten(listener: () => void): () => void;
}

export interface StorageSelection {
  /** The config file's `database` section, if any. */
  config?: DatabaseConfig;
  /** The config file (for messages), or null. */
  configFile?: string | null;
  /** The environment to read TOOLGATE_DB from (the CLI passes process.env). */
  env?: Record<string, string | undefined>;
  /** SQLite only; see SqliteStoreOptions. */
  sqlite?: SqliteStoreOptions;
  /** The config's webhook endpoints: which events the store writes to the outbox, and for which URL. */
  webhooks?: readonly WebhookSubscription[];
  /** The configured signing keys of the decision records, the first signs; none: one generated in the database. */
  receiptKeys?: readonly ReceiptSigner[];
}

export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** TOOLGATE_DB, else the config's `database.url`, else ./data/toolgate.db. */
export function storageTarget(selection: StorageSelection): { target: string; where: string } {
  const fromEnv = selection.env?.TOOLGATE_DB;
  if (fromEnv) return { target: fromEnv, where: 'TOOLGATE_DB' };
  if (selection.config)
    return { target: selection.config.url, where: `${selection.configFile ?? '<config>'}: database.url` };
  return { target: DEFAULT_SQLITE_PATH, where: 'TOOLGATE_DB' };
}

/**
 * Opens the store (migrations applied). PostgreSQL is reached now: an unreachable one, or a refused login, is a
 * one-line ConfigError naming host, port and what failed, and nothing starts.
 */
export async function openStorage(target: string, where: string, selection: StorageSelection = {}): Promise<Storage> {
  const { outbox, signal: webhooks } = webhookOutbox(selection.webhooks ?? []);
  if (!isPostgresUrl(target)) {
    // A path that cannot be a database (a directory in the way, no permission, a file of something else, a database
    // of a newer release) is one line naming where it came from, like an unreachable PostgreSQL.
    let sqlite: ReturnType<typeof openDatabase> | null = null;
    let store: SqliteStore;
    try {
      sqlite = openDatabase({ path: target });
      store = new SqliteStore(sqlite, { ...selection.sqlite, webhooks: outbox });
    } catch (error) {
      sqlite?.close();
      throw new ConfigError(`${where}: the SQLite database ${target} cannot be opened (${firstLine(error)})`);
    }
    const receiptKeys = await signDecisions(store, selection);
    return {
      store,
      receiptKeys,
      demoEntities: sqliteDemoEntities(sqlite, (work) => store.transaction(work)),
      notifierCards: sqliteNotifierCards(sqlite, (work) => store.transaction(work)),
      shown: target,
      clock: () => new Date(),
      webhooks,
      decisionRecords: (from, to) => store.decisionRecords(from, to),
      close: () => store.close(),
    };
  }
  const shown = showPostgres(target, where);
  const options = { poolSize: selection.config?.poolSize, webhooks: outbox };
  const store = await PostgresStore.open(target, options).catch((error: unknown) => {
    throw new ConfigError(`${where}: PostgreSQL at ${shown} cannot be reached (${describe(error)})`);
  });
  try {
    const demoEntities = await postgresDemoEntities(store.pool);
    const receiptKeys = await signDecisions(store, selection);
    let offsetMs = await store.clockOffsetMs();
    // Re-measured now and then (clocks drift); a failed measurement keeps the last one.
    const timer = setInterval(() => {
      store.clockOffsetMs().then(
        (measured) => (offsetMs = measured),
        () => {},
      );
    }, 60_000).unref();
    return {
      store,
      demoEntities,
      notifierCards: postgresNotifierCards(store.pool),
      receiptKeys,
      shown,
      clock: () => new Date(Date.now() + offsetMs),
      webhooks,
      decisionRecords: (from, to) => store.decisionRecords(from, to),
      close: async () => {
        clearInterval(timer);
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** Makes the store sign its decision records with the first configured key, or the generated one; the public keys. */
async function signDecisions(store: SqlStore, selection: StorageSelection): Promise<PublicJwk[]> {
  const configured = selection.receiptKeys ?? [];
  const signer = configured[0] ?? (await store.generatedReceiptKey(new Date().toISOString()));
  const published = (configured.length ? configured : [signer]).map(publicJwk);
  store.recordDecisions(signer, published);
  return published;
}

/** The store's side of the webhook endpoints, and the server's: told after each commit that wrote deliveries. */
function webhookOutbox(subscriptions: readonly WebhookSubscription[]): {
  outbox: WebhookOutbox;
  signal: WebhookOutboxSignal;
} {
  const listeners = new Set<() => void>();
  return {
    outbox: {
      subscriptions,
      written: () => {
        for (const listener of listeners) listener();
      },
    },
    signal: {
      subscriptions,
      onWritten(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
  };
}

/** Host, port and database as shown in messages and logs (never user or password). */
function showPostgres(url: string, where: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${where}: not a URL; expected postgres://user@host:port/database`);
  }
  return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}${parsed.pathname || '/'}`;
}

/** Why a connection or the migration failed, in words. */
function describe(error: unknown): string {
  const socket = socketFailure(error);
  if (socket) return socket;
  const message = firstLine(error);
  if (/timeout/i.test(message)) return 'connection timed out';
  if ((error as { code?: unknown }).code === '28P01') return 'authentication failed';
  // PostgreSQL's own words for the rest (role or database missing, ...).
  return message;
}
