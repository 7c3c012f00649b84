import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from './test/pack-project';

// docs/embedding.md shows the examples of this folder; pack.test.ts runs these files. Each must
// appear on the page exactly as it is, so the page cannot drift from what is tested.
const page = readFileSync(`${ROOT}docs/embedding.md`, 'utf8');

describe('docs/embedding.md', () => {
  for (const file of ['gateway.ts', 'node-hono.ts', 'node-http.ts', 'bun.ts', 'deno.ts']) {
    it(`shows examples/embed/${file} unchanged`, () => {
      const source = readFileSync(`${ROOT}examples/embed/${file}`, 'utf8').trimEnd();
      expect(page).toContain(`\`\`\`ts\n// ${file}\n${source}\n\`\`\``);
    });
  }
});
