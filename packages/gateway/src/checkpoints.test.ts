/**
 * Crash checkpoints (checkpoints.ts, docs/architecture.md, Billing): what a stream delivered is
 * written on its hold once a tick, in one store call for all streams, so that a stream whose
 * instance dies is still charged what it delivered when its hold expires.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { estimateCompletionTokens, type HoldCheckpoint, memoryStore, type Store } from '@tollgate/billing';
import type { ModelConfig } from '@tollgate/core';
import { openaiCompatible } from '@tollgate/providers';
import { fakeOpenAI } from '@tollgate/testing';
import { CHAT_PRICE, chatBody, setup, type TestGateway, UPSTREAM_KEY } from '../test/test-harness';
import { charges, expectBooksBalanced, expectLedgerAddsUp, settled } from '../test/test-leaks';
import { stepReader } from '../test/test-sse';
import { flush, manualClock, manualTimers, type ManualTimers } from '../test/test-timers';
import { CHECKPOINT_INTERVAL_MS, createCheckpoints, renewalIntervalMs } from './checkpoints';

const WORDS = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
/** 'Hello there' estimated: ceil(11 / 4) = 3 tokens + 4 for the message. */
const PROMPT_ESTIMATE = 7;
/** What the early-stop rule charges for `text` at the test price (1 a prompt token, 2 a completion token). */
const deliveredCost = (text: string) => PROMPT_ESTIMATE + 2 * estimateCompletionTokens(text);
const contentOf = (payloads: string[]) =>
  payloads.map((payload) => (JSON.parse(payload) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '').join('');

/** A store that records its checkpoint calls, and can be made slow or failing. */
function recordingStore(clock: { now: () => number }) {
  const store = memoryStore({ now: clock.now });
  const calls: HoldCheckpoint[][] = [];
  const control = { fail: false, gate: undefined as Promise<void> | undefined };
  const recording: Store = {
    ...store,
    async checkpoint(entries) {
      calls.push([...entries]);
      if (control.gate) await control.gate;
      if (control.fail) throw new Error('store down');
      return store.checkpoint?.(entries) ?? 0;
    },
  };
  return { store: recording, calls, control };
}

/** Checkpoints on manual timers over a recording store. */
function checkpointsOn(options: { ttlMs: number; intervalMs?: number }) {
  const clock = manualClock();
  const time = manualTimers(clock);
  const recorded = recordingStore(clock);
  return { time, ...recorded, checkpoints: createCheckpoints({ store: recorded.store, timers: time.timers, ...options }) };
}

describe('createCheckpoints', () => {
  it('writes every touched hold whose cost rose in one call a tick, and arms a tick only while something is to write', async () => {
    const { time, calls, checkpoints } = checkpointsOn({ ttlMs: 60_000 });
    const costs = { a: 0, b: 0 };
    const a = checkpoints.track('hold_a', () => costs.a);
    const b = checkpoints.track('hold_b', () => costs.b);
    // The renewal timer only (one for every hold): nothing to checkpoint yet.
    expect(time.pending).toBe(1);
    costs.a = 10;
    a.touch();
    costs.b = 4;
    b.touch();
    expect(time.pending).toBe(2);
    await time.advance(CHECKPOINT_INTERVAL_MS - 1);
    expect(calls).toEqual([]);
    await time.advance(1);
    expect(calls).toEqual([
      [
        { holdId: 'hold_a', micros: 10, ttlMs: 60_000 },
        { holdId: 'hold_b', micros: 4, ttlMs: 60_000 },
      ],
    ]);
    expect(time.pending).toBe(1);
    // Many chunks within a tick are one write; a hold touched without a higher cost is not written.
    for (const micros of [11, 12, 13]) {
      costs.a = micros;
      a.touch();
    }
    b.touch();
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_a', micros: 13, ttlMs: 60_000 }]);
    await time.advance(5 * CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(2);
    // A stopped hold is not written: the tick it armed finds nothing to write.
    costs.a = 20;
    a.touch();
    a.stop();
    a.touch();
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(2);
    expect(time.pending).toBe(1);
    costs.b = 6;
    b.touch();
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_b', micros: 6, ttlMs: 60_000 }]);
    // Stopping the last hold clears every timer; a touch after its stop arms none.
    b.touch();
    b.stop();
    expect(time.pending).toBe(0);
    b.touch();
    expect(time.pending).toBe(0);
  });

  it('writes a hold just tracked at its first renewal, not at another hold’s checkpoint tick', async () => {
    const { time, calls, checkpoints } = checkpointsOn({ ttlMs: 60_000 });
    const streaming = checkpoints.track('hold_s', () => 9);
    streaming.touch();
    const quiet = checkpoints.track('hold_q');
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toEqual([[{ holdId: 'hold_s', micros: 9, ttlMs: 60_000 }]]);
    await time.advance(renewalIntervalMs(60_000) - CHECKPOINT_INTERVAL_MS);
    expect(calls.at(-1)).toEqual([
      { holdId: 'hold_s', micros: 9, ttlMs: 60_000 },
      { holdId: 'hold_q', micros: 0, ttlMs: 60_000 },
    ]);
    streaming.stop();
    quiet.stop();
  });

  it('a hold stopped while its checkpoint is written: the others of the write keep what it recorded', async () => {
    const { time, calls, control, checkpoints } = checkpointsOn({ ttlMs: 6_000 });
    const gone = checkpoints.track('hold_g', () => 5);
    const kept = checkpoints.track('hold_k', () => 7);
    gone.touch();
    kept.touch();
    let open = () => {};
    control.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toEqual([
      [
        { holdId: 'hold_g', micros: 5, ttlMs: 6_000 },
        { holdId: 'hold_k', micros: 7, ttlMs: 6_000 },
      ],
    ]);
    gone.stop();
    control.gate = undefined;
    open();
    await flush();
    // The renewal writes what the store has for the hold left: 7, not 0.
    await time.advance(renewalIntervalMs(6_000) - CHECKPOINT_INTERVAL_MS);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_k', micros: 7, ttlMs: 6_000 }]);
    // The same after a failed write: the hold stopped meanwhile is simply left out.
    const failing = checkpoints.track('hold_f', () => 3);
    failing.touch();
    control.fail = true;
    control.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    await time.advance(CHECKPOINT_INTERVAL_MS);
    failing.stop();
    control.gate = undefined;
    open();
    await flush();
    control.fail = false;
    // The next renewal: the hold left only, the stopped one not written again.
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_k', micros: 7, ttlMs: 6_000 }]);
    expect(calls.flat().filter((entry) => entry.holdId === 'hold_f')).toHaveLength(1);
    kept.stop();
    expect(time.pending).toBe(0);
  });

  it('writes a failed tick again on the next, and waits for a slow write rather than queue another', async () => {
    // A long TTL: no renewal falls within this test (renewals are tested below).
    const { time, calls, control, checkpoints } = checkpointsOn({ ttlMs: 60_000, intervalMs: 500 });
    let cost = 7;
    const x = checkpoints.track('hold_x', () => cost);
    x.touch();
    control.fail = true;
    await time.advance(500);
    control.fail = false;
    await time.advance(500);
    expect(calls).toEqual([[{ holdId: 'hold_x', micros: 7, ttlMs: 60_000 }], [{ holdId: 'hold_x', micros: 7, ttlMs: 60_000 }]]);
    let open = () => {};
    control.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    cost = 8;
    x.touch();
    await time.advance(500);
    cost = 9;
    x.touch();
    await time.advance(1_500);
    expect(calls).toHaveLength(3);
    control.gate = undefined;
    open();
    await flush();
    await time.advance(500);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_x', micros: 9, ttlMs: 60_000 }]);
    x.stop();
    expect(time.pending).toBe(0);
  });

  it('renews every live hold in one call every third of the TTL, with what it recorded (0 when nothing was delivered), until it stops', async () => {
    const { time, calls, checkpoints } = checkpointsOn({ ttlMs: 6_000 });
    expect(renewalIntervalMs(6_000)).toBe(2_000);
    expect(renewalIntervalMs(2)).toBe(1);
    // No timer while nothing is tracked.
    expect(time.pending).toBe(0);
    let streamed = 0;
    const whole = ['hold_1', 'hold_2', 'hold_3'].map((holdId) => checkpoints.track(holdId));
    const stream = checkpoints.track('hold_s', () => streamed);
    expect(time.pending).toBe(1);
    await time.advance(1_999);
    expect(calls).toEqual([]);
    await time.advance(1); // t = 2 s
    const renewal = (micros: number) => [
      { holdId: 'hold_1', micros: 0, ttlMs: 6_000 },
      { holdId: 'hold_2', micros: 0, ttlMs: 6_000 },
      { holdId: 'hold_3', micros: 0, ttlMs: 6_000 },
      { holdId: 'hold_s', micros, ttlMs: 6_000 },
    ];
    expect(calls).toEqual([renewal(0)]);
    // A stream's checkpoint (a tick later) renews it too; the next renewal writes the amount recorded.
    streamed = 40;
    stream.touch();
    await time.advance(CHECKPOINT_INTERVAL_MS); // t = 3 s
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_s', micros: 40, ttlMs: 6_000 }]);
    await time.advance(1_000); // t = 4 s
    expect(calls).toEqual([renewal(0), [{ holdId: 'hold_s', micros: 40, ttlMs: 6_000 }], renewal(40)]);
    // A stream touched before a renewal whose checkpoint tick is not due yet: written by the
    // renewal, in the same one call, and the tick then finds nothing left to write.
    await time.advance(1_500); // t = 5.5 s
    streamed = 55;
    stream.touch();
    await time.advance(500); // t = 6 s
    expect(calls.at(-1)).toEqual(renewal(55));
    await time.advance(500);
    expect(calls).toHaveLength(4);
    // A stopped hold is renewed no more; the others go on, every interval, one call each.
    whole[1]?.stop();
    await time.advance(4_000);
    expect(calls).toHaveLength(6);
    for (const call of calls.slice(4)) expect(call.map((entry) => entry.holdId)).toEqual(['hold_1', 'hold_3', 'hold_s']);
    for (const tracked of [whole[0], whole[2], stream]) tracked?.stop();
    expect(time.pending).toBe(0);
    await time.advance(10_000);
    expect(calls).toHaveLength(6);
  });

  it('keeps one entry and one handle for a hold tracked again: the new cost is checkpointed, the recorded amount kept', async () => {
    const { time, calls, checkpoints } = checkpointsOn({ ttlMs: 3_000 });
    const kept = checkpoints.track('hold_k');
    expect(checkpoints.track('hold_k', () => 12)).toBe(kept);
    kept.touch();
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toEqual([[{ holdId: 'hold_k', micros: 12, ttlMs: 3_000 }]]);
    // Tracked again without a cost: the cost stays, and is read at the next touch.
    expect(checkpoints.track('hold_k')).toBe(kept);
    await time.advance(1_000);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_k', micros: 12, ttlMs: 3_000 }]);
    kept.touch();
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_k', micros: 12, ttlMs: 3_000 }]);
    kept.stop();
    expect(time.pending).toBe(0);
    // Stopped, then tracked anew: a new entry, renewed again.
    const again = checkpoints.track('hold_k');
    expect(again).not.toBe(kept);
    kept.stop(); // the old handle stops nothing of the new entry
    await time.advance(1_000);
    expect(calls.at(-1)).toEqual([{ holdId: 'hold_k', micros: 0, ttlMs: 3_000 }]);
    again.stop();
    expect(time.pending).toBe(0);
  });

  it('writes a failed renewal again at the next tick, and one that met a slow write once that write is done', async () => {
    const { time, calls, control, checkpoints } = checkpointsOn({ ttlMs: 30_000, intervalMs: 1_000 });
    const held = checkpoints.track('hold_r');
    control.fail = true;
    await time.advance(10_000);
    expect(calls).toEqual([[{ holdId: 'hold_r', micros: 0, ttlMs: 30_000 }]]);
    control.fail = false;
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(2);
    // A renewal that falls during a write still in progress waits for it, then goes out.
    let open = () => {};
    control.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const streamed = checkpoints.track('hold_q', () => 3);
    streamed.touch();
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(3);
    await time.advance(10_000 - 2 * CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(3);
    control.gate = undefined;
    open();
    await flush();
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls.at(-1)).toEqual([
      { holdId: 'hold_r', micros: 0, ttlMs: 30_000 },
      { holdId: 'hold_q', micros: 3, ttlMs: 30_000 },
    ]);
    held.stop();
    streamed.stop();
    expect(time.pending).toBe(0);
  });

  it('tracks nothing on a store without checkpoint', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const { checkpoint: _, ...without } = memoryStore({ now: clock.now });
    const y = createCheckpoints({ store: without, timers: time.timers, ttlMs: 1_000 }).track('hold_y', () => 5);
    y.touch();
    expect(time.pending).toBe(0);
    y.stop();
  });
});

describe('a stream whose instance dies', () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    if (t) await settled(t);
    t = undefined;
  });

  async function streaming(time: ManualTimers, clock: ReturnType<typeof manualClock>) {
    const recorded = recordingStore(clock);
    t = await setup({ plan: 'pro', clock, timers: time.timers, store: recorded.store, holdTtlMs: 60_000, fakeOptions: { reply: WORDS } });
    return { t, ...recorded };
  }

  it('is charged what it delivered up to its last checkpoint once its hold expires, and only once', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const { t, calls } = await streaming(time, clock);
    const response = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    const requestId = response.headers.get('x-request-id');
    const reader = stepReader(response);
    let delivered = contentOf(await reader.take(4));
    expect(delivered).toBe('w0 w1 w2');
    // Nothing is written per chunk: the first write is the tick's.
    expect(calls).toEqual([]);
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toEqual([[{ holdId: expect.stringMatching(/^hold_/), micros: deliveredCost(delivered), ttlMs: 60_000 }]]);
    const holdId = calls[0]?.[0]?.holdId;
    delivered += contentOf(await reader.take(10));
    await time.advance(CHECKPOINT_INTERVAL_MS);
    const checkpointed = deliveredCost(delivered);
    expect(calls.at(-1)).toEqual([{ holdId, micros: checkpointed, ttlMs: 60_000 }]);
    // Delivered after the last tick: what the crash loses (at most one tick of delivery).
    await reader.take(5);
    // The process dies: its timers never fire again; the clock goes on past the hold's TTL.
    clock.advance(60_000 + CHECKPOINT_INTERVAL_MS);
    expect(await t.store.releaseExpired()).toBe(1);
    expect(await charges(t)).toEqual([expect.objectContaining({ micros: -checkpointed, kind: 'charge', holdId, requestId, meta: { outcome: 'checkpoint' } })]);
    await expectLedgerAddsUp(t);
    // Had the instance lived on and settled after all, nothing more is charged.
    await reader.cancel();
    await settled(t);
    expect(await charges(t)).toHaveLength(1);
    await expectBooksBalanced(t);
  });

  it('writes the checkpoints of all streams of the gateway in one store call a tick, and stops when they settle', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const { t, calls } = await streaming(time, clock);
    const readers = await Promise.all([1, 2, 3].map(async () => stepReader(await t.post('/v1/chat/completions', chatBody({ stream: true })))));
    for (const reader of readers) await reader.take(3);
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(3);
    // Only the stream that delivered more is written on the next tick.
    await readers[1]?.take(2);
    await time.advance(CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toHaveLength(1);
    for (const reader of readers) await reader.cancel();
    await settled(t);
    await time.advance(10 * CHECKPOINT_INTERVAL_MS);
    expect(calls).toHaveLength(2);
    expect(time.pending).toBe(0);
    expect(await charges(t)).toHaveLength(3);
    await expectBooksBalanced(t);
  });

  it('checkpoints a tee pass-through stream the same way, from the text read on the side', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const recorded = recordingStore(clock);
    const enclave = fakeOpenAI({ reply: WORDS });
    const vault: ModelConfig = {
      id: 'vault',
      type: 'chat',
      tier: 'tee',
      provider: 'enclave',
      upstream: 'gpt-4o-mini',
      max_output_tokens: 1_000,
      price: CHAT_PRICE,
    };
    const provider = openaiCompatible({ baseURL: 'http://enclave.test/v1', apiKey: UPSTREAM_KEY, fetch: enclave.fetch, attest: async () => undefined });
    t = await setup({
      clock,
      timers: time.timers,
      store: recorded.store,
      providers: { enclave: provider },
      models: [vault],
    });
    const reader = stepReader(await t.post('/v1/chat/completions', chatBody({ model: 'vault', stream: true })));
    const delivered = contentOf(await reader.take(6));
    expect(delivered).toBe('w0 w1 w2 w3 w4');
    await time.advance(CHECKPOINT_INTERVAL_MS);
    // The gateway's default hold TTL: a stream still delivering keeps its hold that long past each write.
    expect(recorded.calls).toEqual([[{ holdId: expect.stringMatching(/^hold_/), micros: deliveredCost(delivered), ttlMs: 900_000 }]]);
    await reader.cancel();
    await settled(t);
    expect(time.pending).toBe(0);
  });
});
