/**
 * Test helper (node:* allowed): a throwaway PostgreSQL server on 127.0.0.1, initialised in a
 * temporary directory with fsync off. As root, the server binaries run as the `postgres` user
 * (PostgreSQL refuses to run as root).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@tollgate/testing/server';
import postgres from 'postgres';

const run = promisify(execFile);
const ROOT = '/usr/lib/postgresql';

/** A running throwaway server. */
export interface PostgresServer {
  /** URL of the database `tollgate`. */
  url: string;
  /** Creates another empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drops a database made by createDatabase (connections are closed first). */
  dropDatabase(name: string): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** The newest PostgreSQL `bin` directory (`PG_BIN` overrides), or undefined when none is installed. */
export function findPostgresBin(): string | undefined {
  if (process.env.PG_BIN && existsSync(join(process.env.PG_BIN, 'initdb'))) return process.env.PG_BIN;
  if (!existsSync(ROOT)) return undefined;
  const versions = readdirSync(ROOT)
    .filter((name) => existsSync(join(ROOT, name, 'bin', 'initdb')))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  return versions[0] === undefined ? undefined : join(ROOT, versions[0], 'bin');
}

/**
 * Starts PostgreSQL on a free loopback port and creates the database `tollgate`.
 *
 * @example
 * const server = await startPostgres();
 * const store = postgresStore(server.url);
 * await server.stop();
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (bin === undefined) throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; set PG_BIN)');
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const exec = (tool: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args));
  const data = join(dir, 'data');
  const port = await freePort();
  try {
    await exec('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const serverOptions = `-k ${dir} -h 127.0.0.1 -p ${port} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
    await exec('pg_ctl', ['-D', data, '-o', serverOptions, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const base = `postgres://postgres@127.0.0.1:${port}`;
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => {} });
  const createDatabase = async (name: string) => {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
    return `${base}/${name}`;
  };
  await createDatabase('tollgate');
  return {
    url: `${base}/tollgate`,
    createDatabase,
    async dropDatabase(name) {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
    async stop() {
      await admin.end({ timeout: 1 });
      await exec('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
