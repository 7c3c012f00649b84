import { describe, expect, it } from 'vitest';
import { type BodyReadResult, readWhenReadable } from './body-reader';

/** A reader whose `readNow` answers the queued results in order (`null` until one is queued). */
function queued() {
  const results: (BodyReadResult | Error)[] = [];
  let wake: (() => void) | undefined;
  let waits = 0;
  const reader = {
    readNow(): BodyReadResult | null {
      const next = results.shift();
      if (next instanceof Error) throw next;
      return next ?? null;
    },
    whenReadable(callback: () => void) {
      waits++;
      wake = callback;
    },
  };
  const push = (result: BodyReadResult | Error) => {
    results.push(result);
    const callback = wake;
    wake = undefined;
    callback?.();
  };
  return { reader, push, waits: () => waits };
}

describe('readWhenReadable', () => {
  it('answers what readNow has at once, without waiting', async () => {
    const { reader, push, waits } = queued();
    push({ done: false, value: new Uint8Array([1]) });
    await expect(readWhenReadable(reader)).resolves.toEqual({ done: false, value: new Uint8Array([1]) });
    expect(waits()).toBe(0);
  });

  it('waits with whenReadable until readNow answers, then answers that (the end too)', async () => {
    const { reader, push, waits } = queued();
    const read = readWhenReadable(reader);
    expect(waits()).toBe(1);
    push({ done: true, value: undefined });
    await expect(read).resolves.toEqual({ done: true, value: undefined });
    expect(waits()).toBe(1);
  });

  it('rejects with what readNow throws, at once or after a wait', async () => {
    const { reader, push } = queued();
    const failure = new TypeError('terminated');
    push(failure);
    await expect(readWhenReadable(reader)).rejects.toBe(failure);
    const later = readWhenReadable(reader);
    push(new Error('later'));
    await expect(later).rejects.toThrow('later');
  });
});
