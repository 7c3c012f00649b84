import { describe, expect, it } from 'vitest';
import { assertHoldInput, assertMicros } from './decide-hold';

// Every store (memory, SQLite, PostgreSQL) refuses a malformed hold with these errors before it
// touches the ledger; the message names what was wrong so a store author's bug is found at once.
describe('assertHoldInput names what is malformed', () => {
  it('a negative or fractional amount names the amount', () => {
    expect(() => assertHoldInput({ micros: -1, ttlMs: 1_000 })).toThrow(new RangeError('hold micros must be a non-negative safe integer of micro-dollars'));
    expect(() => assertHoldInput({ micros: 10, minimum: 1.5, ttlMs: 1_000 })).toThrow(
      new RangeError('hold minimum must be a non-negative safe integer of micro-dollars'),
    );
  });

  it('a minimum above the amount, and a ttl that is not positive', () => {
    expect(() => assertHoldInput({ micros: 10, minimum: 11, ttlMs: 1_000 })).toThrow(new RangeError('hold minimum must not exceed micros'));
    expect(() => assertHoldInput({ micros: 10, ttlMs: 0 })).toThrow(new RangeError('hold ttlMs must be a positive number'));
  });

  it('assertMicros puts the caller’s name in front', () => {
    expect(() => assertMicros('settle micros', Number.MAX_SAFE_INTEGER + 1)).toThrow(
      new RangeError('settle micros must be a non-negative safe integer of micro-dollars'),
    );
  });
});
