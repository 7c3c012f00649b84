/**
 * The metered stream's own rules, where the first mutation run of packages/gateway/src/metered-stream.ts
 * (docs/testing.md) found no test: settlement exactly once, a settlement failure reported, a client
 * already gone, an upstream that fails or is let go while it is still opening, and the stall timer
 * that never sleeps past the shorter limit. On a hand-made upstream and format, manual time.
 */
import { type BodySource, bodySource, type ByteSink, type ErrorCode } from '@tollgate/core';
import type { ChunkBatch, ChunkBatches } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { createMeteredStream, type OpenedUpstream, type StreamEnd, type StreamFormat } from './metered-stream';
import { flush, manualClock, manualTimers } from '../test/test-timers';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Items are strings; the client's bytes are `item;` each, `done.` at the end, `error:<code>.` on a failure. */
const format: StreamFormat<string> = {
  item: (value) => encoder.encode(`${value};`),
  done: () => encoder.encode('done.'),
  errorEvent: (code: ErrorCode) => encoder.encode(`error:${code}.`),
};

/** Batches answered in order (then the end), with `readNow` unless `promised`; counts cancels. */
function upstreamOf(batches: string[][], promised = false) {
  const queue = batches.map((batch) => batch as ChunkBatch<string>);
  let cancels = 0;
  const next = () => (queue.length > 0 ? queue.shift() : undefined);
  const chunkBatches: ChunkBatches<string> = {
    read: async () => next(),
    cancel: async () => {
      cancels++;
    },
    ...(promised ? {} : { readNow: () => next(), whenReadable: () => undefined }),
  };
  return { batches: chunkBatches, cancels: () => cancels };
}

/** A metered stream on manual time, recording its settlements, reports and slot releases. */
function metered(
  upstream: OpenedUpstream<string> | Promise<OpenedUpstream<string>>,
  options: { signal?: AbortSignal; idleTimeoutMs?: number; clientStallTimeoutMs?: number; settle?: (end: StreamEnd) => Promise<unknown> } = {},
) {
  const clock = manualClock();
  const time = manualTimers(clock);
  const settles: StreamEnd[] = [];
  const reports: unknown[] = [];
  let releases = 0;
  const stream = createMeteredStream<string>({
    upstream,
    format,
    abort: new AbortController(),
    signal: options.signal ?? new AbortController().signal,
    releaseSlot: () => {
      releases++;
    },
    settle:
      options.settle ??
      (async (end) => {
        settles.push(end);
      }),
    report: (error) => void reports.push(error),
    keepaliveMs: 60_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    ...(options.clientStallTimeoutMs === undefined ? {} : { clientStallTimeoutMs: options.clientStallTimeoutMs }),
    headersTimeoutMs: 60_000,
    startedAt: clock.now(),
    timers: time.timers,
    now: clock.now,
  });
  return { body: stream.body, finished: stream.finished, time, settles, reports, releases: () => releases };
}

/** A sink that records the text written to it; `full` makes `write` answer false. */
function recordingSink(full = false) {
  const state = { text: '', ends: 0, errors: [] as unknown[] };
  const sink: ByteSink = {
    write: (chunk) => {
      state.text += decoder.decode(chunk);
      return !full;
    },
    end: () => void state.ends++,
    error: (reason) => void state.errors.push(reason),
  };
  return { sink, state };
}

async function readAll(body: ReadableStream<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
  return text;
}

const sourceOf = (body: ReadableStream<Uint8Array>): BodySource => {
  const source = bodySource(body);
  if (!source) throw new Error('the body offers no source');
  return source;
};

describe('createMeteredStream: settlement exactly once', () => {
  it('a stream written to its end and then cancelled by its sink is paid once, as done, its slot freed once', async () => {
    const upstream = upstreamOf([['a', 'b'], ['c']]);
    const s = metered({ batches: upstream.batches });
    const { sink, state } = recordingSink();
    const source = sourceOf(s.body);
    source.start(sink);
    await s.finished;
    expect(state).toEqual({ text: 'a;b;c;done.', ends: 1, errors: [] });
    source.cancel('late');
    await flush();
    expect(s.settles).toEqual([{ outcome: 'done' }]);
    expect(s.releases()).toBe(1);
    expect(upstream.cancels()).toBe(0);
  });

  it('a settlement that fails is reported, and the stream still finishes', async () => {
    const failure = new Error('the ledger is gone');
    const s = metered({ batches: upstreamOf([['a']]).batches }, { settle: () => Promise.reject(failure) });
    expect(await readAll(s.body)).toBe('a;done.');
    await s.finished;
    expect(s.reports).toEqual([failure]);
  });

  it('a client already gone when the stream is made ends it at once, as client_gone, the upstream let go', async () => {
    const gone = new AbortController();
    gone.abort();
    const upstream = upstreamOf([['a']]);
    const s = metered({ batches: upstream.batches }, { signal: gone.signal });
    await s.finished;
    expect(s.settles).toEqual([{ outcome: 'client_gone' }]);
    expect(upstream.cancels()).toBe(1);
    expect(await readAll(s.body)).toBe('');
    // Nothing to write to a sink either.
    expect(bodySource(s.body)).toBeUndefined();
  });
});

describe('createMeteredStream: an upstream still opening', () => {
  for (const mode of ['read', 'written'] as const) {
    it(`that fails after the body was handed out ends the ${mode} body with the error event, as upstream_failed`, async () => {
      let failOpening: (error: unknown) => void = () => undefined;
      const opening = new Promise<OpenedUpstream<string>>((_, reject) => (failOpening = reject));
      const s = metered(opening);
      let text: Promise<string>;
      if (mode === 'read') text = readAll(s.body);
      else {
        const { sink, state } = recordingSink();
        sourceOf(s.body).start(sink);
        text = s.finished.then(() => {
          expect(state.ends).toBe(1);
          return state.text;
        });
      }
      await flush();
      failOpening(new Error('connection refused'));
      expect(await text).toBe('error:upstream_error.');
      await s.finished;
      expect(s.settles).toEqual([{ outcome: 'upstream_failed', code: 'upstream_error' }]);
    });
  }

  for (const mode of ['unread', 'read', 'written'] as const) {
    it(`that answers after the ${mode} stream ended is let go at once`, async () => {
      let answer: (opened: OpenedUpstream<string>) => void = () => undefined;
      const opening = new Promise<OpenedUpstream<string>>((resolve) => (answer = resolve));
      const gone = new AbortController();
      const s = metered(opening, { signal: gone.signal });
      if (mode === 'read') void readAll(s.body).catch(() => undefined);
      if (mode === 'written') sourceOf(s.body).start(recordingSink().sink);
      await flush();
      gone.abort();
      await s.finished;
      expect(s.settles).toEqual([{ outcome: 'client_gone' }]);
      const upstream = upstreamOf([['a']]);
      answer({ batches: upstream.batches });
      await flush();
      expect(upstream.cancels()).toBeGreaterThanOrEqual(1);
    });
  }
});

describe('createMeteredStream: a pass-through body (no error event)', () => {
  it('that fails upstream errors the sink it is written to with the failure, as upstream_failed', async () => {
    const failure = new TypeError('terminated');
    const batches: ChunkBatches<string> = {
      read: () => Promise.reject(failure),
      cancel: async () => undefined,
    };
    const clock = manualClock();
    const time = manualTimers(clock);
    const settles: StreamEnd[] = [];
    const passThrough: StreamFormat<string> = { item: format.item, done: () => undefined };
    const stream = createMeteredStream<string>({
      upstream: { batches },
      format: passThrough,
      abort: new AbortController(),
      signal: new AbortController().signal,
      releaseSlot: () => undefined,
      settle: async (end) => void settles.push(end),
      report: () => undefined,
      keepaliveMs: 60_000,
      idleTimeoutMs: 30_000,
      headersTimeoutMs: 60_000,
      startedAt: clock.now(),
      timers: time.timers,
      now: clock.now,
    });
    const { sink, state } = recordingSink();
    sourceOf(stream.body).start(sink);
    await stream.finished;
    expect(state).toEqual({ text: '', ends: 0, errors: [failure] });
    expect(settles).toEqual([{ outcome: 'upstream_failed', code: 'upstream_error' }]);
  });
});

describe('createMeteredStream: the stall timer', () => {
  it('never sleeps past the shorter limit: a sink full since the upstream answered is let go at its client stall limit, not the idle one', async () => {
    let answer: (opened: OpenedUpstream<string>) => void = () => undefined;
    const opening = new Promise<OpenedUpstream<string>>((resolve) => (answer = resolve));
    // The timer is armed while the upstream is awaited (the headers deadline, 60 s).
    const s = metered(opening, { idleTimeoutMs: 10_000, clientStallTimeoutMs: 1_000 });
    const { sink, state } = recordingSink(true);
    sourceOf(s.body).start(sink);
    answer({ batches: upstreamOf([['a'], ['b']]).batches });
    await flush();
    expect(state.text).toBe('a;');
    await s.time.advance(999);
    expect(s.settles).toEqual([]);
    await s.time.advance(1);
    await s.finished;
    expect(s.settles).toEqual([{ outcome: 'client_gone' }]);
  });

  it('a sink that never resumes is let go at its stall limit when the batches have no readNow either', async () => {
    const upstream = upstreamOf([['a'], ['b']], true);
    const s = metered({ batches: upstream.batches }, { idleTimeoutMs: 10_000, clientStallTimeoutMs: 1_000 });
    const { sink, state } = recordingSink(true);
    sourceOf(s.body).start(sink);
    await flush();
    expect(state.text).toBe('a;');
    await s.time.advance(1_000);
    await s.finished;
    expect(s.settles).toEqual([{ outcome: 'client_gone' }]);
    expect(upstream.cancels()).toBe(1);
  });
});
