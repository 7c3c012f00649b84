import { hashKey } from '@tollgate/billing';
import { describe, expect, it } from 'vitest';
import { nodeHashKey } from './hash-key';

describe('nodeHashKey', () => {
  it('is the digest the stores keep: the same as the Web Crypto hashKey', async () => {
    for (const key of ['sk_svc_0123456789abcdefghijABCDEFGHIJklmnopqrstuvw', '', 'é€😀']) {
      expect(nodeHashKey(key)).toBe(await hashKey(key));
    }
    expect(nodeHashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
