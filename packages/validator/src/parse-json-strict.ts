import type { Result } from '@tollgate/core';
import { fail, type Fail, type Invalid } from './fail';
import { JsonStringScanner } from './json-string-scanner';

/** Limits of {@link parseJsonStrict}. */
export interface ParseJsonStrictOptions {
  /** Most JSON values in the document (every object, array, string, number, boolean and null); default 262,144. */
  maxValues?: number;
  /** Most levels of nested objects and arrays, the top-level object being level 1; default 1,000. */
  maxDepth?: number;
}

/** The result of {@link parseJsonStrict}. */
export type ParseJsonStrictResult = Result<Record<string, unknown>, Invalid>;

/** Values a body may hold (the spec's limit). */
export const MAX_JSON_VALUES = 262_144;
/** Nesting levels a body may use; deeper is `request_too_complex`. */
export const MAX_JSON_DEPTH = 1_000;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a request body as one JSON object, in one pass and without recursion: duplicate keys at
 * any depth are `duplicate_json_key`, too many values or too deep nesting `request_too_complex`,
 * anything that is not a JSON object `invalid_request_body`.
 *
 * @example
 * const parsed = parseJsonStrict(bytes);
 * if (!parsed.ok) return new GatewayError(parsed.code, { message: parsed.message }).toResponse();
 */
export function parseJsonStrict(input: Uint8Array | string, options: ParseJsonStrictOptions = {}): ParseJsonStrictResult {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    try {
      text = decoder.decode(input);
    } catch {
      return fail('invalid_request_body', 'The request body is not valid UTF-8.');
    }
  }
  return parseText(text, options.maxValues ?? MAX_JSON_VALUES, options.maxDepth ?? MAX_JSON_DEPTH);
}

type Container = Record<string, unknown> | unknown[];

function parseText(text: string, maxValues: number, maxDepth: number): ParseJsonStrictResult {
  const length = text.length;
  const strings = new JsonStringScanner(text);
  // The open containers, their kinds, and the key each one will be stored under in its parent.
  const containers: Container[] = [];
  const arrays: boolean[] = [];
  const parentKeys: string[] = [];
  let current: Container | undefined;
  let inArray = false;
  let key = '';
  let values = 0;
  // A repeated key is reported once the whole document proved to be JSON, so that a body with
  // both problems is `invalid_request_body`, as JSON.parse would say.
  let duplicate: string | undefined;
  let pos = skipSpace(text, 0);
  if (text.charCodeAt(pos) !== 0x7b) return fail('invalid_request_body', 'The request body must be a JSON object.');

  const invalid = (reason: string, at: number): Fail => fail('invalid_request_body', `The request body is not valid JSON: ${reason} (at character ${at}).`);
  const unexpected = (at: number): Fail => invalid(at >= length ? 'it ends too early' : `unexpected ${JSON.stringify(text[at])}`, at);

  /** Reads an object key at `pos` (after whitespace), its colon, and the whitespace after. */
  const readKey = (): Fail | undefined => {
    if (text.charCodeAt(pos) !== 0x22) return unexpected(pos);
    const read = strings.read(pos);
    if (read === undefined) return invalid(strings.error, pos);
    if (duplicate === undefined && Object.hasOwn(current as object, read)) duplicate = read;
    key = read;
    pos = skipSpace(text, strings.end);
    if (text.charCodeAt(pos) !== 0x3a) return unexpected(pos);
    pos = skipSpace(text, pos + 1);
    return undefined;
  };

  for (;;) {
    // A value starts at `pos`.
    if (++values > maxValues) {
      return fail('request_too_complex', `The request body holds more than ${maxValues} JSON values.`);
    }
    let value: unknown;
    const code = text.charCodeAt(pos);
    if (code === 0x7b || code === 0x5b) {
      // The open containers are the stack plus `current`.
      if (containers.length + (current === undefined ? 1 : 2) > maxDepth) {
        return fail('request_too_complex', `The request body nests deeper than ${maxDepth} levels.`);
      }
      const opened: Container = code === 0x7b ? {} : [];
      pos = skipSpace(text, pos + 1);
      if (text.charCodeAt(pos) === code + 2) {
        pos++;
        value = opened;
      } else {
        if (current !== undefined) {
          containers.push(current);
          arrays.push(inArray);
          parentKeys.push(key);
        }
        current = opened;
        inArray = code === 0x5b;
        if (!inArray) {
          const problem = readKey();
          if (problem) return problem;
        }
        continue;
      }
    } else if (code === 0x22) {
      value = strings.read(pos);
      if (value === undefined) return invalid(strings.error, pos);
      pos = strings.end;
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      const end = numberEnd(text, pos);
      if (end < 0) return invalid('a number is malformed', pos);
      value = Number(text.slice(pos, end));
      pos = end;
    } else if (code === 0x74 && text.startsWith('true', pos)) {
      value = true;
      pos += 4;
    } else if (code === 0x66 && text.startsWith('false', pos)) {
      value = false;
      pos += 5;
    } else if (code === 0x6e && text.startsWith('null', pos)) {
      value = null;
      pos += 4;
    } else {
      return unexpected(pos);
    }

    // A value is complete: store it, then close every container that ends here.
    for (;;) {
      if (current === undefined) {
        pos = skipSpace(text, pos);
        if (pos < length) return invalid('unexpected data after the JSON object', pos);
        if (duplicate !== undefined) {
          return fail('duplicate_json_key', `A JSON object in the body repeats the key ${JSON.stringify(duplicate)}.`);
        }
        return { ok: true, value: value as Record<string, unknown> };
      }
      if (inArray) (current as unknown[]).push(value);
      else store(current as Record<string, unknown>, key, value);
      pos = skipSpace(text, pos);
      const next = text.charCodeAt(pos);
      if (next === 0x2c) {
        pos = skipSpace(text, pos + 1);
        if (!inArray) {
          const problem = readKey();
          if (problem) return problem;
        }
        break;
      }
      if (next !== (inArray ? 0x5d : 0x7d)) return unexpected(pos);
      pos++;
      value = current;
      current = containers.pop();
      inArray = arrays.pop() ?? false;
      key = parentKeys.pop() ?? '';
    }
  }
}

/** Stores a member; `__proto__` becomes an own property, as with `JSON.parse`. */
function store(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

function skipSpace(text: string, pos: number): number {
  for (;;) {
    const code = text.charCodeAt(pos);
    if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) pos++;
    else return pos;
  }
}

/** End of the JSON number at `pos`, or -1 when it does not follow the grammar. */
function numberEnd(text: string, pos: number): number {
  if (text.charCodeAt(pos) === 0x2d) pos++;
  let code = text.charCodeAt(pos);
  if (code === 0x30) pos++;
  else if (code >= 0x31 && code <= 0x39) pos = digitsEnd(text, pos + 1);
  else return -1;
  if (text.charCodeAt(pos) === 0x2e) {
    const end = digitsEnd(text, pos + 1);
    if (end === pos + 1) return -1;
    pos = end;
  }
  code = text.charCodeAt(pos);
  if (code === 0x65 || code === 0x45) {
    pos++;
    code = text.charCodeAt(pos);
    if (code === 0x2b || code === 0x2d) pos++;
    const end = digitsEnd(text, pos);
    if (end === pos) return -1;
    pos = end;
  }
  return pos;
}

function digitsEnd(text: string, pos: number): number {
  for (;;) {
    const code = text.charCodeAt(pos);
    if (code >= 0x30 && code <= 0x39) pos++;
    else return pos;
  }
}
