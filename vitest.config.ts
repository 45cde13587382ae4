import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

/**
 * What runs again on PostgreSQL: what a store decides. The use cases and the loop over it, the durability promises
 * (crash, races, recovery) and, of the API's files, those whose outcome is a store's: what runs once, what a read
 * returns and to whom, expiry and escalation found by a query, events published from what a commit counted, and the
 * provider-backed identity tests. The store spec has files of its own per backend (test/db/).
 */
const POSTGRES_SUITES = [
  'test/app/**/*.test.ts',
  'test/agent/**/*.test.ts',
  'test/durability/**/*.test.ts',
  'test/embed.test.ts',
  // Every mutation fuzzed; one user's data hidden from another; a server closing under its requests; two instances.
  'test/http/fuzz.test.ts',
  'test/http/isolation.test.ts',
  'test/http/shutdown.test.ts',
  'test/http/redis-instances.test.ts',
  'test/http/streamed-text-redis.test.ts',
  'test/http/turn-events-end.test.ts',
  // Answers, steps and their order, supersede, expiry, escalation, keys, a restart, the readers and their pages.
  'test/graphql/answers.test.ts',
  'test/graphql/steps.test.ts',
  'test/graphql/supersede.test.ts',
  'test/graphql/expiry.test.ts',
  'test/graphql/escalation.test.ts',
  'test/graphql/idempotency.test.ts',
  'test/graphql/restart.test.ts',
  'test/graphql/background.test.ts',
  'test/graphql/pagination.test.ts',
  'test/graphql/loaders.test.ts',
  'test/graphql/audit.test.ts',
  'test/graphql/edit-accept.test.ts',
  // The gating a turn starts with, against an update committed beside it.
  'test/graphql/gating.test.ts',
  // Approvers: quorum, remembered approvals, step-up, and what is published once an answer is counted.
  'test/graphql/approvers.test.ts',
  'test/graphql/approval-grants.test.ts',
  'test/graphql/passkey-step-up.test.ts',
  'test/graphql/approver-events.test.ts',
  'test/graphql/approver-subscriptions.test.ts',
  // The gateway's calls: answered in two places at once, tasks, input_required, a caller leaving, closing, receipts.
  'test/mcp/gateway.test.ts',
  'test/mcp/tasks.test.ts',
  'test/mcp/modern.test.ts',
  'test/mcp/withdrawal.test.ts',
  'test/mcp/closing.test.ts',
  'test/mcp/receipts.test.ts',
  // Readiness reads the database; the pending gauge is read from it.
  'test/observability/health.test.ts',
  'test/observability/metrics.test.ts',
  // The outbox's claims: webhooks with their receipts, Slack's cards.
  'test/webhooks/receipts.test.ts',
  'test/notifiers/slack.test.ts',
  // Identities from the OpenID provider, on both backends: its tokens and the bad ones refused, the inbox signed in in
  // Chromium, an MCP client's OAuth.
  'test/http/oidc.test.ts',
  'test/graphql/identity.test.ts',
  'test/http/inbox-session.test.ts',
  'test/inbox/sign-in.test.ts',
  'test/mcp/oauth.test.ts',
];

/** Of those, left to SQLite: its WAL fsync; the two-instance tests run on PostgreSQL in the SQLite project already. */
const SQLITE_ONLY = ['test/durability/store.test.ts', 'test/durability/instances.test.ts'];

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
          exclude: SQLITE_ONLY,
          env: { TOOLGATE_TEST_BACKEND: 'postgres' },
        },
      },
    ],
  },
});
