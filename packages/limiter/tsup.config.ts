import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/store-kit.ts'],
  format: ['esm', 'cjs'],
  dts: { compilerOptions: { composite: false } },
  tsconfig: '../../tsconfig.build.json',
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
