import { errorRecord } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { SSE_DONE, SSE_KEEPALIVE, sseComment, sseData, sseError } from './sse-encoders';

describe('encoders', () => {
  it('writes data events, [DONE], comments and the error event', () => {
    expect(sseData('{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
    expect(SSE_KEEPALIVE).toBe(': keepalive\n\n');
    expect(sseComment('hello')).toBe(': hello\n\n');
    expect(sseComment('two\r\nlines')).toBe(': two lines\n\n');
    expect(sseError(errorRecord('upstream_error'))).toBe(
      `data: {"error":{"message":"The model provider failed or did not answer.","type":"upstream_error","param":null,"code":"upstream_error"}}\n\n`,
    );
  });
});
