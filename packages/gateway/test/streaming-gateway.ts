/**
 * The streaming tests' gateway (not exported): the harness on manual time, its OpenAI-compatible
 * provider fetching through a wrapper the test gives (a tap on the upstream's bodies), a `stream()`
 * poster, and a check after each test that nothing was left.
 */
import { openaiCompatible } from '@tollgate/providers';
import { chatBody, type SetupOptions, setup, type TestGateway, UPSTREAM_KEY } from './test-harness';
import { expectNothingLeft, settled } from './test-leaks';
import { flush, type ManualTimers, manualClock, manualTimers } from './test-timers';

/** A streaming test's gateway: the harness plus manual time and a streamed-chat poster. */
export interface StreamingGateway extends TestGateway {
  time: ManualTimers;
  /** POSTs a streamed chat request. */
  stream(extra?: Record<string, unknown>): Promise<Response>;
}

const opened: StreamingGateway[] = [];

/**
 * A gateway on manual time whose provider fetches through `wrap(fake)` (`fake` answers the
 * harness's fake upstream once the gateway is set up); checked by {@link closeStreamingGateways}.
 */
export async function openStreamingGateway(
  wrap: (fake: () => typeof globalThis.fetch) => typeof globalThis.fetch,
  options: SetupOptions = {},
): Promise<StreamingGateway> {
  const clock = manualClock();
  const time = manualTimers(clock);
  let t: TestGateway | undefined;
  const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: wrap(() => (t as TestGateway).fake.fetch) });
  t = await setup({ clock, timers: time.timers, providers: { local: provider }, ...options, fakeOptions: { sleep: time.sleep, ...options.fakeOptions } });
  const harness = t;
  const stream = (extra: Record<string, unknown> = {}) => harness.post('/v1/chat/completions', chatBody({ stream: true, ...extra }));
  const s: StreamingGateway = { ...harness, time, stream };
  opened.push(s);
  return s;
}

/** After each test: no upstream body, timer, in-flight slot or hold remains, and the ledger adds up. */
export async function closeStreamingGateways(): Promise<void> {
  for (const s of opened.splice(0)) {
    await settled(s);
    await flush();
    await expectNothingLeft(s, s.time);
  }
}

/** Splits SSE text into `data:` payloads and comment lines, in order. */
export function parseEvents(text: string): { data: string[]; comments: string[]; events: string[] } {
  const data: string[] = [];
  const comments: string[] = [];
  const events: string[] = [];
  for (const event of text.split('\n\n')) {
    if (event === '') continue;
    events.push(event);
    if (event.startsWith('data: ')) data.push(event.slice(6));
    else if (event.startsWith(':')) comments.push(event);
  }
  return { data, comments, events };
}
