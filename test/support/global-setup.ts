// Vitest's global setup: names this test run (its PostgreSQL databases carry the name, test/support/postgres.ts),
// bundles the entry points that tests start as processes (test/support/entries.ts) and, after the run, starts the drop
// of the databases it created in a process it leaves running: each DROP waits for a checkpoint, and the run's verdict
// need not wait for them all.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bundleEntries } from './entries.js';
import { newTestRun } from './postgres.js';

const DROPPER = fileURLToPath(new URL('./drop-test-run.ts', import.meta.url));

export default function setup(): (() => void) | undefined {
  // Vitest calls it once for the run and once per project: the first call does the work, its teardown ends the run.
  if (process.env.TOOLGATE_TEST_SETUP === String(process.pid)) return undefined;
  process.env.TOOLGATE_TEST_SETUP = String(process.pid);
  const run = newTestRun();
  // Set before the test processes start: they inherit it.
  process.env.TOOLGATE_TEST_RUN = run;
  bundleEntries();
  return () => {
    spawn(process.execPath, ['--import', 'tsx', DROPPER, run], { detached: true, stdio: 'ignore' }).unref();
  };
}
