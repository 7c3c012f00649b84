import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonStrict } from './parse-json-strict';

describe('parseJsonStrict properties', () => {
  it('agrees with JSON.parse on every valid document without duplicate keys', () => {
    const document = fc.record({
      body: fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 4 })),
      space: fc.constantFrom(undefined, 0, 1, 2, '\t'),
    });
    fc.assert(
      fc.property(document, ({ body, space }) => {
        const text = JSON.stringify(body, null, space);
        const result = parseJsonStrict(text);
        const expected = JSON.parse(text);
        expect(result.ok).toBe(true);
        if (result.ok) {
          expect(result.value).toStrictEqual(expected);
          expect(JSON.stringify(result.value)).toBe(JSON.stringify(expected));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('refuses whatever JSON.parse refuses, and never throws', () => {
    const alphabet = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      '"',
      ':',
      ',',
      ' ',
      '\n',
      '\\',
      'u',
      '0',
      '1',
      '-',
      '.',
      'e',
      'a',
      't',
      'r',
      'e',
      'n',
      'l',
      'f',
      's',
      '\u0001',
    );
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 40 }).map((chars) => `{${chars.join('')}`),
        (text) => {
          let expected: unknown;
          try {
            expected = JSON.parse(text);
          } catch {
            expected = undefined;
          }
          const result = parseJsonStrict(text);
          if (expected === undefined) expect(result.ok ? 'ok' : result.error.code).toBe('invalid_request_body');
          else if (result.ok) expect(result.value).toStrictEqual(expected);
          else expect(result.error.code).toBe('duplicate_json_key');
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuses mutations of valid documents exactly when JSON.parse does', () => {
    const mutated = fc
      .tuple(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), fc.nat(), fc.constantFrom('', '"', ',', '}', ']', '\\', '\u0000', 'x', '{"k":'))
      .map(([body, at, insert]) => {
        const text = JSON.stringify(body);
        const position = at % (text.length + 1);
        return text.slice(0, position) + insert + text.slice(position + (insert === '' ? 1 : 0));
      });
    fc.assert(
      fc.property(mutated, (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        const result = parseJsonStrict(text);
        if (!valid) expect(result.ok ? 'ok' : result.error.code).toBe('invalid_request_body');
      }),
      { numRuns: 1000 },
    );
  });
});
