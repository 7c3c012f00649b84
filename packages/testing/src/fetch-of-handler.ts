/**
 * A `fetch` that calls a fake's handler in-process. Like a real fetch it rejects with the abort
 * reason as soon as the request's signal aborts, even while the handler is still "thinking".
 * @example
 * const fetch = fetchOfHandler(handle);
 * const provider = anthropic({ baseURL: 'http://fake/v1', apiKey: 'k', fetch });
 */
export function fetchOfHandler(handle: (request: Request) => Promise<Response>): typeof globalThis.fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.signal.aborted) throw request.signal.reason;
    // Listen on the caller's own signal: a Request follows it only through a weak reference, so a
    // handler that waits on nothing else (a hung upstream) could be collected and never see the abort.
    const signal = init?.signal ?? request.signal;
    // The reply's body follows `request.signal` too, after the handler has answered, and a fake body
    // has no socket to keep it reachable: a stalled one, its reader and the Request form a cycle that
    // only that weak reference points at, so a collection before a deadline would leave the reader
    // waiting forever (a test timing out, more often on Node 24). Hold the Request from the caller's
    // signal, which its own holder keeps alive, for as long as that signal can still fire.
    init?.signal?.addEventListener('abort', () => request, { once: true });
    return await new Promise<Response>((resolve, reject) => {
      const onAbort = () => reject(request.signal.aborted ? request.signal.reason : signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      handle(request)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }) as typeof globalThis.fetch;
}
