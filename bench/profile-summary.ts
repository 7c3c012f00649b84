/**
 * Where the gateway's CPU goes, from a V8 CPU profile of the servers' process
 * (`bench/profile-gateway.ts` writes one): self time grouped by component, as a share of the busy
 * time and, given the run's CPU µs per request, as µs per request.
 *
 * Run: `npx tsx bench/profile-summary.ts <profile dir or .cpuprofile> [CPU µs per request]`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The component a frame belongs to, by its script's path. */
export function componentOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(idle)' || functionName === '(program)') return functionName;
  const tollgate = /packages\/([^/]+)\//.exec(url);
  if (tollgate) return tollgate[1] === 'store-sqlite' ? 'SQLite store (better-sqlite3)' : `@tollgate/${tollgate[1]}`;
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1] === 'better-sqlite3' ? 'SQLite store (better-sqlite3)' : module[1]!;
  if (url.includes('examples/server')) return 'reference server';
  if (url.startsWith('node:internal/deps/undici')) return 'undici (Request, Response, Headers)';
  if (url.startsWith('node:internal/webstreams')) return 'web streams';
  if (/node:(internal\/)?(_http|http)/.test(url)) return 'node:http';
  if (/node:(internal\/)?(net|stream_base|streams|stream)/.test(url)) return 'node sockets and streams';
  if (url.startsWith('node:internal/modules') || url.startsWith('node:internal/worker') || url.includes('tsx')) return 'module loading (tsx)';
  if (/node:internal\/(abort_controller|event_target|per_context\/domexception)/.test(url)) return 'AbortController, EventTarget';
  if (/node:(internal\/)?timers/.test(url)) return 'timers';
  if (/node:internal\/(crypto|util)/.test(url) || url === 'node:crypto') return 'node:crypto and util';
  if (/node:internal\/process\/task_queues|node:internal\/async_hooks/.test(url)) return 'promise and tick queues';
  if (url.startsWith('node:')) return 'other node internals';
  if (url === '') return 'native (syscalls: socket writes, reads)';
  return 'other';
}

function newest(path: string): string {
  if (!statSync(path).isDirectory()) return path;
  const files = readdirSync(path)
    .filter((file) => file.endsWith('.cpuprofile'))
    .map((file) => join(path, file));
  // The servers' process writes the largest profile (tsx's loader thread writes a small one).
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
}

/**
 * A frame of a bundle (the bench runs the servers bundled, as `npm start` does) with the url of its
 * source file, read from the bundle's source map, so it counts to its package; other frames as they are.
 */
function unbundled(): (frame: ProfileNode['callFrame']) => ProfileNode['callFrame'] {
  const maps = new Map<string, SourceMap | undefined>();
  return (frame) => {
    if (!frame.url.startsWith('file:') || !frame.url.endsWith('.mjs')) return frame;
    let map = maps.get(frame.url);
    if (!maps.has(frame.url)) {
      const path = `${fileURLToPath(frame.url)}.map`;
      map = existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8'))) : undefined;
      maps.set(frame.url, map);
    }
    const entry = map?.findEntry(frame.lineNumber, frame.columnNumber);
    return entry && 'originalSource' in entry && entry.originalSource ? { ...frame, url: entry.originalSource } : frame;
  };
}

const file = newest(process.argv[2] ?? 'bench-profiles');
const microsPerRequest = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const source = unbundled();
const byId = new Map(profile.nodes.map((node) => [node.id, { ...node, callFrame: source(node.callFrame) }]));
const shares = new Map<string, number>();
let busy = 0;
profile.samples.forEach((id, index) => {
  const component = componentOf(byId.get(id)!.callFrame);
  if (component === '(idle)') return;
  const delta = profile.timeDeltas[index] ?? 0;
  busy += delta;
  shares.set(component, (shares.get(component) ?? 0) + delta);
});
const rows = [...shares].sort((a, b) => b[1] - a[1]);
console.log(`${file}: ${(busy / 1000).toFixed(0)} ms busy`);
console.log('| component | share | µs/request |');
console.log('| --- | ---: | ---: |');
for (const [component, time] of rows) {
  const share = time / busy;
  if (share < 0.005) continue;
  console.log(`| ${component} | ${(share * 100).toFixed(1)}% | ${microsPerRequest === undefined ? '-' : Math.round(share * microsPerRequest)} |`);
}
