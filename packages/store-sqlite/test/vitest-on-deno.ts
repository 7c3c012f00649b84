/**
 * `vitest` for `deno test` (deno.json maps the import here), so the Store contract suite runs
 * unchanged on Deno: describe/it and the hooks of node:test, which Deno runs as its own tests, and Vitest's own
 * `expect` (its chai plugins), so every matcher means what it means under Vitest.
 */
import { ASYMMETRIC_MATCHERS_OBJECT, JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';
import * as chai from 'chai';

export { after as afterAll, afterEach, before as beforeAll, beforeEach, describe, it } from 'node:test';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

/** Vitest's `expect`, with its asymmetric matchers (`expect.any`, `expect.stringMatching`, ...). */
export const expect = Object.assign(
  (value: unknown, message?: string) => chai.expect(value, message),
  chai.expect,
  Reflect.get(globalThis, ASYMMETRIC_MATCHERS_OBJECT),
);
