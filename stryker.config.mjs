// @ts-check
/**
 * Mutation testing of the money and admission code (`npm run mutate`, on demand; not part of
 * `npm test`). The score and the surviving mutants are written down in docs/testing.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.config.ts', related: true },
  mutate: [
    'packages/billing/src/**/*.ts',
    'packages/limiter/src/**/*.ts',
    'packages/gateway/src/credit-hold.ts',
    'packages/gateway/src/read-usage.ts',
    'packages/gateway/src/handle-*.ts',
    '!**/*.test.ts',
    '!**/index.ts',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  ignoreStatic: true,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
