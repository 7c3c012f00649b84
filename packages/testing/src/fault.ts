/**
 * Faults a fake upstream can inject, shared by every fake (OpenAI, Anthropic, Gemini, images,
 * search). Stream faults count the events a stream sent so far; for a non-streamed body the body
 * is the stream's only "event", so `afterChunks: 0` cuts, stalls or garbles it before any byte.
 */
export type Fault =
  /** Answer this status before the first byte, with the fake's own error body for it. */
  | { kind: 'status'; status: number; code?: string; message?: string; retryAfter?: number; body?: string }
  /** The connection is refused: the fake's `fetch` rejects like undici's (`TypeError: fetch failed`). */
  | { kind: 'refuse' }
  /** The request is taken (and recorded) but never answered: no status, no headers, until it is aborted. */
  | { kind: 'hang' }
  /** The connection drops after `afterChunks` events: the body errors (`TypeError: terminated`). */
  | { kind: 'cut'; afterChunks: number }
  /** The body ends cleanly after `afterChunks` events, without the stream's final marker. */
  | { kind: 'truncate'; afterChunks: number }
  /** Nothing more is sent after `afterChunks` events, until the client cancels. */
  | { kind: 'stall'; afterChunks: number }
  /** Every event waits `delayMs` before it is sent. */
  | { kind: 'drip'; delayMs: number }
  /** Event number `afterChunks` (0-based) is replaced by a malformed one. */
  | { kind: 'malformed'; afterChunks: number }
  /**
   * After `afterChunks` events, spaces for as long as the body is read (1 MiB a read): a line, an
   * event or a whole reply that never ends — a JSON body stays valid JSON all along.
   */
  | { kind: 'flood'; afterChunks: number }
  /** After `afterChunks` events, the stream sends the fake's error event and ends. */
  | { kind: 'error-event'; afterChunks: number; status?: number; code?: string; message?: string };

/**
 * Where a fake takes its faults from: a list used one per request, in order (then healthy
 * requests), or a function asked on every request.
 */
export type FaultPlan = Fault[] | (() => Fault | undefined);

/** A fake's fault source. */
export interface FaultQueue {
  /** The fault for the next request, if any. */
  next(): Fault | undefined;
  /** Replaces the plan. */
  set(plan: FaultPlan): void;
}

/**
 * Hands out faults request by request.
 *
 * @example
 * const faults = createFaultQueue([{ kind: 'status', status: 503 }]);
 * faults.next(); // the 503 fault; then undefined
 */
export function createFaultQueue(plan: FaultPlan = []): FaultQueue {
  let queue: Fault[] = [];
  let source: (() => Fault | undefined) | undefined;
  const set = (next: FaultPlan) => {
    if (typeof next === 'function') {
      source = next;
      queue = [];
    } else {
      source = undefined;
      queue = [...next];
    }
  };
  set(plan);
  return {
    next: () => (source ? source() : queue.shift()),
    set,
  };
}

/**
 * The error undici's `fetch` rejects with when a connection is refused, so code under test sees
 * what it will see in production.
 */
export function connectionRefused(url: string): TypeError {
  let port = '';
  try {
    const parsed = new URL(url);
    port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  } catch {
    port = '80';
  }
  const cause = Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), {
    errno: -111,
    code: 'ECONNREFUSED',
    syscall: 'connect',
    address: '127.0.0.1',
    port: Number(port),
  });
  return new TypeError('fetch failed', { cause });
}

/** The error undici's body stream errors with when the connection drops mid-body. */
export function connectionTerminated(): TypeError {
  const cause = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
  return new TypeError('terminated', { cause });
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first; leaves no timer behind. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
