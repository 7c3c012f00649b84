import type { SqliteDatabase } from './sqlite-database';

/**
 * Runs `body` in one transaction: `IMMEDIATE` takes the write lock first (so a read-then-write
 * never races another process), `DEFERRED` is for reads that must see one snapshot. Every driver
 * is synchronous, so nothing else in this process runs between BEGIN and COMMIT.
 */
export function transaction<T>(db: SqliteDatabase, mode: 'IMMEDIATE' | 'DEFERRED', body: () => T): T {
  db.exec(`BEGIN ${mode}`);
  try {
    const value = body();
    db.exec('COMMIT');
    return value;
  } catch (error) {
    // A failed COMMIT leaves the transaction open; rolling back frees the write lock either way.
    rollback(db);
    throw error;
  }
}

function rollback(db: SqliteDatabase): void {
  try {
    db.exec('ROLLBACK');
  } catch {
    // SQLite has already rolled back on some errors (SQLITE_FULL, SQLITE_IOERR); the body's error,
    // rethrown by the caller, is the one that says what went wrong.
  }
}
