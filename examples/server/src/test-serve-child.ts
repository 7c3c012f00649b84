/**
 * Test helper (not part of the server): `tollgate serve` as a child process, the way an operator
 * runs it, with its output read for its whole life (so its pipes never fill).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The real CLI binary. */
export const BIN = fileURLToPath(new URL('../bin/tollgate.mjs', import.meta.url));

const KEY = /sk_svc_[A-Za-z0-9]{43}/;

/** A running `tollgate serve`. */
export interface ServedChild {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
  /**
   * The demo key printed on stderr, waiting up to `ms` for it: it comes just after the listening
   * line on stdout, on another pipe, read whenever the loop gets to it.
   */
  demoKey(ms?: number): Promise<string | undefined>;
}

/** Starts `tollgate serve` with `env` over this process's environment; resolves on its `listening` line. */
export async function serveChild(env: Record<string, string>): Promise<ServedChild> {
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (data) => (stderr += data));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (data) => {
      const before = stdout.length;
      stdout += data;
      // Only lines that ended in this chunk or the last one's tail can be new.
      const start = stdout.lastIndexOf('\n', before) + 1;
      for (const line of stdout.slice(start).split('\n')) {
        if (line.includes('"msg":"listening"')) resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    void exited.then((code) => reject(new Error(`tollgate serve exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async demoKey(ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!KEY.test(stderr) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      return KEY.exec(stderr)?.[0];
    },
  };
}
