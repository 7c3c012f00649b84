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
    return await new Promise<Response>((resolve, reject) => {
      const onAbort = () => reject(request.signal.aborted ? request.signal.reason : signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      handle(request)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }) as typeof globalThis.fetch;
}
