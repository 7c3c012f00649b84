/**
 * A client that stops reading (metered-stream.ts; docs/architecture.md, Streams): back-pressure
 * keeps the upstream paused meanwhile, and after `clientStallTimeoutMs` without taking a byte the
 * stream is cut as a client that left: upstream aborted, slot freed, charged what was delivered.
 */
import { estimateCompletionTokens } from '@tollgate/billing';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody, setup, type SetupOptions, type TestGateway } from '../test/test-harness';
import { charges, expectNothingLeft, settled } from '../test/test-leaks';
import { stepReader } from '../test/test-sse';
import { flush, manualClock, manualTimers, type ManualTimers } from '../test/test-timers';

const WORDS = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
const STALL = 30_000;
/** 'Hello there' estimated: ceil(11 / 4) = 3 tokens + 4 for the message. */
const PROMPT_ESTIMATE = 7;

let opened: { t: TestGateway; time: ManualTimers } | undefined;
afterEach(async () => {
  if (opened) await settled(opened.t);
  opened = undefined;
});

async function open(options: SetupOptions = {}) {
  const clock = manualClock();
  const time = manualTimers(clock);
  // The upstream idle limit is far longer: only the client's own limit can cut these streams.
  const t = await setup({ clock, timers: time.timers, streamIdleTimeoutMs: 300_000, clientStallTimeoutMs: STALL, fakeOptions: { reply: WORDS }, ...options });
  opened = { t, time };
  return { t, time };
}

describe('a client that never reads', () => {
  it('keeps its slot until clientStallTimeoutMs, then is cut: upstream aborted, slot freed, the prompt charged', async () => {
    const { t, time } = await open();
    const response = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(response.status).toBe(200);
    // The body is never read. Back-pressure: the upstream is not read past its first event.
    await time.advance(STALL - 1);
    expect(t.fake.open).toBe(1);
    expect(t.fake.requests).toHaveLength(1);
    expect(await t.inFlight()).toBe(1);
    expect(t.gateway.active).toBe(1);
    await time.advance(1);
    await settled(t);
    expect(t.fake.open).toBe(0);
    expect(await t.inFlight()).toBe(0);
    // Nothing reached it: it pays the prompt, as any stream whose client left (Billing 3).
    expect((await charges(t)).map((entry) => entry.micros)).toEqual([-PROMPT_ESTIMATE]);
    expect(t.logs.at(-1)).toMatchObject({ status: 200, outcome: 'client_gone', completionTokens: 0, costMicros: PROMPT_ESTIMATE });
    expect(t.logs.at(-1)?.code).toBeUndefined();
    await expectNothingLeft(t, time);
  });

  it('counts from the last bytes it took, exactly, even with a much longer upstream limit; it pays what was delivered', async () => {
    const { t, time } = await open();
    const reader = stepReader(await t.post('/v1/chat/completions', chatBody({ stream: true })));
    const payloads: string[] = [];
    for (let i = 0; i < 3; i++) {
      await time.advance(STALL - 1); // a slow reader is not a stalled one
      payloads.push(...(await reader.take(1)));
    }
    await flush();
    await time.advance(STALL - 1);
    expect(t.fake.open).toBe(1);
    await time.advance(1);
    await settled(t);
    expect(t.fake.open).toBe(0);
    expect(await t.inFlight()).toBe(0);
    const delivered = payloads
      .map((payload) => (JSON.parse(payload) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
      .join('');
    expect(delivered).toBe('w0 w1');
    expect((await charges(t))[0]?.meta).toMatchObject({
      prompt_tokens: PROMPT_ESTIMATE,
      completion_tokens: estimateCompletionTokens(delivered),
      outcome: 'client_gone',
    });
    // A client that reads again finds what was queued for it (keepalives), then the end.
    await expect(reader.take(1)).rejects.toThrow('the stream ended after 0 of 1 events');
    await expectNothingLeft(t, time);
  });

  it('is cut at streamIdleTimeoutMs when no clientStallTimeoutMs is set, and refuses a limit that is not a positive whole number', async () => {
    const { t, time } = await open({ clientStallTimeoutMs: undefined, streamIdleTimeoutMs: 60_000 });
    await t.post('/v1/chat/completions', chatBody({ stream: true }));
    await time.advance(59_999);
    expect(await t.inFlight()).toBe(1);
    await time.advance(1);
    await settled(t);
    expect(await t.inFlight()).toBe(0);
    for (const bad of [0, -1, 1.5, Number.NaN]) await expect(setup({ clientStallTimeoutMs: bad })).rejects.toThrow('clientStallTimeoutMs');
  });
});
