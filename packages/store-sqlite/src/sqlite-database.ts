/** A value SQLite binds or returns here: the store writes only text, integers and NULL. */
export type SqliteValue = string | number | null;

/** A row as a driver returns it: columns by name, read through packages/store-sqlite/src/sqlite-row.ts. */
export type SqliteRow = { readonly [column: string]: unknown };

/** A prepared statement: the three calls the store makes, the same on every driver. */
export interface SqliteStatement {
  /** Runs a write; `changes` is how many rows it changed. */
  run(...params: SqliteValue[]): { changes: number };
  /** The first row, or `undefined` when there is none. */
  get(...params: SqliteValue[]): SqliteRow | undefined;
  /** Every row. */
  all(...params: SqliteValue[]): SqliteRow[];
}

/**
 * An open SQLite database, whatever the driver: the interface the store and its schema are written
 * against, so the SQL lives once (packages/store-sqlite/src/sqlite-store.ts) and only opening a
 * file differs per runtime. Every call is synchronous, as in all three drivers.
 */
export interface SqliteDatabase {
  /** Runs one or more statements that return nothing (schema, pragmas, BEGIN/COMMIT). */
  exec(sql: string): void;
  /** Prepares a statement, once per statement the store runs. */
  prepare(sql: string): SqliteStatement;
  /** Closes the database. */
  close(): void;
}

/**
 * The WAL pages at which the store's connection checkpoints inside a commit (`wal_autocheckpoint`,
 * instead of SQLite's 1,000: a page written by many transactions in between is copied to the file
 * once), and so the WAL size at which a driver's background checkpoints are worth a thread.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** WAL checkpoints run on a thread of their own (see {@link SqliteDriver.backgroundCheckpoints}). */
export interface BackgroundCheckpoints {
  /** Stops them: the thread's connection is closed once the promise resolves. */
  stop(): Promise<void>;
}

/** What {@link SqliteDriver.backgroundCheckpoints} tells the store. */
export interface BackgroundCheckpointEvents {
  /** The thread started: the store's own checkpoint may step back. */
  onStarted(): void;
  /** The thread ended before `stop`: the store's own checkpoint takes over again. */
  onFailed(): void;
}

/** Opens database files: better-sqlite3, node:sqlite or bun:sqlite behind one interface. */
export interface SqliteDriver {
  /** The driver's name, for messages: `better-sqlite3`, `node:sqlite`, `bun:sqlite`, or your own. */
  name: string;
  /** Opens (creating if need be) the file at `path`, or a private database for `':memory:'`. */
  open(path: string): SqliteDatabase;
  /**
   * Checkpoints the WAL of the file at `path` every `intervalMs` from a second connection on a
   * thread of its own (`PRAGMA wal_checkpoint(PASSIVE)`), so that no commit of the store's thread
   * runs one; `undefined` where the driver cannot. The driver may start the thread later (once
   * the WAL is large enough to need it): `events.onStarted` says when, `events.onFailed` that it
   * ended before `stop` (it could not open the file, or died). Optional: better-sqlite3's driver
   * has it when it loads the module itself.
   */
  backgroundCheckpoints?(path: string, intervalMs: number, events: BackgroundCheckpointEvents): BackgroundCheckpoints | undefined;
}
