import { describe, expect, it } from 'vitest';
import { generateKey, isServiceKey } from './generate-key';
import { hashKey } from './hash-key';

describe('generateKey', () => {
  it('makes distinct sk_svc_ keys of 43 base62 characters', () => {
    const keys = new Set(Array.from({ length: 500 }, generateKey));
    expect(keys.size).toBe(500);
    for (const key of keys) {
      expect(key).toMatch(/^sk_svc_[A-Za-z0-9]{43}$/);
      expect(isServiceKey(key)).toBe(true);
    }
  });

  it('uses every base62 character', () => {
    const seen = new Set(Array.from({ length: 200 }, generateKey).join('').slice(0));
    for (const char of 'ABCXYZabcxyz0189') expect(seen.has(char)).toBe(true);
  });
});

describe('isServiceKey', () => {
  it('takes only whole keys', () => {
    const secret = 'a'.repeat(43);
    expect(isServiceKey(`sk_svc_${secret}`)).toBe(true);
    expect(isServiceKey(`sk_svc_${secret}a`)).toBe(false);
    expect(isServiceKey(`sk_svc_${secret.slice(1)}`)).toBe(false);
    expect(isServiceKey(`sk_svc_${secret.slice(1)}-`)).toBe(false);
    expect(isServiceKey(`sk_live_${secret}`)).toBe(false);
    expect(isServiceKey(` sk_svc_${secret}`)).toBe(false);
    expect(isServiceKey(`sk_svc_${secret}\n`)).toBe(false);
  });
});

describe('hashKey', () => {
  it('is the SHA-256 hex digest', async () => {
    expect(await hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(await hashKey('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
