/**
 * The reference server as an operator runs it (`tollgate serve`, a child process), so the suite can
 * kill -9 it, SIGTERM it and read its RSS from /proc. Its output is read for its whole life and
 * every line goes to the secrets scan.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@tollgate/testing/server';
import { recordOutput } from './secrets-log';

const BIN = fileURLToPath(new URL('../../examples/server/bin/tollgate.mjs', import.meta.url));

/** A running `tollgate serve`. */
export interface ServerChild {
  child: ChildProcess;
  pid: number;
  url: string;
  port: number;
  adminUrl: string;
  /** Every line it printed so far (stdout and stderr). */
  lines(): string[];
  /** Its exit code (null after a signal) and signal, once it exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resident set size now, in bytes (0 once it exited). */
  rss(): number;
  /** SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
  /** Reads /metrics (recorded for the secrets scan). */
  metrics(): Promise<string>;
}

const running = new Set<ChildProcess>();

/** SIGKILLs every server child still running (the runner's time bound, or a crashed run). */
export function killAllServerChildren(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Starts `tollgate serve` with `env` over this process's environment; resolves on its `listening` line (60 s at most). */
export async function startServerChild(env: Record<string, string>): Promise<ServerChild> {
  // ADMIN_PORT=0 would turn /metrics off: a free port of its own.
  const adminPort = String(await freePort());
  // The marker of a demo account already made: no demo account, so no demo key printed (the suite makes its own accounts).
  if (env.TOLLGATE_DATA_DIR) {
    mkdirSync(env.TOLLGATE_DATA_DIR, { recursive: true });
    const marker = join(env.TOLLGATE_DATA_DIR, 'demo-account.json');
    if (!existsSync(marker)) writeFileSync(marker, '{}\n');
  }
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, PORT: '0', ADMIN_PORT: adminPort, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const listening = new Promise<{ url: string; admin: string }>((resolve, reject) => {
    const read = (stream: NodeJS.ReadableStream) => {
      let tail = '';
      stream.on('data', (data: Buffer) => {
        tail += data.toString('utf8');
        const parts = tail.split('\n');
        tail = parts.pop() ?? '';
        for (const line of parts) {
          if (lines.length < 100_000) lines.push(line);
          recordOutput(line);
          if (line.includes('"msg":"listening"')) resolve(JSON.parse(line) as { url: string; admin: string });
        }
      });
    };
    if (child.stdout) read(child.stdout);
    if (child.stderr) read(child.stderr);
    void exited.then(({ code }) => reject(new Error(`tollgate serve exited with ${code} before listening: ${lines.slice(-5).join('\n')}`)));
    setTimeout(() => reject(new Error('tollgate serve did not listen within 60 s')), 60_000).unref();
  });
  let info: { url: string; admin: string };
  try {
    info = await listening;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const pid = child.pid ?? 0;
  return {
    child,
    pid,
    url: info.url,
    port: Number(new URL(info.url).port),
    adminUrl: info.admin,
    lines: () => lines,
    exited,
    rss: () => rssOf(pid),
    async metrics() {
      try {
        const text = await (await fetch(`${info.admin}/metrics`)).text();
        recordOutput(text);
        return text;
      } catch (error) {
        // A server that died must fail its scenario's checks, not hide them behind a throw.
        return `# /metrics unreachable (${String(error)}); exit ${child.exitCode ?? child.signalCode ?? 'none'}; last lines: ${lines.slice(-3).join(' | ')}`;
      }
    },
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** VmRSS of a process, in bytes; 0 when it is gone. */
export function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every 100 ms until stopped; the peak seen. */
export function rssPeak(pid: number): { stop(): number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssOf(pid));
    },
  };
}
