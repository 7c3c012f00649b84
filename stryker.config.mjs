// @ts-check
/**
 * Mutation testing of the money and admission code (`npm run mutate`, on demand; not part of
 * `npm test`). How to run it by area, the scores and the surviving mutants: docs/testing.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.config.ts', related: true },
  mutate: [
    'packages/billing/src/**/*.ts',
    'packages/limiter/src/**/*.ts',
    'packages/gateway/src/admit-metered.ts',
    'packages/gateway/src/credit-hold.ts',
    'packages/gateway/src/read-usage.ts',
    'packages/gateway/src/chat-delivered-cost.ts',
    'packages/gateway/src/checkpoints.ts',
    'packages/gateway/src/metered-stream.ts',
    'packages/gateway/src/handle-*.ts',
    // What a stream delivered and its usage (charged from), and the chunks they are read from.
    'packages/gateway/src/chat-sse-format.ts',
    'packages/providers/src/openai/chat-chunk-template.ts',
    // The default store's money statements and rules, and the group commit they run in.
    'packages/store-sqlite/src/sqlite-store.ts',
    'packages/store-sqlite/src/write-batch.ts',
    '!**/*.test.ts',
    '!**/index.ts',
  ],
  // The unit tests of the money code only: the pack test, the Bun/Deno runs, PostgreSQL, Redis and
  // the reliability scenarios run built packages or child processes, which Stryker cannot switch
  // mutants in, and would make every run take hours. (Stryker's testFiles has no negation.)
  testFiles: [
    'packages/billing/src/**/*.test.ts',
    'packages/limiter/src/**/*.test.ts',
    'packages/gateway/src/*.test.ts',
    'packages/store-sqlite/src/sqlite-store.test.ts',
    'packages/store-sqlite/src/write-batch.test.ts',
    'packages/providers/src/openai/*.test.ts',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  ignoreStatic: true,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
