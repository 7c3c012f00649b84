/**
 * SIGTERM during streams: the server stops accepting connections at once, lets every stream in
 * flight finish within the grace period, settles each, and exits 0.
 */
import { connect } from 'node:net';
import type { Backend } from '../harness/backend';
import { chatBody, costOf, send, waitFor } from '../harness/client';
import { invariantChecks, readLedger } from '../harness/ledger';
import { check, type ScenarioResult, type Size } from '../harness/result';
import { startServerChild } from '../harness/server-child';
import { catalogueEnv, createAccounts, removeDir, startUpstream } from '../harness/world';

/** Whether a TCP connection to the port is refused (nothing listens). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

export async function sigtermScenario(size: Size, dir: string, backend: Backend): Promise<ScenarioResult> {
  const streams = size === 'full' ? 20 : 10;
  const upstream = await startUpstream({ reply: 'word '.repeat(150).trim(), faults: () => ({ kind: 'drip', delayMs: 20 }) });
  const env = { ...catalogueEnv(dir, [{ id: 'chat', baseURL: `${upstream.url}/v1` }]), ...backend.env, TOLLGATE_SHUTDOWN_GRACE: '30' };
  const store = backend.open();
  const accounts = await createAccounts(store, Math.ceil(streams / 10), 'pro', 10_000_000);
  await store.close?.();
  const server = await startServerChild(env);
  try {
    const delivered: number[] = Array.from({ length: streams }, () => 0);
    const running = Array.from({ length: streams }, (_, index) =>
      send(server.url, accounts[Math.floor(index / 10)]?.key ?? '', chatBody('chat', { stream: true, maxTokens: 500 }), {
        onChunk: (count) => (delivered[index] = count),
      }),
    );
    await waitFor(() => delivered.every((count) => count >= 3), 60_000);
    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const closedToNew = await waitFor(() => refused(server.port), 10_000);
    const refusedMs = Math.round(performance.now() - signalled);
    const replies = await Promise.all(running);
    const exit = await server.exited;
    const exitMs = Math.round(performance.now() - signalled);
    const ledger = await readLedger(backend.target);
    const expected = new Map<string, number>();
    for (const reply of replies) if (reply.requestId && reply.usage) expected.set(reply.requestId, costOf(reply.usage));
    const finished = replies.filter((reply) => reply.status === 200 && reply.done && reply.usage !== undefined).length;
    return {
      scenario: `SIGTERM (${backend.kind})`,
      figures: {
        'streams in flight': streams,
        'streams finished': finished,
        'ms to refuse new connections': refusedMs,
        'ms to exit': exitMs,
        'exit code': String(exit.code),
      },
      checks: [
        check('no new connection accepted after SIGTERM', closedToNew, `refused after ${refusedMs} ms`),
        check('every stream in flight finished with [DONE] within the grace period', finished === streams, `${finished} of ${streams}`),
        check('exit code 0', exit.code === 0, `code ${exit.code}, signal ${exit.signal}`),
        ...invariantChecks(ledger, { expected }),
      ],
    };
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
    await upstream.close();
    removeDir(dir);
  }
}
