import type { SqliteDatabase } from './sqlite-database';

/**
 * Group commit for the request path's writes (hold, settle, release, checkpoint): every write
 * queued in one turn of the event loop runs in one IMMEDIATE transaction, each in a savepoint of
 * its own, and the transaction commits once. Each write is still atomic and still sees the writes
 * before it (they run one after another under the same write lock, as separate transactions did);
 * what is shared is the BEGIN, the COMMIT and its write to the WAL, which were most of a write's
 * cost (docs/benchmarks.md, "Group commit"). A write's promise settles only after the commit, so
 * nothing is reported done before it is on disk; if the commit fails, every write of the batch
 * rejects (none of them happened) and callers retry as they would any failed write.
 */
export interface WriteBatch {
  /** Queues `write` for this turn's transaction; resolves with its value once committed. */
  run<T>(write: () => T): Promise<T>;
  /** Commits what is queued now, synchronously: before a read that must see it, and at close. */
  flush(): void;
}

interface Queued {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The real `setImmediate` where the runtime has one (Node, Bun), captured at load so a test's fake
 * timers do not hold a store's writes; a zero timeout elsewhere (Deno's user code). It runs after
 * the I/O callbacks of the current turn, so the requests that arrived together commit together.
 */
const nextTurn: (callback: () => void) => void = (() => {
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  if (typeof immediate === 'function') return (callback) => void immediate(callback);
  const timeout = globalThis.setTimeout;
  return (callback) => void timeout(callback, 0);
})();

/** A {@link WriteBatch} on `db`. */
export function writeBatch(db: SqliteDatabase): WriteBatch {
  const sql = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    savepoint: db.prepare('SAVEPOINT batch_write'),
    release: db.prepare('RELEASE batch_write'),
    undo: db.prepare('ROLLBACK TO batch_write'),
  };
  let queue: Queued[] = [];

  const rollback = () => {
    try {
      db.exec('ROLLBACK');
    } catch {
      // SQLite already rolled back (SQLITE_FULL, SQLITE_IOERR): nothing to undo.
    }
  };

  /** Runs the batch in one transaction; the outcome of each write, or one error for all when the transaction failed. */
  const commit = (batch: Queued[]): Outcome[] | { failed: unknown } => {
    try {
      sql.begin.run();
    } catch (error) {
      return { failed: error };
    }
    const outcomes: Outcome[] = [];
    try {
      if (batch.length === 1) {
        // Alone in its transaction: its failure rolls the whole transaction back, as before batching.
        outcomes.push({ ok: true, value: (batch[0] as Queued).write() });
      } else {
        for (const { write } of batch) {
          sql.savepoint.run();
          try {
            const value = write();
            sql.release.run();
            // Only now: a RELEASE that failed undoes the write below, and gets its one outcome there.
            outcomes.push({ ok: true, value });
          } catch (error) {
            // Undoes this write alone. If SQLite already ended the transaction (an I/O error), this
            // throws and the batch fails as a whole: the writes before it were rolled back too.
            try {
              sql.undo.run();
              sql.release.run();
            } catch {
              throw error;
            }
            outcomes.push({ ok: false, error });
          }
        }
      }
      sql.commit.run();
      return outcomes;
    } catch (error) {
      rollback();
      return { failed: error };
    }
  };

  const flush = () => {
    const batch = queue;
    if (batch.length === 0) return;
    queue = [];
    const result = commit(batch);
    if ('failed' in result) {
      for (const queued of batch) queued.reject(result.failed);
      return;
    }
    batch.forEach((queued, index) => {
      const outcome = result[index] as Outcome;
      if (outcome.ok) queued.resolve(outcome.value);
      else queued.reject(outcome.error);
    });
  };

  return {
    run<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) nextTurn(flush);
        queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      });
    },
    flush,
  };
}
