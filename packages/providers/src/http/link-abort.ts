/** The signal an upstream call runs under, a way to abort it, and a way to stop following the caller's. */
export interface LinkedAbort {
  signal: AbortSignal;
  abort(): void;
  /** Called once the call is over; {@link linkAbort} adds no listener to the caller's signal, so it has nothing to remove. */
  unlink(): void;
}

const ignore = () => undefined;

/**
 * The signal an upstream fetch runs under. Without a caller's signal, a controller of our own:
 * cancelling a returned stream must abort the upstream fetch even when the caller passed no signal.
 * With one, that signal itself (no second controller and listener per call): `abort` and `unlink`
 * do nothing, and a stream that ends early lets the upstream go by cancelling the reply's body,
 * which closes the request (a fetch's body cancel aborts it) — the caller's own abort still
 * reaches the fetch directly.
 */
export function linkAbort(outer: AbortSignal | undefined): LinkedAbort {
  if (outer) return { signal: outer, abort: ignore, unlink: ignore };
  const controller = new AbortController();
  return { signal: controller.signal, abort: () => controller.abort(), unlink: ignore };
}
