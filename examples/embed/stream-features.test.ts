import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from './test/pack-project';
import { runtimeBinary } from './test/run-embed';

// The web APIs the packages rely on, checked by use on every runtime of the matrix. All of them
// work everywhere, so no polyfill is loaded anywhere; docs/architecture.md's table says so and must
// match what the runtimes do.

const PROBE = fileURLToPath(new URL('./test/stream-features.mjs', import.meta.url));
const CI = process.env.CI === 'true';
const run = promisify(execFile);

/** The table of docs/architecture.md's "Web APIs on each runtime": feature -> [used by, Node, Bun, Deno]. */
function documented(): Map<string, string[]> {
  const text = readFileSync(`${ROOT}docs/architecture.md`, 'utf8');
  const section = text.slice(text.indexOf('## Web APIs on each runtime'));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n').slice(1)) {
    if (line.startsWith('## ')) break;
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length < 6 || cells[1] === 'Web API' || cells[1]!.startsWith('-')) continue;
    rows.set(cells[1]!.replace(/`/g, ''), cells.slice(2, -1));
  }
  return rows;
}

const runtimes = [
  { name: 'Node', column: 1, command: process.execPath, args: [PROBE] },
  { name: 'Bun', column: 2, command: runtimeBinary('bun'), args: [PROBE] },
  { name: 'Deno', column: 3, command: runtimeBinary('deno'), args: ['run', PROBE] },
];

describe('web stream features on each runtime', () => {
  for (const { name, column, command, args } of runtimes) {
    it.skipIf(!command && !CI)(
      `${name}: every feature works, as docs/architecture.md's table says`,
      async () => {
        expect(command, `${name}, a pinned devDependency, is not installed`).toBeDefined();
        const results = JSON.parse((await run(command!, args)).stdout) as Record<string, true | string>;
        const table = documented();
        expect([...table.keys()].sort()).toEqual(Object.keys(results).sort());
        for (const [feature, result] of Object.entries(results)) {
          const [usedBy, ...cells] = table.get(feature)!;
          // A feature the packages use must work (else a polyfill would be needed, loaded only on that runtime).
          if (usedBy !== '—') expect({ feature, works: result }).toEqual({ feature, works: true });
          expect({ feature, documented: cells[column - 1] }).toEqual({ feature, documented: result === true ? 'yes' : 'no' });
        }
      },
      30_000,
    );
  }
});
