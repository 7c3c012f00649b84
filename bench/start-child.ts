/**
 * Starts a bench child process (a TypeScript file run through tsx, or bundled first as `npm start`'s
 * server is) and waits for the one JSON line it prints when it is ready. Closing its stdin asks it to stop.
 */
import { spawn } from 'node:child_process';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** A running child and what it announced. */
export interface Child<T> {
  info: T;
  /** The child's process id (the servers' CPU time is read from /proc/<pid>/stat). */
  pid: number;
  /** Closes the child's stdin and resolves when it has exited. */
  stop(): Promise<void>;
}

const root = fileURLToPath(new URL('..', import.meta.url));

/** Where bundled children are written: inside node_modules, so their npm packages resolve as the sources' do. */
const BUNDLES = join(root, 'node_modules', '.cache', 'tollgate-bench');

/**
 * `file` bundled with its workspace sources into one ES module, as scripts/build-server.mjs
 * bundles the reference server for `npm start`: esbuild, the @tollgate/* sources through
 * tsconfig.json's paths, npm packages external, and no `keepNames`. Under tsx every named function
 * made at run time goes through esbuild's `__name` helper (an `Object.defineProperty` per closure:
 * some 10 µs per streamed request, docs/benchmarks.md), which the server as shipped does not pay.
 */
export async function bundleChild(file: string): Promise<string> {
  const outfile = join(BUNDLES, `${basename(file, '.ts')}.mjs`);
  await build({
    absWorkingDir: root,
    entryPoints: [file],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: 'tsconfig.json',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * Whether the benches run the servers' process bundled ({@link bundleChild}), as `npm start` runs the
 * reference server: yes, unless `BENCH_SERVERS=tsx` asks for the sources through tsx (as the
 * benches ran before 2026-11-27).
 */
export const SERVERS_BUNDLED = process.env.BENCH_SERVERS !== 'tsx';

/** Options of {@link startChild}. */
export interface StartChildOptions {
  /** Run the child as a bundle ({@link bundleChild}) on plain `node`, not through tsx. */
  bundled?: boolean;
}

/**
 * Runs `node [nodeArgs] --import tsx <file> [args]` (or, `bundled`, `node [nodeArgs] <bundle of
 * file> [args]`) from the repository root. `BENCH_CHILD_IMPORT`
 * names a module every child preloads first (`--import`), e.g. one that logs
 * `process.memoryUsage()` to stderr each second while a bench runs.
 *
 * @example
 * const upstream = await startChild<{ url: string }>('bench/fake-upstream-process.ts');
 * await upstream.stop();
 */
export async function startChild<T>(file: string, args: string[] = [], nodeArgs: string[] = [], options: StartChildOptions = {}): Promise<Child<T>> {
  const script = options.bundled ? [await bundleChild(file)] : ['--import', 'tsx', file];
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...(process.env.BENCH_CHILD_IMPORT ? ['--import', process.env.BENCH_CHILD_IMPORT] : []), ...script, ...args],
    {
      cwd: root,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<T>((resolve, reject) => {
    lines.once('line', (line) => {
      try {
        resolve(JSON.parse(line) as T);
      } catch (error) {
        reject(error);
      }
    });
    child.once('exit', (code) => reject(new Error(`${file} exited (${code}) before it was ready`)));
    child.once('error', reject);
  });
  return {
    info,
    pid: child.pid!,
    stop: () => {
      child.stdin!.end();
      return exited;
    },
  };
}
