import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCheckpointThread } from './checkpoint-thread';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('startCheckpointThread', () => {
  it('a thread that cannot even be made (new Worker throws) is onFailed, at once or once the WAL grew; nothing throws', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-checkpoint-thread-'));
    const path = join(dir, 'store.db');
    // A function cannot be cloned into workerData: the Worker constructor throws, as it does when no thread is to be had.
    const unclonable = (() => undefined) as unknown as string;
    const seen = { started: 0, failed: 0 };
    const events = { onStarted: () => void seen.started++, onFailed: () => void seen.failed++ };
    const atOnce = startCheckpointThread({ modulePath: unclonable, path, intervalMs: 10, ...events });
    expect(seen).toEqual({ started: 0, failed: 1 });
    await atOnce.stop();
    writeFileSync(`${path}-wal`, new Uint8Array(100));
    const watched = startCheckpointThread({ modulePath: unclonable, path, intervalMs: 10, startAtBytes: 50, ...events });
    await expect.poll(() => seen.failed, { timeout: 5_000 }).toBe(2);
    expect(seen.started).toBe(0);
    await watched.stop();
  });
});
