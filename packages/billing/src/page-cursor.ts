import { hasControlCharacter } from '@tollgate/core';
/**
 * Paging for the stores' listings (`listAccounts`, `entriesPage`): the limit rule and the opaque
 * cursors. A cursor is keyset, never an offset: it names the last row of the page it ended, so rows
 * added meanwhile neither repeat nor shift a page. Every store encodes the same way.
 */

/** Rows per page when none is asked for. */
export const DEFAULT_PAGE_LIMIT = 100;
/** The most rows a page may ask for. */
export const MAX_PAGE_LIMIT = 1_000;

/**
 * A cursor that is not one this listing handed out (garbled, from another listing, or another
 * account's entries). The admin API answers it 400; stores throw it rather than guess a page.
 */
export class InvalidCursorError extends RangeError {
  readonly code = 'invalid_cursor';
  constructor(message = 'invalid cursor') {
    super(message);
    this.name = 'InvalidCursorError';
  }
}

/** The page size to use: `limit` (an integer 1..1000), else 100; throws a RangeError otherwise. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) throw new RangeError(`page limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  return limit;
}

/** Where a page of accounts ends: accounts are listed by creation time, then id. */
export interface AccountsCursor {
  createdAt: number;
  id: string;
}

/** The cursor after the account created at `createdAt` with id `id`. */
export function encodeAccountsCursor(position: AccountsCursor): string {
  return encode(['a', position.createdAt, position.id]);
}

/** Reads an accounts cursor; throws {@link InvalidCursorError} for anything else. */
export function decodeAccountsCursor(cursor: string): AccountsCursor {
  const value = decode(cursor);
  const [tag, createdAt, id] = value;
  // An id with a control character is none a store made (PostgreSQL refuses a NUL outright).
  if (value.length !== 3 || tag !== 'a' || !isWhole(createdAt) || typeof id !== 'string' || hasControlCharacter(id)) throw new InvalidCursorError();
  return { createdAt, id };
}

/** The cursor after an account's entry at ledger position `seq` (the store's insertion order). */
export function encodeEntriesCursor(accountId: string, seq: number): string {
  return encode(['e', accountId, seq]);
}

/** Reads an entries cursor for `accountId`; throws {@link InvalidCursorError} for anything else, another account's included. */
export function decodeEntriesCursor(cursor: string, accountId: string): number {
  const value = decode(cursor);
  const [tag, owner, seq] = value;
  if (value.length !== 3 || tag !== 'e' || owner !== accountId || !isWhole(seq)) throw new InvalidCursorError();
  return seq;
}

function isWhole(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** base64url of the JSON array's UTF-8 bytes (btoa/atob: every runtime has them, no `node:*`). */
function encode(value: readonly unknown[]): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(JSON.stringify(value))) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function decode(cursor: string): unknown[] {
  if (typeof cursor !== 'string' || cursor === '' || cursor.length > 2_048 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  try {
    const binary = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    if (!Array.isArray(value)) throw new InvalidCursorError();
    return value;
  } catch {
    throw new InvalidCursorError();
  }
}
