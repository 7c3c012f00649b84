/**
 * `onError`: an error that escapes (a store that throws) reaches the embedder and the request log
 * with one id, while the client gets the spec's 503 `service_unavailable` and nothing internal.
 */
import { memoryStore, type Store } from '@tollgate/billing';
import { errorRecord } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import type { ErrorContext } from './gateway-options';
import { chatBody, setup, testModels } from '../test/test-harness';

const SECRET = 'postgres://tollgate:hunter2@db.internal:5432/ledger';

/** A memory store whose `method` throws an error carrying a secret, as a broken driver might (setup uses neither). */
function brokenStore(method: 'hold' | 'findKey'): Store {
  const store = memoryStore();
  const fail = async (): Promise<never> => {
    throw new Error(`connection lost: ${SECRET}`);
  };
  return Object.assign(Object.create(store) as Store, { [method]: fail });
}

describe('onError', () => {
  it('gets a thrown error with its context; the log gets its kind and id; the client a bare 503', async () => {
    const seen: { error: unknown; context: ErrorContext }[] = [];
    const store = brokenStore('hold');
    const t = await setup({ store, onError: (error, context) => void seen.push({ error, context }) });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(response.headers.get('x-request-id')).toBeNull();
    expect(response.headers.get('x-service-version')).toBe('tollgate/test');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual(errorRecord('service_unavailable'));
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('connection lost');

    expect(seen).toHaveLength(1);
    expect(seen[0]?.error).toBeInstanceOf(Error);
    expect(String(seen[0]?.error)).toContain('connection lost');
    expect(seen[0]?.context).toEqual({
      errorId: expect.stringMatching(/^err_[A-Za-z0-9]{24}$/),
      method: 'POST',
      path: '/v1/chat/completions',
      accountId: t.accountId,
    });
    expect(t.logs).toHaveLength(1);
    expect(t.logs[0]).toMatchObject({
      status: 503,
      code: 'service_unavailable',
      errorKind: 'Error',
      errorId: seen[0]?.context.errorId,
      accountId: t.accountId,
    });
    expect(JSON.stringify(t.logs[0])).not.toContain('hunter2');
    expect(await t.inFlight()).toBe(0);
  });

  it('is told before authentication too, and a hook that throws changes nothing for the client', async () => {
    const store = brokenStore('findKey');
    let calls = 0;
    const t = await setup({
      store,
      onError: () => {
        calls++;
        throw new Error('the hook itself is broken');
      },
    });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual(errorRecord('service_unavailable'));
    expect(calls).toBe(1);
    expect(t.logs[0]).toMatchObject({ status: 503, code: 'service_unavailable', errorKind: 'Error', errorId: expect.stringMatching(/^err_/) });
    expect(t.logs[0]?.accountId).toBeUndefined();
  });

  it('without a hook, the 503 and the log line are the same', async () => {
    const store = brokenStore('hold');
    const t = await setup({ store });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(503);
    expect(t.logs[0]).toMatchObject({ status: 503, code: 'service_unavailable', errorKind: 'Error' });
  });

  it('releases the hold of a request whose handler threw after it held, so it is neither charged nor renewed for good', async () => {
    const seen: unknown[] = [];
    const t = await setup({
      providers: {
        local: {
          kind: 'buggy',
          zeroDataRetention: false,
          // An embedder's image provider with a bug: it answers an image that is not one, and the
          // handler throws on it after the hold (a TypeError, not a provider error).
          images: async () => [null as never],
        },
      },
      models: testModels().filter((model) => model.id === 'painter'),
      onError: (error) => void seen.push(error),
    });
    const before = await t.balance();
    const response = await t.post('/v1/images/generations', { model: 'painter', prompt: 'A lighthouse at dusk' });
    expect(response.status).toBe(503);
    expect(seen).toHaveLength(1);
    // Released at once, not left to expire (or to be renewed for as long as the process lives).
    expect(await t.balance()).toEqual(before);
    expect((await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge')).toHaveLength(0);
    expect(await t.inFlight()).toBe(0);
  });
});
