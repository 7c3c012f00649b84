import { describe, expect, it } from 'vitest';
import { parseJsonStrict } from './parse-json-strict';

/** This process's CPU time in ms: unlike wall time, it does not grow while other processes share the cores. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

const codeOf = (input: string | Uint8Array, options?: Parameters<typeof parseJsonStrict>[1]) => {
  const result = parseJsonStrict(input, options);
  return result.ok ? 'ok' : result.error.code;
};

describe('parseJsonStrict', () => {
  it('parses an object like JSON.parse, from bytes or a string', () => {
    const text = ' {"a": [1, -2.5e3, true, false, null, {"b": "x\\n\\u00e9\\"\\\\\\/"}], "c": {}, "d": [] } ';
    const fromBytes = parseJsonStrict(new TextEncoder().encode(text));
    expect(fromBytes).toEqual({ ok: true, value: JSON.parse(text) });
    expect(parseJsonStrict(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it('keeps __proto__ as an own member, as JSON.parse does', () => {
    const result = parseJsonStrict('{"__proto__": {"polluted": 1}}');
    if (!result.ok) throw new Error(result.error.message);
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect(Object.keys(result.value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a body that is not a JSON object with invalid_request_body', () => {
    for (const text of [
      '[]',
      '"x"',
      '1',
      'null',
      '',
      '   ',
      '{',
      '{"a":1,}',
      '{"a" 1}',
      '{"a":01}',
      '{"a":1} x',
      "{'a':1}",
      '{"a":tru}',
      '{"a":"\u0001"}',
      '{"a":"\\x"}',
      '{"a":"\\u12G4"}',
      '{"a":-}',
      '{"a":1.}',
      '{"a":1e}',
      '{"a":"abc',
    ]) {
      expect([text, codeOf(text)]).toEqual([text, 'invalid_request_body']);
    }
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(parseJsonStrict(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toEqual({
      ok: false,
      error: { code: 'invalid_request_body', message: 'The request body is not valid UTF-8.' },
    });
  });

  it('refuses duplicate keys at any depth', () => {
    expect(codeOf('{"a":1,"a":1}')).toBe('duplicate_json_key');
    expect(codeOf('{"x":[{"b":{"c":1,"d":2,"c":3}}]}')).toBe('duplicate_json_key');
    expect(codeOf('{"a\\u0062":1,"ab":2}')).toBe('duplicate_json_key');
    expect(codeOf('{"a":{"k":1},"b":{"k":1}}')).toBe('ok');
    expect(codeOf('{"toString":1,"constructor":2,"hasOwnProperty":3}')).toBe('ok');
  });

  it('counts every value, the top-level object included, against maxValues', () => {
    // 1 object + 1 array + 3 numbers = 5 values.
    expect(codeOf('{"a":[1,2,3]}', { maxValues: 5 })).toBe('ok');
    expect(codeOf('{"a":[1,2,3]}', { maxValues: 4 })).toBe('request_too_complex');
    const many = `{"a":[${'0,'.repeat(262_142)}0]}`; // 2 + 262,143 = 262,145 values
    expect(codeOf(many)).toBe('request_too_complex');
    const limit = `{"a":[${'0,'.repeat(262_141)}0]}`; // exactly 262,144
    expect(codeOf(limit)).toBe('ok');
  });

  it('refuses nesting deeper than maxDepth cleanly, even 100,000 levels', () => {
    const nest = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    expect(codeOf(nest(1000))).toBe('ok');
    expect(codeOf(nest(1001))).toBe('request_too_complex');
    expect(parseJsonStrict(nest(100_000))).toEqual({
      ok: false,
      error: { code: 'request_too_complex', message: 'The request body nests deeper than 1000 levels.' },
    });
  });

  it('reads a long string with and without escapes in linear time', () => {
    const plain = 'A'.repeat(4_000_000);
    const escaped = 'a\\n'.repeat(1_000_000);
    const started = cpuMs();
    const one = parseJsonStrict(`{"s":"${plain}"}`);
    const two = parseJsonStrict(`{"s":"${escaped}","t":"${plain}"}`);
    expect(one.ok && one.value.s).toBe(plain);
    expect(two.ok && (two.value.s as string).length).toBe(2_000_000);
    expect(cpuMs() - started).toBeLessThan(2_000);
  });

  it('takes many keys in one object', () => {
    const members = Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',');
    const result = parseJsonStrict(`{${members}}`);
    expect(result.ok && Object.keys(result.value).length).toBe(100_000);
  });
});
