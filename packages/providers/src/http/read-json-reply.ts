import { readCappedBody } from './read-capped-body';

/**
 * The most of a 2xx JSON reply (or a non-streamed pass-through) that is read: 64 MiB, above any
 * real reply (ten large images as base64), and a bound on what one upstream can make the gateway
 * hold. Past it the reply is a broken one: `upstream_error`, accepted (docs/providers.md).
 */
export const REPLY_BODY_LIMIT = 64 * 1024 * 1024;

const UTF8 = new TextDecoder();

/**
 * A 2xx reply's JSON, read with a byte counter (see {@link REPLY_BODY_LIMIT}) instead of
 * `response.json()`, which reads whatever the upstream sends. Rejects as `json()` would for a body
 * that is not JSON or fails while read, and with a `RangeError` for one over the limit (the rest
 * let go): every caller maps a rejection to `upstream_error`, or to the caller's abort.
 *
 * @example
 * const reply = await readJsonReply(response);
 */
export async function readJsonReply(response: Response): Promise<unknown> {
  const { bytes } = await readCappedBody(response, REPLY_BODY_LIMIT, undefined, 'refuse');
  return JSON.parse(UTF8.decode(bytes));
}
