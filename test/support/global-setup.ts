// Vitest's global setup: names this test run (its PostgreSQL databases carry the name, test/support/postgres.ts) and,
// after the run, drops the databases it created.
import { dropTestDatabases, newTestRun } from './postgres.js';

export default function setup(): () => Promise<void> {
  const run = newTestRun();
  // Set before the test processes start: they inherit it.
  process.env.TOOLGATE_TEST_RUN = run;
  return () => dropTestDatabases(run);
}
