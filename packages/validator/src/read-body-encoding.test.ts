import { describe, expect, it } from 'vitest';
import { readBody } from './read-body';

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://gateway.test/v1/chat/completions', { method: 'POST', body, headers });
const json = '{"model":"fast","messages":[]}';
/** The first bytes of a gzip member: what a compressed body starts with. */
const gzipped = new Uint8Array([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03]);

describe('readBody and Content-Encoding', () => {
  it('refuses a gzip body with invalid_request_body naming Content-Encoding, and reads none of it', async () => {
    const request = post(gzipped, { 'content-encoding': 'gzip' });
    expect(await readBody(request)).toEqual({
      ok: false,
      error: { code: 'invalid_request_body', message: 'The request body must not be compressed: send it without Content-Encoding.' },
    });
    expect(request.bodyUsed).toBe(false);
  });

  it('refuses every other coding too, alone or in a list, in any case', async () => {
    for (const coding of ['br', 'deflate', 'zstd', 'GZIP', 'identity, gzip', 'x-custom']) {
      const result = await readBody(post(json, { 'content-encoding': coding }));
      expect(result.ok ? undefined : result.error.code, coding).toBe('invalid_request_body');
    }
  });

  it('reads the body as it is with no Content-Encoding, identity, or an empty value', async () => {
    const cases: Record<string, string>[] = [{}, { 'content-encoding': 'identity' }, { 'content-encoding': 'Identity ' }, { 'content-encoding': '' }];
    for (const headers of cases) {
      const result = await readBody(post(json, headers));
      expect(result.ok ? new TextDecoder().decode(result.value) : result.error.code, JSON.stringify(headers)).toBe(json);
    }
  });
});
