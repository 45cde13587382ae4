import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // One graphql module for our code and the libraries: Yoga and Pothos load graphql's CommonJS build, vite would
    // give our code the ESM one, and Yoga tells an expected GraphQLError from a fault by instanceof (two classes:
    // every GraphQLError our resolvers throw would be masked as "Unexpected error." in tests only).
    alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests that start servers and child processes run in separate forks; two cores here.
    pool: 'forks',
    maxWorkers: 2,
    // A fork runs file after file without importing the server's modules anew for each (which cost about a third of
    // the suite's time). So a test file leaves no global changed: what it patches (a prototype, an env variable, a
    // timer) it restores in afterAll/afterEach.
    isolate: false,
  },
});
