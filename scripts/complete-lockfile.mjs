#!/usr/bin/env node
// The npm registry reachable here serves only some of rollup's platform packages, so `npm install`
// leaves the others out of package-lock.json, and npm 11's `npm ci` then refuses the lock
// ("Missing: @rollup/rollup-…@ from lock file"). This adds an entry (version, os, cpu, libc,
// optional) for each one missing; `npm ci` validates them and skips foreign platforms without a
// download. Run it after any `npm install` that rewrote the lock: `npm run lockfile`.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const rollup = packages['node_modules/rollup'];
const missing = Object.keys(rollup?.optionalDependencies ?? {})
  .filter((name) => name !== 'fsevents' && !packages[`node_modules/${name}`])
  .sort();

const entry = (name) => {
  const [os, cpu, ...rest] = name.split('/rollup-')[1].split('-');
  const libc = os === 'linux' ? { libc: [rest.some((part) => part.includes('musl')) ? 'musl' : 'glibc'] } : {};
  return { version: rollup.version, cpu: [cpu], dev: true, ...libc, license: 'MIT', optional: true, os: [os] };
};

if (missing.length > 0) {
  const lastRollup = Object.keys(packages)
    .filter((key) => key.startsWith('node_modules/@rollup/'))
    .sort()
    .at(-1);
  const out = {};
  for (const [key, value] of Object.entries(packages)) {
    out[key] = value;
    if (key === lastRollup) for (const name of missing) out[`node_modules/${name}`] = entry(name);
  }
  lock.packages = out;
  writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(`package-lock.json: ${missing.length} rollup platform entr${missing.length === 1 ? 'y' : 'ies'} added`);
