#!/usr/bin/env node
/**
 * Bundles the reference server and its CLI (examples/server/src/cli.ts with the @tollgate/*
 * workspace sources, resolved through tsconfig.json's paths) into examples/server/dist/ with
 * esbuild, so `npm start` runs plain JavaScript on `node` instead of TypeScript through tsx's
 * loader (some 40 MB less RSS; docs/benchmarks.md). npm packages stay external: better-sqlite3 is
 * native, the others (postgres, ioredis, hono, valibot, turndown…) load from node_modules as they
 * do under tsx. Splitting keeps the HTML-to-Markdown converter in its own chunk, loaded on first
 * use as in the packages' own builds. Writes source maps next to the bundle.
 *
 * Run: `node scripts/build-server.mjs` (npm start runs it first, as `prestart`).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = fileURLToPath(new URL('../examples/server/dist/', import.meta.url));
const started = performance.now();
rmSync(outdir, { recursive: true, force: true });
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // esbuild is a devDependency: an install without them (`npm install --omit=dev`) gets a bundle
  // that runs the CLI through tsx (a dependency of the server), as before there was a build.
  mkdirSync(outdir, { recursive: true });
  writeFileSync(
    new URL('tollgate.mjs', `file://${outdir}`),
    "// esbuild was not installed: the CLI through tsx (scripts/build-server.mjs).\nimport '../bin/tollgate.mjs';\n",
  );
  process.stderr.write('build-server: esbuild is not installed (npm install without dev dependencies?): the server runs through tsx\n');
  process.exit(0);
}
await esbuild.build({
  absWorkingDir: root,
  // The entry: the CLI's main() on the process's arguments, exiting with its code (as bin/tollgate.mjs does under tsx).
  stdin: {
    contents: "import { main } from './src/cli.ts';\nconst code = await main(process.argv.slice(2));\nif (code !== 0) process.exit(code);\n",
    resolveDir: fileURLToPath(new URL('../examples/server/', import.meta.url)),
    sourcefile: 'examples/server/bin/tollgate-bundle-entry.mjs',
    loader: 'js',
  },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir,
  entryNames: 'tollgate',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  tsconfig: 'tsconfig.json',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
if (process.argv.includes('--verbose')) process.stderr.write(`built ${outdir} in ${Math.round(performance.now() - started)} ms\n`);
