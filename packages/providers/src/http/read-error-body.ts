import { concatBytes } from '@tollgate/core';
/** The most of an error body that is read: enough for any real error JSON, bounded against a hostile upstream. */
export const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * Reads at most 64 KiB of an error body, parsed as JSON when it is JSON, else the text. The body
 * is only handed to an error mapper, never copied into what the client sees.
 */
export async function readErrorBody(response: Response): Promise<unknown> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ERROR_BODY_LIMIT) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut mid-way still maps by its status.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const text = new TextDecoder().decode(concatBytes(chunks).subarray(0, ERROR_BODY_LIMIT));
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
