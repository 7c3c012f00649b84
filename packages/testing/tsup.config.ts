import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/server.ts', 'src/store-contract.ts'],
  format: ['esm', 'cjs'],
  // server.ts is the one file here allowed node:* (the loopback HTTP server), so its .d.ts needs node's types.
  dts: { compilerOptions: { composite: false, types: ['node'] } },
  tsconfig: '../../tsconfig.build.json',
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
