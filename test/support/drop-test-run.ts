// Drops the PostgreSQL databases of one test run (its mark as the argument). The global teardown starts it as a
// process of its own and does not wait: the run's verdict does not depend on PostgreSQL's checkpoints.
import { dropTestDatabases } from './postgres.js';

await dropTestDatabases(process.argv[2] ?? '');
