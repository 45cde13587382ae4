import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

/** What runs again on PostgreSQL: the suites that reach a store (the store spec has a file per backend). */
const POSTGRES_SUITES = [
  'test/app/**/*.test.ts',
  'test/mcp/**/*.test.ts',
  'test/graphql/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/observability/**/*.test.ts',
  'test/models/**/*.test.ts',
  'test/tools/**/*.test.ts',
  'test/agent/**/*.test.ts',
  'test/durability/**/*.test.ts',
  'test/notifiers/slack.test.ts',
  'test/embed.test.ts',
  // The receipts in webhook bodies, read from the chain at delivery.
  'test/webhooks/receipts.test.ts',
  // The inbox signed in through the identity provider, two reviewers answering in Chromium.
  'test/inbox/sign-in.test.ts',
];

/**
 * Left to SQLite: its WAL fsync (durable responses, its settings); the two-instance tests run on PostgreSQL in the
 * SQLite project already.
 */
const SQLITE_ONLY = [
  'test/http/durable-responses.test.ts',
  'test/durability/store.test.ts',
  'test/durability/instances.test.ts',
  'test/mcp/instances.test.ts',
  'test/mcp/withdrawal-instances.test.ts',
  'test/mcp/modern-instances.test.ts',
];

/**
 * Left to SQLite too: files under those folders that test something no store decides (response headers in Chromium,
 * identity tokens, a model provider, the MCP tool source, an MCP client and the stdio bridge in front of the gateway);
 * what their servers store, the gateway's and the API's files test on both. Rules, answers, races, crashes and the
 * fuzz run on both.
 */
const BACKEND_FREE = [
  'test/http/framing.test.ts',
  'test/http/oidc.test.ts',
  'test/models/openai-compatible.test.ts',
  'test/mcp/inspector-cli.test.ts',
  'test/mcp/stdio-bridge.test.ts',
  'test/tools/mcp.test.ts',
];

export default defineConfig({
  resolve: {
    // One graphql module for our code and the libraries: Yoga and Pothos load graphql's CommonJS build, vite would
    // give our code the ESM one, and Yoga tells an expected GraphQLError from a fault by instanceof (two classes:
    // every GraphQLError our resolvers throw would be masked as "Unexpected error." in tests only).
    alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }],
  },
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for what a server does next (a pause committed, an event delivered): its own default of one
    // second is missed under a busy run. A poll that must answer sooner says so.
    expect: { poll: { timeout: 10_000 } },
    // Tests that start servers and child processes run in separate forks. Half the suite's time is spent waiting
    // (for child processes, PostgreSQL's commits, timers), so it runs more forks than the machine has cores:
    // TOOLGATE_TEST_WORKERS sets how many.
    pool: 'forks',
    maxWorkers: Number(process.env.TOOLGATE_TEST_WORKERS) || 4,
    // A fork runs file after file without importing the server's modules anew for each (which cost about a third of
    // the suite's time). So a test file leaves no global changed: what it patches (a prototype, an env variable, a
    // timer) it restores in afterAll/afterEach.
    isolate: false,
    // One run, two backends: every file on SQLite, and again on PostgreSQL those whose behaviour goes through a
    // store (`vitest run --project postgres` runs only those). A fork serves one project, so a module that reads
    // TOOLGATE_TEST_BACKEND when it loads reads its project's.
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: POSTGRES_SUITES,
          exclude: [...SQLITE_ONLY, ...BACKEND_FREE],
          env: { TOOLGATE_TEST_BACKEND: 'postgres' },
        },
      },
    ],
  },
});
