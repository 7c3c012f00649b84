/**
 * Test helper: packs every public workspace package with `npm pack` (whose `prepack` builds dist),
 * and installs the tarballs into a fresh project in a temp folder, as a user would.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  workspaces?: string[];
  scripts?: Record<string, string>;
  exports?: Record<string, unknown>;
  peerDependencies?: Record<string, string>;
}

function readJson(path: string): PackageJson {
  return JSON.parse(readFileSync(path, 'utf8')) as PackageJson;
}

/** A public workspace package: its folder, name and entry points (`@tollgate/testing/server`, …). */
export interface PublicPackage {
  dir: string;
  name: string;
  version: string;
  entryPoints: string[];
  /** The entry points with a `require` condition: the ones a CommonJS consumer may load. */
  requireEntryPoints: string[];
  /** Peer dependencies, optional ones included (an entry point may need one: vitest for `@tollgate/testing/store-contract`). */
  peers: string[];
}

/** `name` and `name/subpath` for each subpath of the exports map (with `condition`, only those that have it). */
function entryPoints(json: PackageJson, condition?: string): string[] {
  return Object.entries(json.exports ?? { '.': {} })
    .filter(
      ([subpath, target]) =>
        subpath !== './package.json' && (condition === undefined || (typeof target === 'object' && target !== null && condition in target)),
    )
    .map(([subpath]) => (subpath === '.' ? json.name : `${json.name}/${subpath.slice(2)}`));
}

/** Every workspace package that is not private, in the workspaces' (dependency) order. */
export function publicPackages(): PublicPackage[] {
  const root = readJson(join(ROOT, 'package.json'));
  return (root.workspaces ?? [])
    .map((dir) => ({ dir, json: readJson(join(ROOT, dir, 'package.json')) }))
    .filter(({ json }) => json.private !== true)
    .map(({ dir, json }) => ({
      dir,
      name: json.name,
      version: json.version,
      peers: Object.keys(json.peerDependencies ?? {}),
      entryPoints: entryPoints(json),
      requireEntryPoints: entryPoints(json, 'require'),
    }));
}

/** A fresh project with the tarballs installed. */
export interface PackedProject {
  /** The project folder (package.json, node_modules, src/). */
  dir: string;
  packages: PublicPackage[];
  /** Removes the temp folder. */
  remove(): void;
}

/** The version the workspace has installed, so the temp project's install comes from npm's cache. */
export function installedVersion(name: string): string {
  return readJson(join(ROOT, 'node_modules', name, 'package.json')).version;
}

/**
 * Packs every public package and installs the tarballs, their peer dependencies, `extra`
 * packages (at the workspace's versions) and `pinned` ones (name -> version), into `<temp>/project`. Install scripts are skipped: better-sqlite3's native build is
 * the workspace's own when it is the same version for this same Node (the same ABI), so it is not
 * compiled a second time; otherwise it is rebuilt.
 */
export async function packProject(extra: string[], pinned: Record<string, string> = {}): Promise<PackedProject> {
  const temp = mkdtempSync(join(tmpdir(), 'tollgate-pack-'));
  const remove = () => rmSync(temp, { recursive: true, force: true });
  try {
    const packages = publicPackages();
    const tarballs = join(temp, 'tarballs');
    mkdirSync(tarballs);
    // A build per package takes seconds of a shared CPU: dist is rebuilt only when a source is newer.
    for (const { dir } of packages) if (!builtFromSources(join(ROOT, dir))) await run('npm', ['run', 'build', '-w', dir], { cwd: ROOT });
    // --ignore-scripts: prepack would build again what was just checked; npm pack takes dist as it is.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', tarballs, ...packages.flatMap(({ dir }) => ['-w', dir])], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    const dependencies: Record<string, string> = {};
    for (const { name, version } of packages) dependencies[name] = `file:${join(tarballs, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`)}`;
    // Every peer too, so that every entry point can load: a user of an entry point installs its peer.
    for (const name of [...extra, ...packages.flatMap(({ peers }) => peers)]) dependencies[name] ??= installedVersion(name);
    Object.assign(dependencies, pinned);
    const dir = join(temp, 'project');
    mkdirSync(join(dir, 'src'), { recursive: true });
    const tollgate = Object.fromEntries(Object.entries(dependencies).filter(([name]) => name.startsWith('@tollgate/')));
    // overrides: the packages' dependencies on each other (`"@tollgate/core": "0.1.0"`) take the tarballs, never the registry.
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'tollgate-consumer', private: true, type: 'module', dependencies, overrides: tollgate }, null, 2),
    );
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--loglevel=error'], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    await nativeSqlite(dir);
    return { dir, packages, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** better-sqlite3's native addon in the project: the workspace's build if it is the same version, else built. */
async function nativeSqlite(dir: string): Promise<void> {
  const target = join(dir, 'node_modules/better-sqlite3');
  if (!existsSync(target)) return;
  const built = join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
  if (existsSync(built) && readJson(join(target, 'package.json')).version === installedVersion('better-sqlite3')) {
    mkdirSync(join(target, 'build/Release'), { recursive: true });
    copyFileSync(built, join(target, 'build/Release/better_sqlite3.node'));
  } else {
    await run('npm', ['rebuild', 'better-sqlite3'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
  }
}

/** Modification times of a folder and everything under it, test files left out (they are not built). */
function mtimes(path: string): number[] {
  const times = [statSync(path).mtimeMs];
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) times.push(...mtimes(child));
    else if (!entry.name.endsWith('.test.ts')) times.push(statSync(child).mtimeMs);
  }
  return times;
}

/** Whether `dir/dist` was built after every source of the package last changed (a deleted file changes its folder's time). */
function builtFromSources(dir: string): boolean {
  if (!existsSync(join(dir, 'dist'))) return false;
  const sources = [...mtimes(join(dir, 'src')), ...['package.json', 'tsup.config.ts'].map((file) => statSync(join(dir, file)).mtimeMs)];
  const built = readdirSync(join(dir, 'dist')).map((file) => statSync(join(dir, 'dist', file)).mtimeMs);
  return built.length > 0 && Math.min(...built) > Math.max(...sources);
}
