import { describe, expect, it } from 'vitest';
import { decodeAccountsCursor, encodeAccountsCursor, InvalidCursorError } from './page-cursor';

describe('accounts cursor', () => {
  it('reads back what it wrote, and refuses an id with a control character (no store made one; PostgreSQL refuses a NUL)', () => {
    expect(decodeAccountsCursor(encodeAccountsCursor({ createdAt: 5, id: 'acc_1' }))).toEqual({ createdAt: 5, id: 'acc_1' });
    for (const id of ['a\u0000', 'x\u001fy', 'z\u007f'])
      expect(() => decodeAccountsCursor(encodeAccountsCursor({ createdAt: 5, id }))).toThrow(InvalidCursorError);
  });
});
