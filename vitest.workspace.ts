/**
 * The test projects: one per package, plus the reference server and the benches' smoke test.
 * Vitest 4 no longer reads workspace files, so `vitest.config.ts` imports this list as `test.projects`.
 */
const packages = [
  'core',
  'sse',
  'validator',
  'limiter',
  'billing',
  'providers',
  'node',
  'testing',
  'gateway',
  'store-sqlite',
  'store-postgres',
  'store-redis',
] as const;

export const projects = [
  ...packages.map((name) => ({
    extends: true as const,
    test: {
      name,
      include: [`packages/${name}/src/**/*.test.ts`, `packages/${name}/test/**/*.test.ts`],
      exclude: ['**/*.case.test.ts', '**/node_modules/**', '**/dist/**'],
    },
  })),
  {
    extends: true as const,
    test: {
      name: 'server',
      include: ['examples/server/src/**/*.test.ts', 'bench/**/*.test.ts'],
      exclude: ['**/*.case.test.ts', '**/node_modules/**'],
    },
  },
  {
    // The embedding examples of docs/embedding.md, run from the packed tarballs on Node, Bun and Deno.
    extends: true as const,
    test: {
      name: 'embed',
      include: ['examples/embed/**/*.test.ts'],
      exclude: ['**/node_modules/**'],
    },
  },
  {
    // The reliability suite's short form (issue #20): scenarios against the reference server in child processes.
    extends: true as const,
    test: {
      name: 'reliability',
      include: ['reliability/**/*.test.ts'],
      exclude: ['**/node_modules/**'],
      testTimeout: 180_000,
      hookTimeout: 180_000,
    },
  },
];
