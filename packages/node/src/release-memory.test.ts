import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type MemoryRelease, type MemoryReleaser, releaseMemoryWhenIdle } from './release-memory';

setFlagsFromString('--expose-gc');
/** V8's own gc, for a stand-in process gc that still collects. */
const realGc = runInNewContext('gc') as (options?: { type: 'minor' }) => void;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Some 30 MB of small objects that live long enough to reach the old generation, then let go. */
function makeGarbage(): void {
  let kept: { index: number; text: string }[][] = [];
  for (let round = 0; round < 30; round++) kept.push(Array.from({ length: 20_000 }, (_, index) => ({ index, text: `garbage ${round} ${index}` })));
  kept = [];
}

/** Keeps the event loop busy (a spin of 20 ms per turn) until the returned function is called. */
function keepBusy(): () => void {
  let busy = true;
  const spin = () => {
    if (!busy) return;
    const until = performance.now() + 20;
    while (performance.now() < until) {}
    setImmediate(spin);
  };
  spin();
  return () => {
    busy = false;
  };
}

/**
 * Makes garbage until `released` says a collection came, at most five times: V8 may collect a
 * round of it by itself first (incremental marking finishes in the idle loop), leaving no growth.
 */
async function garbageUntil(released: () => boolean): Promise<void> {
  for (let round = 0; round < 5 && !released(); round++) {
    makeGarbage();
    for (let waited = 0; !released() && waited < 1_000; waited += 25) await sleep(25);
  }
}

/** Short periods for the tests; a test's polling keeps its loop busy some 1.5% of a 50 ms period. */
const testing = { quietMs: 50, quietUtilisation: 0.1, minGrowthBytes: 8 * 1024 * 1024 };

let releaser: MemoryReleaser | undefined;
afterEach(() => {
  releaser?.stop();
  releaser = undefined;
  delete (globalThis as { gc?: unknown }).gc;
});

describe('releaseMemoryWhenIdle', () => {
  it('collects once the event loop is quiet and the heap has grown, and the heap shrinks', async () => {
    const releases: MemoryRelease[] = [];
    releaser = releaseMemoryWhenIdle({ ...testing, onRelease: (release) => releases.push(release) });
    await garbageUntil(() => releases.length > 0);
    expect(releases).toHaveLength(1);
    const [release] = releases as [MemoryRelease];
    expect(release.heapBefore - release.heapAfter).toBeGreaterThan(8 * 1024 * 1024);
    expect(release.ms).toBeGreaterThan(0);
    expect(release.rssBefore).toBeGreaterThan(0);
    expect(release.rssAfter).toBeGreaterThan(0);
    // Nothing has grown since: no second collection.
    await sleep(300);
    expect(releases).toHaveLength(1);
  });

  it('does not collect while the event loop is busy, and does once it goes quiet', async () => {
    const releases: MemoryRelease[] = [];
    releaser = releaseMemoryWhenIdle({ ...testing, onRelease: (release) => releases.push(release) });
    const stopBusy = keepBusy();
    makeGarbage();
    await sleep(400);
    expect(releases).toHaveLength(0);
    stopBusy();
    await garbageUntil(() => releases.length > 0);
    expect(releases).toHaveLength(1);
  });

  it('does not collect when the heap has not grown by minGrowthBytes', async () => {
    const onRelease = vi.fn();
    releaser = releaseMemoryWhenIdle({ ...testing, minGrowthBytes: 1024 * 1024 * 1024, onRelease });
    makeGarbage();
    await sleep(400);
    expect(onRelease).not.toHaveBeenCalled();
  });

  it('runs two full collections with the process gc when there is one, and a scavenge one quiet period later', async () => {
    const gc = vi.fn(realGc);
    (globalThis as { gc?: unknown }).gc = gc;
    releaser = releaseMemoryWhenIdle({ ...testing });
    await garbageUntil(() => gc.mock.calls.length > 0);
    expect(gc.mock.calls).toEqual([[], []]);
    for (let waited = 0; gc.mock.calls.length < 3 && waited < 5_000; waited += 25) await sleep(25);
    expect(gc.mock.calls).toEqual([[], [], [{ type: 'minor' }]]);
  });

  it('keeps the scavenge for a quiet period', async () => {
    const gc = vi.fn(realGc);
    (globalThis as { gc?: unknown }).gc = gc;
    let stopBusy: (() => void) | undefined;
    releaser = releaseMemoryWhenIdle({ ...testing, onRelease: () => (stopBusy ??= keepBusy()) });
    await garbageUntil(() => gc.mock.calls.length > 0);
    await sleep(300);
    expect(gc.mock.calls).toEqual([[], []]);
    stopBusy?.();
    for (let waited = 0; gc.mock.calls.length < 3 && waited < 5_000; waited += 25) await sleep(25);
    expect(gc.mock.calls).toEqual([[], [], [{ type: 'minor' }]]);
  });

  it('stops looking when stopped', async () => {
    const onRelease = vi.fn();
    releaser = releaseMemoryWhenIdle({ ...testing, minGrowthBytes: 1024 * 1024, onRelease });
    releaser.stop();
    makeGarbage();
    await sleep(300);
    expect(onRelease).not.toHaveBeenCalled();
  });

  it('refuses a period of 0, a share of 0 or above 1 and a negative growth', () => {
    expect(() => releaseMemoryWhenIdle({ quietMs: 0 })).toThrow(RangeError);
    expect(() => releaseMemoryWhenIdle({ minGrowthBytes: -1 })).toThrow(RangeError);
    expect(() => releaseMemoryWhenIdle({ quietUtilisation: 0 })).toThrow(RangeError);
    expect(() => releaseMemoryWhenIdle({ quietUtilisation: 1.5 })).toThrow(RangeError);
  });
});
