// What the gateway's crash tests set up alike: per test a temporary directory holding the journal tool's runs file and
// the database (a file there, or a PostgreSQL database of its own), the MCP clients the test opened; after it, the
// clients closed, every fixture process killed and the directory removed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { FixtureOptions } from '../fixtures/durability-server.js';
import { TEST_BACKEND } from '../support/harness.js';
import { migratedPostgresDatabase } from '../support/postgres.js';
import { killAll } from './processes.js';

export interface GatewayCrashScene {
  /** This test's directory. */
  readonly dir: string;
  /** Its fixture options: the database, the runs file, and the scene's own options. */
  readonly base: FixtureOptions;
  /** Closes `client` after the test. */
  track<C extends { close(): Promise<void> }>(client: C): C;
}

/** Registers the set-up and clean-up of each test of the calling file; `options` go into every test's `base`. */
export function gatewayCrashScene(prefix: string, options: Partial<FixtureOptions> = {}): GatewayCrashScene {
  let dir = '';
  let base: FixtureOptions | undefined;
  const clients: { close(): Promise<void> }[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    const database = TEST_BACKEND === 'postgres' ? (await migratedPostgresDatabase()).url : join(dir, 'toolgate.db');
    base = { database, runsFile: join(dir, 'runs.log'), ...options };
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get base() {
      return base!;
    },
    track(client) {
      clients.push(client);
      return client;
    },
  };
}
