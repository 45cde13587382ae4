// Vitest's global setup: names this test run (its PostgreSQL databases carry the name, test/support/postgres.ts),
// bundles the entry points that tests start as processes (test/support/entries.ts) and, after the run, drops the
// databases it created.
import { bundleEntries } from './entries.js';
import { dropTestDatabases, newTestRun } from './postgres.js';

export default function setup(): (() => Promise<void>) | undefined {
  // Vitest calls it once for the run and once per project: the first call does the work, its teardown ends the run.
  if (process.env.TOOLGATE_TEST_SETUP === String(process.pid)) return undefined;
  process.env.TOOLGATE_TEST_SETUP = String(process.pid);
  const run = newTestRun();
  // Set before the test processes start: they inherit it.
  process.env.TOOLGATE_TEST_RUN = run;
  bundleEntries();
  return () => dropTestDatabases(run);
}
