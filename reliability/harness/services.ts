/**
 * PostgreSQL and Redis for the scenarios that need them, started by the test helpers of their
 * store packages (throwaway servers on loopback, removed when stopped). Redis can be killed and
 * brought back on the same port, as an operator's restart would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPostgresBin, startPostgres, type PostgresServer } from '../../packages/store-postgres/test/postgres-server';
import { hasRedisServer } from '../../packages/store-redis/test/redis-server';
import { freePort } from '@tollgate/testing/server';

export { findPostgresBin, hasRedisServer, startPostgres, type PostgresServer };

/** A redis-server the suite can kill -9 and start again on the same port. */
export interface KillableRedis {
  url: string;
  port: number;
  /** SIGKILL: the connections drop at once. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence) and waits for PING. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts redis-server on a free loopback port. */
export async function startKillableRedis(): Promise<KillableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reliability-redis-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    const running = child;
    exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    const deadline = Date.now() + 10_000;
    while (!(await ping(port))) {
      if (Date.now() > deadline || running.exitCode !== null) throw new Error(`redis-server did not answer on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const kill = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(200, () => socket.destroy());
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      resolve(data.toString().startsWith('+PONG'));
      socket.destroy();
    });
  });
}

/** Restarts a PostgreSQL server in place (`pg_ctl restart -m fast`), reading its data directory from the server itself. */
export async function restartPostgres(url: string, downMs: number): Promise<void> {
  const { default: postgres } = await import('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [row] = await sql<{ data_directory: string }[]>`SELECT current_setting('data_directory') AS data_directory`;
  await sql.end({ timeout: 1 });
  const data = row?.data_directory ?? '';
  const bin = findPostgresBin() ?? '';
  const asRoot = process.getuid?.() === 0;
  const pgctl = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const command = asRoot ? 'runuser' : join(bin, 'pg_ctl');
      const argv = asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args] : args;
      const child = spawn(command, argv, { stdio: 'ignore' });
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl ${args.join(' ')} exited ${code}`))));
    });
  // The options it was started with (port, socket dir, fsync off) are in postmaster.opts: start it with the same.
  const options = await startOptions(data);
  await pgctl(['-D', data, '-m', 'fast', '-w', 'stop']);
  await new Promise((resolve) => setTimeout(resolve, downMs));
  await pgctl(['-D', data, '-w', '-t', '60', '-l', join(data, '..', 'server.log'), '-o', options, 'start']);
}

/** The command-line options PostgreSQL was last started with, from postmaster.opts. */
async function startOptions(data: string): Promise<string> {
  const { readFileSync } = await import('node:fs');
  const line = readFileSync(join(data, 'postmaster.opts'), 'utf8').trim();
  // `"/usr/lib/postgresql/15/bin/postgres" "-D" "…" "-k" "…" …`: everything after the data directory.
  const parts = [...line.matchAll(/"([^"]*)"/g)].map((match) => match[1] ?? '');
  const at = parts.indexOf('-D');
  return parts
    .slice(at + 2)
    .map((part) => (/\s/.test(part) ? `'${part}'` : part))
    .join(' ');
}
