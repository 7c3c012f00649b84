import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { fetchOfHandler } from './fetch-of-handler';

setFlagsFromString('--expose-gc');
const collectGarbage: () => void = runInNewContext('gc');
const nextMacrotask = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('fetchOfHandler', () => {
  it('a reply body still sees the caller’s abort after a garbage collection', async () => {
    const fetch = fetchOfHandler(async (request) => {
      // A stalled body that ends only when the request's signal aborts (as the fakes' stall fault does).
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          request.signal.addEventListener('abort', () => controller.error(request.signal.reason), { once: true });
        },
      });
      return new Response(body);
    });
    const caller = new AbortController();
    let outcome = 'still reading';
    // Nothing outside holds this reader, as in a test body awaiting it: only the abort can end it.
    void (async () => {
      const response = await fetch('http://fake/', { signal: caller.signal });
      await response.body!.getReader().read();
    })().then(
      () => (outcome = 'read'),
      (error: unknown) => (outcome = error instanceof Error ? error.name : 'other'),
    );
    await nextMacrotask();
    collectGarbage();
    await nextMacrotask();
    caller.abort();
    await nextMacrotask();
    expect(outcome).toBe('AbortError');
  });
});
