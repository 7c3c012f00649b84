/**
 * Test helper: runs one of the embedding examples as a child process and reads the line it prints
 * when it listens (`{ baseURL, demoKey }`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './pack-project';

/** A running example. */
export interface RunningEmbed {
  child: ChildProcess;
  baseURL: string;
  demoKey: string;
  /** Sends SIGTERM and resolves with the exit code once it exited (its graceful shutdown ran). */
  stop(): Promise<number | null>;
  /** Everything it wrote on stderr. */
  stderr(): string;
}

/** The pinned bun or deno binary of the workspace (devDependencies), or undefined when not installed. */
export function runtimeBinary(name: 'bun' | 'deno'): string | undefined {
  const path = join(ROOT, 'node_modules/.bin', name);
  return existsSync(path) ? path : undefined;
}

/** Starts `command args` in `cwd` with `env` added; resolves once it printed its listening line (30 s at most). */
export async function runEmbed(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<RunningEmbed> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (data) => (stderr += data));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let timer: NodeJS.Timeout | undefined;
  try {
    const listening = await new Promise<{ baseURL: string; demoKey: string }>((resolve, reject) => {
      child.stdout!.on('data', (data) => {
        stdout += data;
        const line = stdout.split('\n').find((candidate) => candidate.startsWith('{"baseURL"'));
        if (line) resolve(JSON.parse(line) as { baseURL: string; demoKey: string });
      });
      void exited.then((code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${stderr}`)));
      timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} did not listen in 30 s: ${stdout} ${stderr}`)), 30_000);
    });
    return {
      child,
      ...listening,
      stderr: () => stderr,
      stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        return exited;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
