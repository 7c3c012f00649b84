import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64 } from './decode-base64';
import { base64Of } from '../test/image-headers.fixture';

/** This process's CPU time in ms: unlike wall time, it does not grow while other processes share the cores. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

describe('decodeBase64', () => {
  it('round-trips any bytes encoded by btoa', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(decodeBase64(base64Of(bytes))).toEqual(bytes);
      }),
      { numRuns: 500 },
    );
  });

  it('decodes known vectors of RFC 4648, with and without padding', () => {
    const text = (b64: string) => {
      const bytes = decodeBase64(b64);
      return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
    };
    expect(text('')).toBe('');
    expect(text('Zg==')).toBe('f');
    expect(text('Zm8=')).toBe('fo');
    expect(text('Zm9v')).toBe('foo');
    expect(text('Zm9vYmFy')).toBe('foobar');
    expect(text('Zg')).toBe('f');
    expect(text('Zm8')).toBe('fo');
  });

  it('skips ASCII whitespace, as line-wrapped base64 holds it', () => {
    expect(new TextDecoder().decode(decodeBase64('Zm9v\r\nYmFy\n'))).toBe('foobar');
    expect(new TextDecoder().decode(decodeBase64('Zm8 =\n'))).toBe('fo');
  });

  it('refuses characters outside the alphabet, bad padding and impossible lengths', () => {
    expect(decodeBase64('Zm9v!mFy')).toBeUndefined();
    expect(decodeBase64('Zm9v-_Fy')).toBeUndefined();
    expect(decodeBase64('Zm9vYmF\u0100')).toBeUndefined();
    // Characters past 0xFF whose low byte is in the alphabet, or is a space, are still refused.
    expect(decodeBase64('Zm9\u0141')).toBeUndefined();
    expect(decodeBase64('Zm9v\u0120')).toBeUndefined();
    expect(decodeBase64('Zm9=v')).toBeUndefined();
    expect(decodeBase64('Zm9v=')).toBeUndefined();
    expect(decodeBase64('Zg=')).toBeUndefined();
    expect(decodeBase64('Zm8==')).toBeUndefined();
    expect(decodeBase64('Z')).toBeUndefined();
    expect(decodeBase64('Zm9vY')).toBeUndefined();
  });

  it('decodes a range of a longer string', () => {
    expect(new TextDecoder().decode(decodeBase64('data:,Zm9v', 6))).toBe('foo');
    expect(new TextDecoder().decode(decodeBase64('xxZm9vyy', 2, 6))).toBe('foo');
  });

  it('decodes 20 MB of base64 into the right bytes', () => {
    const chunk = new Uint8Array(3 * 4096).map((_, index) => (index * 7919) % 256);
    const repeats = 1280;
    const b64 = base64Of(chunk).repeat(repeats);
    const bytes = new Uint8Array(chunk.length * repeats);
    for (let copy = 0; copy < repeats; copy++) bytes.set(chunk, copy * chunk.length);
    expect(b64.length).toBe(20 * 1024 * 1024);
    const started = cpuMs();
    const decoded = decodeBase64(b64);
    const elapsed = cpuMs() - started;
    expect(decoded?.length).toBe(bytes.length);
    // A byte loop: deep equality of 15 MB arrays in the matcher takes minutes.
    let mismatches = 0;
    for (let index = 0; index < bytes.length; index++) if (decoded?.[index] !== bytes[index]) mismatches++;
    expect(mismatches).toBe(0);
    // CPU time, generous for slow machines; a per-byte string path takes several times this.
    expect(elapsed).toBeLessThan(2000);
  });
});
