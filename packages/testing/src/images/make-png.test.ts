import { describe, expect, it } from 'vitest';
import { crc32 } from './crc32';
import { makePng } from './make-png';
import { inflate, readPngChunks, unfilterRgb } from '../../test/png-reader.fixture';

/** This process's CPU time in ms: unlike wall time, it does not grow while other processes share the cores. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

describe('crc32', () => {
  it('matches the standard check value and the IEND constant', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new TextEncoder().encode('IEND'))).toBe(0xae426082);
  });
});

describe('makePng', () => {
  it('writes signature, IHDR, IDAT and IEND with matching CRCs', async () => {
    const chunks = readPngChunks(await makePng(40, 30, { seed: 1 }));
    expect(chunks.map((chunk) => chunk.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(chunks.every((chunk) => chunk.crcMatches)).toBe(true);
    expect([...(chunks[0]?.data ?? [])]).toEqual([0, 0, 0, 40, 0, 0, 0, 30, 8, 2, 0, 0, 0]);
    expect(chunks[2]?.data.length).toBe(0);
  });

  it('IDAT inflates to height x (1 + width x 3) bytes of valid filtered rows', async () => {
    const png = await makePng(1024, 576, { seed: 99 });
    const idat = readPngChunks(png).find((chunk) => chunk.type === 'IDAT');
    const raw = await inflate(idat?.data ?? new Uint8Array(0));
    expect(raw.length).toBe(576 * (1 + 1024 * 3));
    const pixels = unfilterRgb(raw, 1024, 576);
    expect(pixels.length).toBe(1024 * 576 * 3);
    // The PNG is small: the pattern compresses, as the fake needs for speed.
    expect(png.length).toBeLessThan(20_000);
  });

  it('paints a solid colour when rgb is given', async () => {
    const png = await makePng(5, 4, { rgb: [10, 200, 30] });
    const raw = await inflate(readPngChunks(png)[1]?.data ?? new Uint8Array(0));
    const pixels = unfilterRgb(raw, 5, 4);
    const expected = new Uint8Array(5 * 4 * 3).map((_, index) => [10, 200, 30][index % 3] as number);
    expect(pixels).toEqual(expected);
  });

  it('draws different pixels for different seeds, the same for the same seed', async () => {
    const pixelsOf = async (seed: number) => {
      const raw = await inflate(readPngChunks(await makePng(16, 16, { seed }))[1]?.data ?? new Uint8Array(0));
      return unfilterRgb(raw, 16, 16);
    };
    const [a, b, again] = await Promise.all([pixelsOf(1), pixelsOf(2), pixelsOf(1)]);
    expect(a).toEqual(again);
    expect(a).not.toEqual(b);
    // A gradient, not a flat fill: the corners differ.
    expect([a[0], a[1], a[2]]).not.toEqual([a[a.length - 3], a[a.length - 2], a[a.length - 1]]);
  });

  it('makes a 1x1 image and refuses impossible sizes', async () => {
    const chunks = readPngChunks(await makePng(1, 1));
    expect((await inflate(chunks[1]?.data ?? new Uint8Array(0))).length).toBe(4);
    await expect(makePng(0, 10)).rejects.toThrow(RangeError);
    await expect(makePng(1.5, 10)).rejects.toThrow(RangeError);
  });

  it('makes a 1024x1024 PNG fast', async () => {
    await makePng(64, 64); // warm the compressor up
    const started = cpuMs();
    await makePng(1024, 1024, { seed: 5 });
    // About 50 ms of CPU; generous, for slower machines (CPU time, so other processes do not count).
    expect(cpuMs() - started).toBeLessThan(250);
  });
});
