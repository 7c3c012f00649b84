import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@tollgate/testing/server';

/** A redis-server a test started on loopback. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** The port it listens on. */
  port: number;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Whether a `redis-server` binary is on the PATH. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Whether the server on `port` answers PING with PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
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

/**
 * Starts a throwaway redis-server on 127.0.0.1 (no persistence, its own temp dir) and waits until
 * it answers PING. For tests only.
 *
 * @example
 * const redis = await startRedis(); try { … new Redis(redis.url) … } finally { await redis.stop(); }
 */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  for (let attempt = 0; attempt < 250; attempt++) {
    if (child.exitCode !== null) break;
    if (await ping(port)) return { url: `redis://127.0.0.1:${port}`, port, stop };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await stop();
  throw new Error(`redis-server did not answer PING on port ${port}`);
}
