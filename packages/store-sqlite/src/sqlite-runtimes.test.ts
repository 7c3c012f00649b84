/**
 * One file, one suite, every driver: the Store contract under Bun (bun:sqlite) and Deno
 * (node:sqlite) as child processes, each also opening a file better-sqlite3 wrote; and the three
 * runtimes holding on one file at once. Vitest's own run covers better-sqlite3
 * (sqlite-store.test.ts). Under CI=true a missing runtime fails instead of skipping.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { hashKey } from '@tollgate/billing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { betterSqlite3Driver } from './better-sqlite3-driver';
import { sqliteStore } from './sqlite-store';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
const suite = fileURLToPath(new URL('../test/sqlite-store.runtime.ts', import.meta.url));
const denoConfig = fileURLToPath(new URL('../test/deno.json', import.meta.url));
const worker = join(here, 'sqlite-hold-worker.ts');
const bun = join(root, 'node_modules/.bin/bun');
const deno = join(root, 'node_modules/.bin/deno');
const required = process.env.CI === 'true';

/** Runs a command to its end, whatever its exit code; output without colours. */
async function run(command: string, args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { cwd: root, env: { ...process.env, NO_COLOR: '1', ...env }, maxBuffer: 16 << 20 });
    return { code: 0, output: plain(stdout + stderr), stdout };
  } catch (error) {
    const failed = error instanceof Error ? error : new Error(String(error));
    const field = (name: string) => String(Reflect.get(failed, name) ?? '');
    return { code: Number(Reflect.get(failed, 'code') ?? 1), output: plain(field('stdout') + field('stderr') + failed.message), stdout: field('stdout') };
  }
}

function plain(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes, should a runtime ignore NO_COLOR.
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/** The runtime's binary, or why the test cannot run: skipped locally, failed under CI. */
function runtime(binary: string) {
  return { available: existsSync(binary), skip: !existsSync(binary) && !required };
}

describe('SQLite drivers on every runtime', () => {
  let dir: string;
  let shared: string;
  let keyHash: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-sqlite-runtimes-'));
    shared = join(dir, 'shared.db');
    const store = sqliteStore(shared, { driver: betterSqlite3Driver() });
    await store.createAccount({ plan: 'plus', id: 'acc_shared' });
    await store.addCredits('acc_shared', 1_000, { by: 'better-sqlite3' });
    keyHash = await hashKey((await store.createKey('acc_shared', 'shared')).key);
    await store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The credits each runtime appended to the shared file, read back with better-sqlite3. */
  async function creditsBy(name: string) {
    const store = sqliteStore(shared, { driver: betterSqlite3Driver() });
    try {
      const entries = await store.entries('acc_shared');
      expect((await store.getBalance('acc_shared')).balance).toBe(entries.reduce((sum, entry) => sum + entry.micros, 0));
      return entries.filter((entry) => entry.meta?.by === name).map((entry) => entry.micros);
    } finally {
      await store.close();
    }
  }

  const env = () => ({ TOLLGATE_SQLITE_SHARED_FILE: shared, TOLLGATE_SQLITE_SHARED_KEY_HASH: keyHash });

  it.skipIf(runtime(bun).skip)(
    'bun:sqlite passes the Store contract under Bun and opens the file better-sqlite3 wrote',
    async () => {
      expect(runtime(bun).available, `no Bun at ${bun}`).toBe(true);
      const result = await run(bun, ['test', suite], env());
      expect(result.code, result.output).toBe(0);
      expect(result.output).toMatch(/\(pass\) store contract: sqlite file \(bun:sqlite\)/);
      expect(Number(/(\d+) pass/.exec(result.output)?.[1])).toBeGreaterThanOrEqual(21);
      expect(result.output).toMatch(/\b0 fail/);
      expect(await creditsBy('bun:sqlite')).toEqual([10]);
    },
    60_000,
  );

  it.skipIf(runtime(deno).skip)(
    'node:sqlite passes the Store contract under Deno and opens the file better-sqlite3 wrote',
    async () => {
      expect(runtime(deno).available, `no Deno at ${deno}`).toBe(true);
      const result = await run(deno, ['test', '-A', '--no-check', '--config', denoConfig, suite], env());
      expect(result.code, result.output).toBe(0);
      expect(result.output).toMatch(/store contract: sqlite file \(node:sqlite\) \.\.\. ok/);
      const summary = /ok \| (\d+) passed \((\d+) steps\) \| 0 failed/.exec(result.output);
      expect(summary, result.output).not.toBeNull();
      expect(Number(summary?.[2])).toBeGreaterThanOrEqual(21);
      expect(await creditsBy('node:sqlite')).toEqual([10]);
    },
    60_000,
  );

  it.skipIf(runtime(bun).skip || runtime(deno).skip)(
    'never holds more than the balance when Node, Bun and Deno hold on one file at once',
    async () => {
      const path = join(dir, 'holds.db');
      const store = sqliteStore(path);
      const account = await store.createAccount({ plan: 'free' });
      await store.addCredits(account.id, 1_000);
      const args = [path, account.id, '50', '7'];
      const outputs = await Promise.all([
        run(process.execPath, ['--import', 'tsx', worker, ...args]),
        run(bun, [worker, ...args]),
        run(deno, ['run', '-A', '--no-check', '--config', denoConfig, worker, ...args]),
      ]);
      for (const output of outputs) expect(output.code, output.output).toBe(0);
      const results = outputs.map((output) => JSON.parse(output.stdout) as { held: number; driver: string });
      expect(results.map((result) => result.driver)).toEqual(['better-sqlite3', 'bun:sqlite', 'node:sqlite']);
      expect(results.reduce((sum, result) => sum + result.held, 0)).toBe(994);
      expect(await store.getBalance(account.id)).toEqual({ balance: 1_000, held: 994, available: 6 });
      await store.close();
    },
    60_000,
  );
});
