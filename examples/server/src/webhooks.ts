import { createHmac, timingSafeEqual } from 'node:crypto';
import type { GatewayEvent } from '@tollgate/gateway';

/** Options of {@link createWebhooks}. Every number has a default; tests shorten them. */
export interface WebhookOptions {
  /** Where each event is POSTed (`TOLLGATE_WEBHOOK_URL`). */
  url: string;
  /** The HMAC-SHA256 key of `Tollgate-Signature` (`TOLLGATE_WEBHOOK_SECRET`). Never logged. */
  secret: string;
  /** Log lines (failures, drops): never the secret, the URL's path or query, or the target's reply body. */
  log: (line: Record<string, unknown>) => void;
  /** `User-Agent` of the deliveries, e.g. `tollgate/0.1.0`. */
  userAgent?: string;
  /** Attempts per event, the first included (default 13: about an hour of retries, see `retryBaseMs`). */
  maxAttempts?: number;
  /** The wait after the first failure (default 1,000 ms); it doubles after each failure, with jitter. */
  retryBaseMs?: number;
  /** The longest wait between two attempts (default 30 minutes). */
  retryMaxMs?: number;
  /** One attempt's deadline, headers and body (default 10,000 ms): past it the attempt failed. */
  timeoutMs?: number;
  /** Events waiting (for a first attempt or a retry) at most; past it the oldest is dropped (default 10,000). */
  maxQueue?: number;
  /** Attempts in flight at once (default 4). */
  concurrency?: number;
  /** The fetch to deliver with (tests). */
  fetch?: typeof fetch;
  /** A number in [0, 1) for the jitter (tests). */
  random?: () => number;
}

/** Delivery counts since start, also on /metrics. */
export interface WebhookCounts {
  /** Events a 2xx accepted. */
  delivered: number;
  /** Events given up after their last attempt. */
  failed: number;
  /** Events dropped unsent because the queue was full. */
  dropped: number;
  /** Attempts that failed (a non-2xx, a timeout, a connection error); each event may fail several. */
  attemptsFailed: number;
}

/** The webhook sender: `send` is the gateway's `onEvent`. */
export interface Webhooks {
  /** Queues an event and returns at once; never throws. */
  send(event: GatewayEvent): void;
  readonly counts: WebhookCounts;
  /** Events waiting or in flight. */
  readonly pending: number;
  /** The counts in the Prometheus text format, for /metrics. */
  renderMetrics(): string;
  /**
   * Stops retrying: what is queued gets one last attempt now, within `graceMs` (default 5,000);
   * what is still undelivered after that is lost, and logged as such (events are not kept across a
   * restart).
   */
  close(graceMs?: number): Promise<void>;
}

/** Header names of a delivery. */
export const WEBHOOK_HEADERS = {
  id: 'tollgate-event-id',
  type: 'tollgate-event-type',
  signature: 'tollgate-signature',
} as const;

/**
 * `Tollgate-Signature` for a body sent at `timestamp` (unix seconds): `t=<timestamp>,v1=<hex>`, the
 * hex HMAC-SHA256 of `"<timestamp>.<body>"` under the secret (Stripe's scheme).
 */
export function signWebhook(secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * Checks a delivery as a receiver should (docs/events.md): the header's `t` within
 * `toleranceSeconds` (default 300) of now, and one of its `v1` values the HMAC-SHA256 of
 * `"<t>.<raw body>"` under the secret, compared in constant time. `body` must be the raw bytes
 * received, before any JSON parsing.
 */
export function verifyWebhook(
  secret: string,
  header: string | null | undefined,
  body: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === 't' && value && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (name === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest();
  return signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
}

/** Failure lines logged per window at most (the counters have every failure). */
const FAILURE_LINES = 20;
const FAILURE_WINDOW_MS = 10_000;

interface Job {
  event: GatewayEvent;
  body: string;
  /** Attempts made so far. */
  attempts: number;
  /** Unix ms from when the next attempt may start. */
  due: number;
}

/**
 * Signed webhooks for the gateway's events (docs/events.md): each event POSTed as JSON to one URL
 * with `Tollgate-Event-Id`, `Tollgate-Event-Type` and `Tollgate-Signature`; a 2xx ends it, anything
 * else (or a timeout, or no connection) is retried with exponential backoff and jitter, the same id
 * every time, up to `maxAttempts`. At least once while the process lives: a receiver dedupes on the
 * id. The queue is in memory and bounded (the oldest dropped past `maxQueue`); `send` never waits,
 * so a target that is down or slow never slows a request.
 *
 * @example
 * const webhooks = createWebhooks({ url, secret, log });
 * createGateway({ ...options, onEvent: webhooks.send });
 */
export function createWebhooks(options: WebhookOptions): Webhooks {
  const maxAttempts = options.maxAttempts ?? 13;
  const baseMs = options.retryBaseMs ?? 1_000;
  const maxMs = options.retryMaxMs ?? 30 * 60_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxQueue = options.maxQueue ?? 10_000;
  const concurrency = options.concurrency ?? 4;
  const send = options.fetch ?? fetch;
  const random = options.random ?? Math.random;
  const { log, secret } = options;
  // Only the target's origin is ever logged: its path or query may carry a token.
  const target = new URL(options.url).origin;
  const counts: WebhookCounts = { delivered: 0, failed: 0, dropped: 0, attemptsFailed: 0 };
  /** Jobs waiting, in the order they were queued (a failed job goes to the back for its retry); the front is dropped first. */
  const queue: Job[] = [];
  const inFlight = new Set<AbortController>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerDue = Number.POSITIVE_INFINITY;
  let closing = false;
  let lastDropLog = 0;
  // Failure lines: at most FAILURE_LINES every FAILURE_WINDOW_MS, so an outage with thousands of
  // events queued does not flood the log; the next line says how many were left out.
  let windowStart = 0;
  let windowLines = 0;
  let suppressed = 0;
  const logFailure = (line: Record<string, unknown>) => {
    const now = Date.now();
    if (now - windowStart >= FAILURE_WINDOW_MS) {
      windowStart = now;
      windowLines = 0;
    }
    if (windowLines >= FAILURE_LINES) {
      suppressed++;
      return;
    }
    windowLines++;
    log(suppressed > 0 ? { ...line, suppressed } : line);
    suppressed = 0;
  };
  let idle: (() => void) | undefined;

  /** The wait after the `attempts`-th failure: base × 2^(attempts−1), capped, then between half and all of it. */
  const backoff = (attempts: number) => {
    const full = Math.min(maxMs, baseMs * 2 ** (attempts - 1));
    return Math.round(full / 2 + (random() * full) / 2);
  };

  const attempt = async (job: Job) => {
    job.attempts++;
    const controller = new AbortController();
    inFlight.add(controller);
    const deadline = setTimeout(() => controller.abort(), timeoutMs);
    let failure: Record<string, unknown> | undefined;
    try {
      const response = await send(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': options.userAgent ?? 'tollgate-webhooks',
          [WEBHOOK_HEADERS.id]: job.event.id,
          [WEBHOOK_HEADERS.type]: job.event.type,
          [WEBHOOK_HEADERS.signature]: signWebhook(secret, job.body, Math.floor(Date.now() / 1000)),
        },
        body: job.body,
        signal: controller.signal,
        redirect: 'manual',
      });
      // The reply's body is never read (nor logged): only its status counts.
      await response.body?.cancel().catch(() => {});
      if (response.status < 200 || response.status > 299) failure = { status: response.status };
    } catch (error) {
      failure = controller.signal.aborted ? { error: closing ? 'cut at shutdown' : `timeout after ${timeoutMs} ms` } : { error: describe(error, target) };
    } finally {
      clearTimeout(deadline);
      inFlight.delete(controller);
    }
    if (!failure) {
      counts.delivered++;
      return;
    }
    counts.attemptsFailed++;
    const base = { eventId: job.event.id, type: job.event.type, target, attempt: job.attempts, ...failure };
    if (job.attempts >= maxAttempts || closing) {
      counts.failed++;
      logFailure({ level: 'error', msg: closing ? 'webhook event lost at shutdown' : 'webhook event given up', ...base });
      return;
    }
    const retryInMs = backoff(job.attempts);
    job.due = Date.now() + retryInMs;
    enqueue(job);
    logFailure({ level: 'warn', msg: 'webhook delivery failed', ...base, retryInMs });
  };

  const enqueue = (job: Job) => {
    queue.push(job);
    while (queue.length > maxQueue) {
      const oldest = queue.shift();
      counts.dropped++;
      const now = Date.now();
      // One line at most every 10 seconds however fast events are dropped; the counter has them all.
      if (now - lastDropLog >= 10_000) {
        lastDropLog = now;
        log({ level: 'warn', msg: 'webhook queue full: oldest event dropped', eventId: oldest?.event.id, maxQueue, dropped: counts.dropped });
      }
    }
  };

  /** Starts every due job there is room for, and arms one timer for the next one due. */
  const pump = () => {
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (let index = 0; index < queue.length && inFlight.size < concurrency; ) {
      const job = queue[index] as Job;
      if (job.due <= now || closing) {
        queue.splice(index, 1);
        attempt(job)
          .catch(() => {}) // a log function that threw: the delivery's outcome is already counted
          .finally(pump);
      } else {
        next = Math.min(next, job.due);
        index++;
      }
    }
    if (queue.length === 0 && inFlight.size === 0) idle?.();
    if (closing || next === Number.POSITIVE_INFINITY || next >= timerDue) return;
    if (timer) clearTimeout(timer);
    timerDue = next;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerDue = Number.POSITIVE_INFINITY;
        pump();
      },
      Math.max(0, next - now),
    );
    timer.unref?.();
  };

  return {
    send(event) {
      try {
        if (closing) {
          counts.dropped++;
          return;
        }
        enqueue({ event, body: JSON.stringify(event), attempts: 0, due: 0 });
        // Never on the caller's stack: the request that caused the event is not slowed by its delivery.
        setImmediate(pump);
      } catch {
        // Never into the caller.
      }
    },
    counts,
    get pending() {
      return queue.length + inFlight.size;
    },
    renderMetrics() {
      return [
        '# HELP tollgate_webhook_events_total Webhook events by outcome: delivered (a 2xx), failed (given up after the last attempt), dropped (queue full).',
        '# TYPE tollgate_webhook_events_total counter',
        `tollgate_webhook_events_total{outcome="delivered"} ${counts.delivered}`,
        `tollgate_webhook_events_total{outcome="failed"} ${counts.failed}`,
        `tollgate_webhook_events_total{outcome="dropped"} ${counts.dropped}`,
        '# HELP tollgate_webhook_attempts_failed_total Webhook attempts that failed (non-2xx, timeout, no connection).',
        '# TYPE tollgate_webhook_attempts_failed_total counter',
        `tollgate_webhook_attempts_failed_total ${counts.attemptsFailed}`,
        '# HELP tollgate_webhook_pending Webhook events waiting or in flight.',
        '# TYPE tollgate_webhook_pending gauge',
        `tollgate_webhook_pending ${queue.length + inFlight.size}`,
        '',
      ].join('\n');
    },
    async close(graceMs = 5_000) {
      if (closing) return;
      closing = true;
      if (timer) clearTimeout(timer);
      const done = new Promise<void>((resolve) => {
        idle = resolve;
      });
      pump(); // every queued event: one last attempt now
      const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([done, grace]);
      for (const controller of inFlight) controller.abort();
      const lost = queue.length;
      if (lost > 0) {
        counts.failed += lost;
        log({ level: 'error', msg: 'webhook events lost at shutdown', count: lost });
        queue.length = 0;
      }
    },
  };
}

/**
 * An error for the log: its message and the cause's code (ECONNREFUSED), nothing else; any URL the
 * message quotes (fetch's own errors do) shown as `target`, its origin: a path or query may carry a token.
 */
function describe(error: unknown, target: string): string {
  const text = error instanceof Error ? error.message : String(error);
  const message = text.replace(/\bhttps?:\/\/\S+/gi, target);
  const code = error instanceof Error ? (error.cause as { code?: unknown } | undefined)?.code : undefined;
  return typeof code === 'string' ? `${message} (${code})` : message;
}
