/**
 * Upstream faults, each from a fake on loopback: the client gets the spec's error (or error event)
 * within the deadline, the charge is exactly right (nothing before the reply began; what a cut
 * stream delivered; never above the hold), and a client that leaves frees its slot and hold at once.
 */
import type { Fault } from '@tollgate/testing';
import { freePort } from '@tollgate/testing/server';
import type { Backend } from '../harness/backend';
import { chatBody, holdOf, send, waitFor, type Reply } from '../harness/client';
import { chargesByRequest, invariantChecks, readLedger } from '../harness/ledger';
import { check, GATEWAY_RESTRUCTURE, type Check, type ScenarioResult, type Size } from '../harness/result';
import { startServerChild } from '../harness/server-child';
import { catalogueEnv, createAccounts, removeDir, startHandler, startUpstream, UPSTREAM_KEY } from '../harness/world';

const MAX_TOKENS = 256;
const HOLD = holdOf(MAX_TOKENS);

/** One fault and what the client must see. */
interface FaultCase {
  name: string;
  fault?: Fault;
  stream: boolean;
  /** `status code` of the reply, or `200 error-event code` for a stream that began. */
  expect: string;
  /** The charge: `0`, `delivered` (0 < charge <= hold) or an exact figure. */
  charge: 0 | 'delivered' | number;
  /** The fix it waits for, when today's gateway cannot pass it. */
  waitsFor?: string;
}

const CASES: FaultCase[] = [
  { name: 'refused', stream: false, expect: '502 upstream_unavailable', charge: 0 },
  { name: 'refused (streamed)', stream: true, expect: '502 upstream_unavailable', charge: 0 },
  { name: '500', fault: { kind: 'status', status: 500 }, stream: false, expect: '502 upstream_error', charge: 0 },
  { name: '500 (streamed)', fault: { kind: 'status', status: 500 }, stream: true, expect: '502 upstream_error', charge: 0 },
  {
    name: '429 with Retry-After: 7',
    fault: { kind: 'status', status: 429, retryAfter: 7 },
    stream: false,
    expect: '503 upstream_busy retry-after 7',
    charge: 0,
  },
  { name: 'malformed JSON', fault: { kind: 'malformed', afterChunks: 0 }, stream: false, expect: '502 upstream_error', charge: 0 },
  {
    name: 'malformed event mid-stream',
    fault: { kind: 'malformed', afterChunks: 3 },
    stream: true,
    expect: '200 error-event upstream_error',
    charge: 'delivered',
  },
  {
    name: 'stream cut without [DONE]',
    fault: { kind: 'truncate', afterChunks: 4 },
    stream: true,
    expect: '200 error-event upstream_error',
    charge: 'delivered',
  },
  {
    name: 'connection dropped mid-stream',
    fault: { kind: 'cut', afterChunks: 4 },
    stream: true,
    expect: '200 error-event upstream_error',
    charge: 'delivered',
  },
  {
    name: 'hangs after the first chunk',
    fault: { kind: 'stall', afterChunks: 2 },
    stream: true,
    expect: '200 error-event upstream_error',
    charge: 'delivered',
    waitsFor: GATEWAY_RESTRUCTURE,
  },
  { name: 'no response headers ever', fault: { kind: 'hang' }, stream: false, expect: '502 upstream_error', charge: 0, waitsFor: GATEWAY_RESTRUCTURE },
  {
    name: 'no response headers ever (streamed)',
    fault: { kind: 'hang' },
    stream: true,
    expect: '502 upstream_error',
    charge: 0,
    waitsFor: GATEWAY_RESTRUCTURE,
  },
  {
    name: 'headers, then no body',
    fault: { kind: 'stall', afterChunks: 0 },
    stream: false,
    expect: '502 upstream_error',
    charge: 0,
    waitsFor: GATEWAY_RESTRUCTURE,
  },
  // Billed at the limits sent upstream: 1 prompt token as reported + the 256-token output limit.
  { name: 'usage above the output limit sent', stream: false, expect: '200', charge: 1 + MAX_TOKENS, waitsFor: GATEWAY_RESTRUCTURE },
];

/** An upstream that answers well but reports 5,000 completion tokens whatever the output limit. */
function overReporting(): Promise<{ url: string; close(): Promise<void> }> {
  return startHandler(async (request) => {
    if (request.headers.get('authorization') !== `Bearer ${UPSTREAM_KEY}`) return new Response('{}', { status: 401 });
    await request.text();
    return Response.json({
      id: 'chatcmpl-over',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Far too long.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 5_000, total_tokens: 5_001 },
    });
  });
}

function outcome(reply: Reply): string {
  if (reply.status === 0) return reply.failed ? 'no reply' : 'none';
  if (reply.status === 200 && reply.contentType?.startsWith('text/event-stream'))
    return reply.errorEvent ? `200 error-event ${reply.errorEvent}` : reply.done ? '200' : '200 cut without error event';
  return `${reply.status}${reply.code ? ` ${reply.code}` : ''}${reply.retryAfter && reply.status !== 429 && reply.code === 'upstream_busy' ? ` retry-after ${reply.retryAfter}` : ''}`;
}

export async function upstreamFaultsScenario(size: Size, dir: string, backend: Backend): Promise<ScenarioResult> {
  // The bound a client waits for the spec's error; the gateway's own deadline must be inside it.
  const waitMs = size === 'full' ? 60_000 : 5_000;
  const upstreams = await Promise.all(
    CASES.map((each) => (each.name.startsWith('usage') ? overReporting() : startUpstream(each.fault ? { faults: () => each.fault } : {}))),
  );
  const refusedPort = await freePort();
  const routes = CASES.map((each, index) => ({
    id: `fault-${index}`,
    baseURL: each.name.startsWith('refused') ? `http://127.0.0.1:${refusedPort}/v1` : `${upstreams[index]?.url}/v1`,
  }));
  const healthy = await startUpstream();
  const hanging = await startUpstream({ faults: () => ({ kind: 'hang' }) });
  const env = {
    ...catalogueEnv(dir, [...routes, { id: 'healthy', baseURL: `${healthy.url}/v1` }, { id: 'hanging', baseURL: `${hanging.url}/v1` }]),
    ...backend.env,
  };
  const store = backend.open();
  const accounts = await createAccounts(store, CASES.length + 1, 'pro', 10_000_000);
  const [leaver] = await createAccounts(store, 1, 'free', 10_000_000);
  await store.close?.();
  const server = await startServerChild(env);
  try {
    const replies = await Promise.all(
      CASES.map((each, index) =>
        send(server.url, accounts[index]?.key ?? '', chatBody(`fault-${index}`, { stream: each.stream, maxTokens: MAX_TOKENS }), {
          signal: AbortSignal.timeout(waitMs),
        }),
      ),
    );

    // A free account (2 in flight) whose two clients leave a hung upstream: its next request must be admitted at once.
    const leaving = new AbortController();
    const left = [0, 1].map(() => send(server.url, leaver?.key ?? '', chatBody('hanging', { maxTokens: MAX_TOKENS }), { signal: leaving.signal }));
    await waitFor(() => hanging.fake.requests.length >= 2, 10_000);
    leaving.abort();
    await Promise.all(left);
    const leftAt = performance.now();
    const slotFreed = await waitFor(async () => (await send(server.url, leaver?.key ?? '', chatBody('healthy', { maxTokens: 10 }))).status === 200, 2_000);
    const slotMs = Math.round(performance.now() - leftAt);

    const ledger = await readLedger(backend.target);
    const charged = chargesByRequest(ledger);
    const checks: Check[] = [];
    const figures: Record<string, string | number> = {};
    CASES.forEach((each, index) => {
      const reply = replies[index] as Reply;
      const got = outcome(reply);
      const micros = reply.requestId ? (charged.get(reply.requestId)?.micros ?? 0) : 0;
      const chargeOk = each.charge === 'delivered' ? micros > 0 && micros <= HOLD : micros === each.charge;
      figures[each.name] = `${got} in ${Math.round(reply.ms)} ms, ${micros} µ$`;
      checks.push(
        check(
          `${each.name}: ${each.expect}, charged ${each.charge === 'delivered' ? 'what was delivered' : `${each.charge} µ$`}`,
          got === each.expect && chargeOk && reply.version !== undefined,
          `${got} after ${Math.round(reply.ms)} ms (client bound ${waitMs} ms), charged ${micros} µ$ (hold ${HOLD})`,
          each.waitsFor,
        ),
      );
    });
    figures['slot after clients left'] = slotFreed ? `free after ${slotMs} ms` : 'still taken after 2 s';
    checks.push(
      check(
        'a client that leaves frees its slot and hold at once',
        slotFreed && slotMs < 2_000,
        slotFreed ? `admitted ${slotMs} ms after both clients left` : 'a third request was still refused 2 s after both clients left',
        GATEWAY_RESTRUCTURE,
      ),
    );
    const openHolds = ledger.holds.filter((hold) => hold.state === 'open').length;
    checks.push(
      check(
        'no hold left open once its request ended',
        openHolds === 0,
        `${openHolds} open of ${ledger.holds.length} after every client ended`,
        GATEWAY_RESTRUCTURE,
      ),
    );
    checks.push(...invariantChecks(ledger, { noOpenHolds: false }).filter((each) => each.name !== 'no charge above its hold'));
    const over = ledger.holds.filter((hold) => hold.charged > hold.micros);
    checks.push(
      check(
        'no charge above its hold',
        over.length === 0,
        over.length === 0 ? 'none' : `charged ${over[0]?.charged} on a hold of ${over[0]?.micros}`,
        GATEWAY_RESTRUCTURE,
      ),
    );
    return { scenario: 'upstream faults', figures, checks };
  } finally {
    await server.stop(5_000);
    await Promise.all([...upstreams, healthy, hanging].map((each) => each.close()));
    removeDir(dir);
  }
}
