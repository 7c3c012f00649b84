import { describe, expect, it } from 'vitest';
import { readRetryAfter } from './read-retry-after';

describe('readRetryAfter', () => {
  it('reads delta-seconds and milliseconds, rounded up to at least 1', () => {
    expect(readRetryAfter(new Headers({ 'retry-after': '2.5' }))).toBe(3);
    expect(readRetryAfter(new Headers({ 'retry-after': '0' }))).toBe(1);
    expect(readRetryAfter(new Headers({ 'retry-after-ms': '150', 'retry-after': '9' }))).toBe(1);
    expect(readRetryAfter(new Headers({ 'retry-after-ms': '2500' }))).toBe(3);
  });

  it('reads HTTP dates against the injected clock', () => {
    const now = () => Date.parse('Sat, 21 Nov 2026 20:00:00 GMT');
    expect(readRetryAfter(new Headers({ 'retry-after': 'Sat, 21 Nov 2026 20:00:30 GMT' }), now)).toBe(30);
    expect(readRetryAfter(new Headers({ 'retry-after': 'Sat, 21 Nov 2026 19:59:00 GMT' }), now)).toBe(1);
    expect(readRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 1970 00:00:10 GMT' }), () => 4_000)).toBe(6);
  });

  it('is undefined when absent or unreadable', () => {
    expect(readRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(readRetryAfter(new Headers({ 'retry-after-ms': 'x' }))).toBeUndefined();
    expect(readRetryAfter(new Headers())).toBeUndefined();
    expect(readRetryAfter(undefined)).toBeUndefined();
  });
});
