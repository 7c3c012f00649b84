import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface ReleaseMemoryOptions {
  /**
   * How long the event loop must have been almost idle (busy under `quietUtilisation` of the time)
   * before the heap is collected, in ms; the process is looked at once per this period. Default 5,000 (longer than the idle timeout of the upstream pool of `createUpstreamFetch`, 4 s, so its sockets are gone by then).
   */
  quietMs?: number;
  /** The share of a period the event loop may be busy (0 to 1) and the period still count as quiet. Default 0.02. */
  quietUtilisation?: number;
  /**
   * Collect only when V8's heap holds at least this many bytes more than after the last
   * collection (at first: than when this was called). Default 16 MiB.
   */
  minGrowthBytes?: number;
  /** Told of every collection: the heap's used bytes and the process's RSS before and after, and how long it took. */
  onRelease?: (release: MemoryRelease) => void;
}

export interface MemoryRelease {
  heapBefore: number;
  heapAfter: number;
  rssBefore: number;
  rssAfter: number;
  ms: number;
}

export interface MemoryReleaser {
  /** Stops looking (the timer never kept the process alive). */
  stop(): void;
}

/**
 * Gives the memory of a burst back once the process goes quiet. V8 collects its old generation
 * when allocation pushes it to a limit, so a server that has just served 1,000 streams and then
 * waits allocates nothing and keeps their garbage (and the pages under it) for as long as it
 * waits: its RSS stays at the peak. This looks at the event loop once per `quietMs` (a timer that
 * keeps nothing alive) and, when the loop was almost idle over the whole period and the heap has
 * grown by `minGrowthBytes` since the last collection, runs two full collections back to back (the
 * second returns the pages the first freed to the system), then, at the next quiet period,
 * a scavenge (which lets V8 shrink its young generation).
 *
 * The collection function is `globalThis.gc` when the process runs with `--expose-gc`; otherwise
 * `--expose-gc` is set at run time and the function is taken from a new `vm` context, as jest's
 * leak detector does (no global `gc` appears in the main context). A collection stops the event loop
 * for its length (some 10 to 30 ms on a heap of 60 MB): a request arriving in that moment waits
 * that long. The reference server runs this (docs/configuration.md, `TOLLGATE_RELEASE_MEMORY`).
 *
 * @example
 * const releaser = releaseMemoryWhenIdle({ onRelease: (release) => console.log(release) });
 * // on shutdown
 * releaser.stop();
 */
export function releaseMemoryWhenIdle(options: ReleaseMemoryOptions = {}): MemoryReleaser {
  const quietMs = options.quietMs ?? 5_000;
  const quietUtilisation = options.quietUtilisation ?? 0.02;
  const minGrowthBytes = options.minGrowthBytes ?? 16 * 1024 * 1024;
  if (!(quietMs > 0) || !(quietUtilisation > 0 && quietUtilisation <= 1) || !(minGrowthBytes >= 0)) {
    throw new RangeError('releaseMemoryWhenIdle: quietMs must be above 0, quietUtilisation above 0 and at most 1, minGrowthBytes 0 or more');
  }
  const collect = collector();
  let baseline = getHeapStatistics().used_heap_size;
  let last = performance.eventLoopUtilization();
  let shrinkYoung = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilisation = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (utilisation >= quietUtilisation) return;
    if (shrinkYoung) {
      // V8 shrinks its young generation after a collection when the allocation rate it measured
      // since the collection before is low. Right after the full collections that rate still
      // holds the end of the burst; at the next quiet period it is the quiet one, and a scavenge
      // (cheap) gives back the semi-spaces the burst grew (16 MB of RSS with the start script's flag).
      shrinkYoung = false;
      collect({ type: 'minor' });
    }
    const heapBefore = getHeapStatistics().used_heap_size;
    if (heapBefore - baseline < minGrowthBytes) return;
    const rssBefore = process.memoryUsage.rss();
    const startedAt = performance.now();
    collect();
    collect();
    shrinkYoung = true;
    const ms = performance.now() - startedAt;
    baseline = getHeapStatistics().used_heap_size;
    // The collections' own time is not the next period's load.
    last = performance.eventLoopUtilization();
    options.onRelease?.({ heapBefore, heapAfter: baseline, rssBefore, rssAfter: process.memoryUsage.rss(), ms });
  }, quietMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** V8's `gc` function: a full collection, or with `{ type: 'minor' }` a scavenge of the young generation. */
type Collect = (options?: { type: 'minor' }) => void;

/** The process's `gc` under `--expose-gc`, else one taken from a new context once the flag is set. */
function collector(): Collect {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as Collect;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Collect;
}
