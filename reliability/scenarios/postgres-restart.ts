/**
 * PostgreSQL restarted mid-load: while it is down requests fail with the spec's 503
 * service_unavailable, none hangs, none is charged twice, and the instance recovers without a
 * restart of its own. A settlement that failed while the database was down is logged for the
 * operator ("settlement failed: charge by hand") and counted here.
 */
import type { Backend } from '../harness/backend';
import { costOf, tally, waitFor } from '../harness/client';
import { invariantChecks, readLedger } from '../harness/ledger';
import { startLoad, within } from '../harness/load';
import { check, type ScenarioResult, type Size } from '../harness/result';
import { startServerChild } from '../harness/server-child';
import { restartPostgres } from '../harness/services';
import { catalogueEnv, createAccounts, removeDir, startUpstream } from '../harness/world';

/** The longest a failed settle goes on being retried here: the suite's 2 s hold TTL, one 5 s retry spacing, and margin. */
const SETTLE_RETRY_WINDOW_MS = 10_000;

export async function postgresRestartScenario(size: Size, dir: string, backend: Backend & { kind: 'postgres' }, url: string): Promise<ScenarioResult> {
  const downMs = size === 'full' ? 5_000 : 2_000;
  const upstream = await startUpstream();
  const env = { ...catalogueEnv(dir, [{ id: 'chat', baseURL: `${upstream.url}/v1` }]), ...backend.env };
  const store = backend.open();
  const accounts = await createAccounts(store, 4, 'max', 1_000_000_000);
  await store.close?.();
  const server = await startServerChild(env);
  try {
    const load = startLoad(
      [server.url],
      accounts.map((account) => account.key),
      3,
    );
    await waitFor(() => load.samples.filter((sample) => sample.reply.status === 200).length >= 20, 30_000);
    const stoppedAt = performance.now();
    await restartPostgres(url, downMs);
    const backAt = performance.now();
    let recoveredMs = Number.NaN;
    await waitFor(() => {
      const first = load.samples.find((sample) => sample.startedAt >= backAt && sample.reply.status === 200);
      if (first) recoveredMs = first.endedAt - backAt;
      return first !== undefined;
    }, 30_000);
    // Requests after recovery, to check their charges.
    await waitFor(() => load.samples.filter((sample) => sample.startedAt >= backAt && sample.reply.status === 200).length >= 20, 30_000);
    const samples = await load.stop();
    const down = within(samples, stoppedAt + 500, backAt);
    const refused = samples.filter((sample) => sample.reply.status !== 200);
    const longest = Math.max(...samples.map((sample) => sample.reply.ms));
    // A request served while the database went away whose charge could not be written: the gateway
    // retries it in the background until its hold's TTL (packages/gateway/src/credit-hold.ts), then
    // logs it for the operator. Read the ledger once those retries have ended (or all settled).
    const loggedUnsettled = () =>
      new Set(
        server
          .lines()
          .filter((line) => line.includes('settlement failed'))
          .map((line) => /"requestId":"([^"]+)"/.exec(line)?.[1] ?? ''),
      );
    const openUnloggedOf = (ledger: Awaited<ReturnType<typeof readLedger>>, unsettled: Set<string>) =>
      ledger.holds.filter((hold) => hold.state === 'open' && (hold.request_id === null || !unsettled.has(hold.request_id)));
    const retriesEndBy = performance.now() + SETTLE_RETRY_WINDOW_MS;
    let ledger = await readLedger(backend.target);
    let unsettled = loggedUnsettled();
    while (openUnloggedOf(ledger, unsettled).length > 0 && performance.now() < retriesEndBy) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      ledger = await readLedger(backend.target);
      unsettled = loggedUnsettled();
    }
    const settleFailures = unsettled.size;
    // What killed the server, if anything did: the error line of its last words.
    const crash = server
      .lines()
      .slice(-12)
      .find((line) => /Error/.test(line))
      ?.trim();
    const open = ledger.holds.filter((hold) => hold.state === 'open');
    const openUnlogged = openUnloggedOf(ledger, unsettled);
    // Charged exactly: every 200 that began after recovery (one in flight at the stop may have failed to settle, logged above).
    const expected = new Map<string, number>();
    for (const { reply, startedAt } of samples)
      if (startedAt >= backAt && reply.status === 200 && reply.requestId && reply.usage) expected.set(reply.requestId, costOf(reply.usage));
    return {
      scenario: 'PostgreSQL restarted mid-load',
      figures: {
        'PostgreSQL down ms': downMs,
        requests: samples.length,
        'while down': tally(down.map((sample) => sample.reply)),
        'recovery ms': Math.round(recoveredMs),
        'settlements failed (logged)': settleFailures,
        'longest request ms': Math.round(longest),
        'server exit':
          server.child.exitCode === null && server.child.signalCode === null
            ? 'running'
            : `exited ${server.child.exitCode ?? server.child.signalCode}: ${server.lines().slice(-3).join(' ').slice(0, 300)}`,
      },
      checks: [
        check(
          'every refusal is the spec’s 503 service_unavailable',
          down.length > 0 && refused.every((sample) => sample.reply.status === 503 && sample.reply.code === 'service_unavailable'),
          `${tally(refused.map((sample) => sample.reply)) || 'none refused'}; ${down.length} requests inside the outage`,
        ),
        check(
          'no request hangs (each ends within 10 s)',
          longest < 10_000 && samples.every((sample) => !sample.reply.failed),
          `longest ${Math.round(longest)} ms`,
        ),
        check(
          'the server stays up',
          server.child.exitCode === null && server.child.signalCode === null,
          `exit ${server.child.exitCode ?? server.child.signalCode ?? 'none'}${crash ? `: ${crash}` : ''}`,
        ),
        check('recovers without a restart', Number.isFinite(recoveredMs), `first 200 ${Math.round(recoveredMs)} ms after PostgreSQL was back`),
        check(
          'no hold left open once its request ended, but those logged "settlement failed: charge by hand"',
          openUnlogged.length === 0,
          `${open.length} open of ${ledger.holds.length}, ${open.length - openUnlogged.length} of them logged`,
        ),
        ...invariantChecks(ledger, { expected, noOpenHolds: false }),
      ],
    };
  } finally {
    await server.stop(5_000);
    await upstream.close();
    removeDir(dir);
  }
}
