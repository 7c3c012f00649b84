import { hashKey } from '@tollgate/billing';
import { describe, expect, it, vi } from 'vitest';
import { nodeHashKey } from './hash-key';

const KEYS = ['sk_svc_0123456789abcdefghijABCDEFGHIJklmnopqrstuvw', '', 'é€😀'];

describe('nodeHashKey', () => {
  it('is the digest the stores keep: the same as the Web Crypto hashKey', async () => {
    for (const key of KEYS) {
      expect(nodeHashKey(key)).toBe(await hashKey(key));
    }
    expect(nodeHashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('makes the same digest with createHash on a runtime without crypto.hash', async () => {
    vi.resetModules();
    vi.doMock('node:crypto', async (original) => {
      // As a runtime before Node 20.12 has it: no `hash` export.
      return { ...(await original<typeof import('node:crypto')>()), hash: undefined };
    });
    try {
      const { nodeHashKey: withoutOneShot } = await import('./hash-key');
      for (const key of KEYS) expect(withoutOneShot(key)).toBe(await hashKey(key));
    } finally {
      vi.doUnmock('node:crypto');
      vi.resetModules();
    }
  });
});
