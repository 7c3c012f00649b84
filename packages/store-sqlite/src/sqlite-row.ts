import type { SqliteRow } from './sqlite-database';

/**
 * Reads typed columns out of a driver's row, checking each: a driver set up to return BigInt, or a
 * file written by something else, fails loudly here instead of turning money into the wrong type.
 */
export const column = {
  /** A TEXT column. */
  text(row: SqliteRow, name: string): string {
    const value = row[name];
    if (typeof value !== 'string') throw new TypeError(`column ${name}: expected text, got ${typeof value}`);
    return value;
  },
  /** An INTEGER column, as a safe JS integer. */
  integer(row: SqliteRow, name: string): number {
    const value = row[name];
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new TypeError(`column ${name}: expected a safe integer, got ${typeof value}`);
    return value;
  },
  /** A nullable TEXT column. */
  optionalText(row: SqliteRow, name: string): string | null {
    return row[name] === null ? null : column.text(row, name);
  },
  /** A nullable INTEGER column. */
  optionalInteger(row: SqliteRow, name: string): number | null {
    return row[name] === null ? null : column.integer(row, name);
  },
  /** A TEXT column whose value `is` accepts (a plan, an account state). */
  oneOf<T extends string>(row: SqliteRow, name: string, is: (value: unknown) => value is T): T {
    const value = row[name];
    if (!is(value)) throw new TypeError(`column ${name}: unexpected value ${String(value)}`);
    return value;
  },
};
