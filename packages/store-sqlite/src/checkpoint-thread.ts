import { stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import type { BackgroundCheckpoints } from './sqlite-database';

/**
 * The thread's code (CommonJS, run with `eval`): its own connection to the file, a PASSIVE
 * checkpoint every `intervalMs` (it copies what it can without waiting for any lock, and skips a
 * turn rather than fail: the store's connection keeps SQLite's automatic checkpoint as a
 * backstop), and a message to stop. Nothing else: no write, no read of the ledger.
 */
const SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.modulePath);
const db = new Database(workerData.path);
db.exec('PRAGMA cache_size = -64');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    const result = checkpoint.get();
    if (workerData.report) parentPort.postMessage(result);
  } catch {}
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** Options of {@link startCheckpointThread}. */
export interface CheckpointThreadOptions {
  /** The file of better-sqlite3 (or another module whose export is a `Database` class of the same API), as `require.resolve` gives it. */
  modulePath: string;
  path: string;
  intervalMs: number;
  /**
   * Start the thread only once the WAL file has grown to this many bytes (default 0: at once),
   * watched with one `stat` every `intervalMs` until then: a store that never writes enough to
   * need a checkpoint never pays for the thread (some 10 MB of RSS).
   */
  startAtBytes?: number;
  /** Called when the thread starts. */
  onStarted?: () => void;
  /** Called if the thread ends before `stop` (the module or the file could not be opened, or it died), or could not be made at all. */
  onFailed?: () => void;
  /** Told each checkpoint's result (`busy`, `log`, `checkpointed` frames): for tests. */
  onCheckpoint?: (result: { busy: number; log: number; checkpointed: number }) => void;
}

/**
 * Checkpoints a file on a worker thread (Node's `worker_threads`), for better-sqlite3's driver:
 * at once, or once its WAL has grown to `startAtBytes`. Neither the thread nor the watch keeps the
 * process alive; if the thread fails, `onFailed` says so (the store's own checkpoint takes over).
 */
export function startCheckpointThread(options: CheckpointThreadOptions): BackgroundCheckpoints {
  const { path, intervalMs, startAtBytes = 0 } = options;
  let thread: BackgroundCheckpoints | undefined;
  let stopped = false;
  const start = () => {
    try {
      thread = spawnThread(options);
    } catch {
      // No thread to be had (none left to the process, say): the store's own checkpoint stays, and
      // from the watch's callback a throw would be an unhandled rejection.
      options.onFailed?.();
      return;
    }
    options.onStarted?.();
  };
  let watch: ReturnType<typeof setInterval> | undefined;
  if (startAtBytes <= 0) start();
  else {
    watch = setInterval(() => {
      stat(`${path}-wal`).then(
        (wal) => {
          if (stopped || thread !== undefined || wal.size < startAtBytes) return;
          clearInterval(watch);
          start();
        },
        () => undefined, // no WAL yet
      );
    }, intervalMs);
    watch.unref();
  }
  return {
    stop() {
      stopped = true;
      clearInterval(watch);
      return thread?.stop() ?? Promise.resolve();
    },
  };
}

/** The thread itself. */
function spawnThread(options: CheckpointThreadOptions): BackgroundCheckpoints {
  const { modulePath, path, intervalMs, onFailed, onCheckpoint } = options;
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: { modulePath, path, intervalMs, report: onCheckpoint !== undefined },
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  worker.unref();
  let exited = false;
  let stopping: Promise<void> | undefined;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      if (stopping === undefined) onFailed?.();
      resolve();
    }),
  );
  // A thread that failed (the file gone, the module unloadable) exits: `onFailed` says so.
  worker.on('error', () => {});
  if (onCheckpoint) worker.on('message', onCheckpoint);
  return {
    stop() {
      if (stopping === undefined) {
        if (!exited) {
          // Held while it stops: a caller awaiting this (a shutdown) must not see the process exit first.
          worker.ref();
          worker.postMessage('stop');
        }
        stopping = exit;
      }
      return stopping;
    },
  };
}
