import { connectionRefused, createFaultQueue, sleep, type Fault, type FaultPlan } from './fault';
import { faultStream, type FaultStreamOptions } from './fault-stream';
import { fetchOfHandler } from './fetch-of-handler';
import { parseJsonBody } from './parse-json-body';

/** A request the fake received. */
export interface RecordedRequest {
  method: string;
  url: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body; undefined when there was none or it was not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of whatever was sent.
  body: any;
}

/** A fake upstream, in-process. */
export interface FakeUpstream {
  /** In-process transport: `fetch('http://fake/v1/chat/completions', init)`. */
  fetch: typeof globalThis.fetch;
  /** What arrived, in order. */
  requests: RecordedRequest[];
  /** Response bodies still open (not read to the end, errored or cancelled): 0 means no leak. */
  readonly open: number;
  /** Requests held unanswered by a `hang` fault and not aborted yet: 0 means the caller let go of each. */
  readonly hanging: number;
  /** Replaces the fault plan. */
  setFaults(faults: FaultPlan): void;
  /** The same as `fetch`, on a `Request`. */
  handle(request: Request): Promise<Response>;
}

/** What a fake's route gets besides the request. */
export interface FakeExchange {
  /** This request's fault, if any (`refuse` never gets here: the fake's fetch has already rejected). */
  fault: Fault | undefined;
  /** The request body as text ('' when there is none); the request itself stays unread. */
  text: string;
  /** Every request so far, this one included. */
  requests: readonly RecordedRequest[];
  /** A 200 body of `events` with a fault applied, counted in `open` until it ends, aborting with the request. */
  stream(events: string[], options: Pick<FaultStreamOptions, 'fault' | 'malformed' | 'errorEvent'>): ReadableStream<Uint8Array>;
}

/** The options every fake takes (each fake's options extend these). */
export interface FakeUpstreamOptions {
  /** Faults: a list used one per request in order, or a function asked on every request. */
  faults?: FaultPlan;
  /** Delay before the reply's headers, in milliseconds (the request's signal aborts it). */
  latencyMs?: number;
  /** Waits for latency and `drip` faults; default a real timer. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** A fake's own API: key checks, status faults, validation and the reply. */
export type FakeRoute = (request: Request, exchange: FakeExchange) => Promise<Response> | Response;

/**
 * The plumbing every fake shares: a fault per request (`refuse` rejects like undici), the request
 * recorded, latency, the `open` body count, and an abort-faithful `fetch` around `handle`.
 * @example
 * const upstream = createFakeUpstream({ faults }, (request, { fault, stream }) => new Response(stream(['{}'], { fault, malformed: '{' })));
 */
export function createFakeUpstream(options: FakeUpstreamOptions, route: FakeRoute): FakeUpstream {
  const faults = createFaultQueue(options.faults);
  const wait = options.sleep ?? sleep;
  const requests: RecordedRequest[] = [];
  let open = 0;
  let hanging = 0;

  async function handle(request: Request): Promise<Response> {
    const fault = faults.next();
    if (fault?.kind === 'refuse') throw connectionRefused(request.url);
    // A clone, so routes that hand the request on (the images fake) can still read its body.
    const text = await request.clone().text();
    requests.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body: parseJsonBody(text) });
    if (fault?.kind === 'hang') {
      hanging++;
      // Accepted and never answered: only the caller's abort ends it, as with a silent server.
      await new Promise<never>((_, reject) => {
        const stop = () => {
          hanging--;
          reject(request.signal.reason);
        };
        if (request.signal.aborted) stop();
        else request.signal.addEventListener('abort', stop, { once: true });
      });
    }
    if (options.latencyMs) await wait(options.latencyMs, request.signal);
    const stream: FakeExchange['stream'] = (events, streamOptions) => {
      open++;
      return faultStream(events, { ...streamOptions, signal: request.signal, onClose: () => void open--, sleep: wait });
    };
    return await route(request, { fault, text, requests, stream });
  }

  return {
    fetch: fetchOfHandler(handle),
    requests,
    get open() {
      return open;
    },
    get hanging() {
      return hanging;
    },
    setFaults: (plan) => faults.set(plan),
    handle,
  };
}
