// Vitest's global setup: after the run, drop the PostgreSQL databases the tests created (test/support/postgres.ts).
import { dropTestDatabases } from './postgres.js';

export default function setup(): () => Promise<void> {
  return dropTestDatabases;
}
