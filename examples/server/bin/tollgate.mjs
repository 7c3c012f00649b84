#!/usr/bin/env node
// The tollgate CLI: runs the TypeScript sources through tsx (in this process, so signals reach
// the server directly), resolving @tollgate/* to the workspace sources: no build step needed.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../../../tsconfig.json', import.meta.url)) });
const { main } = await import('../src/cli.ts');
const code = await main(process.argv.slice(2));
if (code !== 0) process.exit(code);
