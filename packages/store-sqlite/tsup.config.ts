import { defineConfig } from 'tsup';

export default defineConfig({
  // One entry per driver beside the runtime-picking main one; drivers load their module on first open.
  entry: ['src/index.ts', 'src/bun.ts', 'src/node-sqlite.ts', 'src/better-sqlite3.ts'],
  format: ['esm', 'cjs'],
  dts: { compilerOptions: { composite: false } },
  tsconfig: '../../tsconfig.build.json',
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // The CommonJS build has no import.meta.url; load-module.ts needs it for createRequire.
  shims: true,
});
