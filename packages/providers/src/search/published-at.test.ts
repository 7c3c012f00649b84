import { describe, expect, it } from 'vitest';
import { toPublishedAt } from './published-at';

describe('toPublishedAt', () => {
  it.each([
    ['2024-05-01T12:00:00', '2024-05-01T12:00:00Z'],
    ['2024-05-01 12:00', '2024-05-01T12:00:00Z'],
    ['2024-05-01', '2024-05-01T00:00:00Z'],
    ['2024-05-01T14:00:00+02:00', '2024-05-01T12:00:00Z'],
    ['2024-05-01T14:00:00+0200', '2024-05-01T12:00:00Z'],
    ['2024-05-01T12:00:00.250Z', '2024-05-01T12:00:00.250Z'],
  ])('normalises %s to %s', (input, expected) => {
    expect(toPublishedAt(input)).toBe(expected);
  });

  it.each([null, undefined, 12, '', '2 days ago', 'January 5, 2024', '2024-13-45', '2024-02-30T00:00:00x'])('drops %j', (input) => {
    expect(toPublishedAt(input)).toBeUndefined();
  });
});
