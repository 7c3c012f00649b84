/**
 * Starts a bench child process (a TypeScript file run through tsx) and waits for the one JSON line
 * it prints when it is ready. Closing its stdin asks it to stop.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A running child and what it announced. */
export interface Child<T> {
  info: T;
  /** The child's process id (the servers' CPU time is read from /proc/<pid>/stat). */
  pid: number;
  /** Closes the child's stdin and resolves when it has exited. */
  stop(): Promise<void>;
}

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs `node [nodeArgs] --import tsx <file> [args]` from the repository root. `BENCH_CHILD_IMPORT`
 * names a module every child preloads first (`--import`), e.g. one that logs
 * `process.memoryUsage()` to stderr each second while a bench runs.
 *
 * @example
 * const upstream = await startChild<{ url: string }>('bench/fake-upstream-process.ts');
 * await upstream.stop();
 */
export async function startChild<T>(file: string, args: string[] = [], nodeArgs: string[] = []): Promise<Child<T>> {
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...(process.env.BENCH_CHILD_IMPORT ? ['--import', process.env.BENCH_CHILD_IMPORT] : []), '--import', 'tsx', file, ...args],
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
