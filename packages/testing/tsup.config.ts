import { defineConfig } from 'tsup';

export default defineConfig({
  // store-contract runs on vitest, which is ESM only: package.json offers it to `import` alone
  // (its CommonJS build is emitted with the rest but never exported).
  entry: ['src/index.ts', 'src/store-contract.ts'],
  format: ['esm', 'cjs'],
  dts: { compilerOptions: { composite: false } },
  tsconfig: '../../tsconfig.build.json',
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
