import { describe, expect, it } from 'vitest';
import { BODY_SOURCE, type BodySource, bodySource } from './index';

/** A source that records nothing: only its identity matters here. */
const source = (): BodySource => ({ start: () => undefined, resume: () => undefined, cancel: () => undefined });

describe('bodySource', () => {
  it('answers what the stream offers under BODY_SOURCE, asking the stream each time', () => {
    const offered = [source(), undefined, source()];
    let calls = 0;
    const body = new ReadableStream<Uint8Array>();
    Object.defineProperty(body, BODY_SOURCE, { value: () => offered[calls++] });
    expect(bodySource(body)).toBe(offered[0]);
    expect(bodySource(body)).toBeUndefined();
    expect(bodySource(body)).toBe(offered[2]);
    expect(calls).toBe(3);
  });

  it('calls the method on the stream itself, so a stream can tell whether it was read', () => {
    const body = new ReadableStream<Uint8Array>();
    const offered = source();
    let self: unknown;
    Object.defineProperty(body, BODY_SOURCE, {
      value(this: unknown) {
        self = this;
        return offered;
      },
    });
    expect(bodySource(body)).toBe(offered);
    expect(self).toBe(body);
  });

  it('answers undefined for a plain stream, and leaves the stream readable', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([1, 2]));
        controller.close();
      },
    });
    expect(bodySource(body)).toBeUndefined();
    expect(body.locked).toBe(false);
    expect(await body.getReader().read()).toEqual({ done: false, value: new Uint8Array([1, 2]) });
    // A Response's body stream is a plain stream too.
    expect(bodySource(new Response('text').body as ReadableStream<Uint8Array>)).toBeUndefined();
  });

  it("keys the method with the registered symbol 'tollgate.body-source', so every copy of the package agrees", () => {
    expect(BODY_SOURCE).toBe(Symbol.for('tollgate.body-source'));
    expect(Symbol.keyFor(BODY_SOURCE)).toBe('tollgate.body-source');
    // A stream marked by another copy (the symbol looked up by name) is found.
    const offered = source();
    const body = new ReadableStream<Uint8Array>();
    Object.defineProperty(body, Symbol.for('tollgate.body-source'), { value: () => offered });
    expect(bodySource(body)).toBe(offered);
  });
});
