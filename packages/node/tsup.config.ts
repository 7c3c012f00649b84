import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // The one package built against Node's own types: it is the Node adapter.
  dts: { compilerOptions: { composite: false, types: ['node'] } },
  tsconfig: '../../tsconfig.build.json',
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
