import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.ts';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the sources, so no build is needed before `npm test`.
    alias: [
      { find: '@tollgate/testing/server', replacement: `${root}packages/testing/test/server.ts` },
      { find: '@tollgate/testing/store-contract', replacement: `${root}packages/testing/src/store-contract.ts` },
      { find: '@tollgate/billing/store-kit', replacement: `${root}packages/billing/src/store-kit.ts` },
      { find: '@tollgate/limiter/store-kit', replacement: `${root}packages/limiter/src/store-kit.ts` },
      { find: /^@tollgate\/([a-z-]+)$/, replacement: `${root}packages/$1/src/index.ts` },
    ],
  },
  test: {
    projects,
    testTimeout: 20_000,
    hookTimeout: 120_000,
  },
});
